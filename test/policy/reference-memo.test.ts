// Field references under a guard are memoised per root and text (lib/decisions/references.ts). The
// memo must never outlive what it was resolved from: a decorator added later (an alias that
// hides a member's own name) is honoured at once; a failing path is never kept, so its error
// names where it was written each time; case variants, each a text of their own, stay correct
// past the memo's bound.
import assert from "node:assert/strict";
import "reflect-metadata";
import { Column, Entity, PrimaryColumn } from "typeorm";
import { QpAlias, QpPolicyContext, QpPolicyEngine, applyPolicy, inMemory } from "../../lib/index.js";
import { Codes } from "../../lib/errors/codes.js";
import { cond, expectLogicError, whereShape } from "./helpers.js";

@Entity("pol_memo_item")
class MemoItem {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 20 }) code!: string;
  @Column({ type: "varchar", length: 20 }) label!: string;
}

const rows = inMemory(MemoItem, [1, 2, 3, 4].map((id) => Object.assign(new MemoItem(), { id, code: `C${id % 2}`, label: `L${id}` })));

describe("Policy references: the memo of resolved paths", () => {
  const engine = new QpPolicyEngine({});

  async function ids(field: string, value: string): Promise<number[]> {
    const context = await engine.prepareAsync(new QpPolicyContext());
    const result = await applyPolicy(rows, context).toList(whereShape(cond(field, "Equal", [value])));
    return (result.data as MemoItem[]).map((r) => r.id);
  }

  it("honours a decorator added after a path was resolved: the member's own name stops working, its alias starts", async () => {
    assert.deepEqual(await ids("code", "C1"), [1, 3]);
    assert.deepEqual(await ids("CODE", "C0"), [2, 4]);
    // Decorators run when a class is defined; applying one later is what a registry change looks like.
    QpAlias("publicCode")(MemoItem.prototype, "code");
    await expectLogicError(() => ids("code", "C1"), Codes.InvalidField);
    await expectLogicError(() => ids("CODE", "C1"), Codes.InvalidField);
    assert.deepEqual(await ids("publicCode", "C1"), [1, 3]);
    assert.deepEqual(await ids("PUBLICCODE", "C0"), [2, 4]);
  });

  it("never keeps a failure: each error names where the path was written", async () => {
    const context = await engine.prepareAsync(new QpPolicyContext());
    const guarded = applyPolicy(rows, context);
    for (let i = 0; i < 2; i++) {
      const inWhere = await expectLogicError(() => guarded.toList(whereShape(cond("nothing", "Equal", ["x"]))), Codes.InvalidField);
      assert.equal(inWhere.path, "conditionGroup.conditions[0].field");
      const inSelects = await expectLogicError(() => guarded.toList({ selects: ["id", "nothing"] }), Codes.InvalidField);
      assert.equal(inSelects.path, "selects[1]");
    }
  });

  it("resolves every case variant right, also past the memo's bound of 256 texts", async () => {
    const variants = new Set<string>();
    for (let mask = 0; variants.size < 300; mask++) {
      variants.add([..."label"].map((c, i) => ((mask >> i) & 1 ? c.toUpperCase() : c)).join("") + (mask >= 32 ? " ".repeat(Math.floor(mask / 32)) : ""));
    }
    for (const variant of variants) assert.deepEqual(await ids(variant, "L3"), [3], JSON.stringify(variant));
  });
});
