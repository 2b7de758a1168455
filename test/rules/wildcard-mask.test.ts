// Wildcard Mask rules and member kinds: a mask that emits text ("*" or "path.*", any strategy
// but Null) skips the members it cannot write to (numbers, dates, booleans). Those members are
// decided as if the rule did not exist (their values, or their attributes' decision), text
// members are masked, explain names the rule as ignored with the reason, and a Null wildcard
// mask still applies to every member. On every target.
import assert from "node:assert/strict";
import { MaskStrategy, PolicyEffect, PolicyFeature, QpSubjectKind, type ExplainResponse, type QpPolicyEngine, type QpRuleInput } from "../../lib/index.js";
import { STAFF } from "./domain.js";
import { engine, forEachRulesTarget, prepare, runDynamic } from "./support.js";

const nonText = ["id", "salary", "active", "birthDate"];
const selects = [...nonText, "name", "email", "bonus", "phone", "manager.salary", "manager.name"];
const wildcard = (field: string, mask: QpRuleInput["mask"]): QpRuleInput => ({ subjectKind: QpSubjectKind.Global, entity: STAFF, field, features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask });
const fixed = { strategy: MaskStrategy.Fixed, text: "x" };

type Row = Record<string, unknown>;
const at = (row: Row, path: string): unknown => path.split(".").reduce<unknown>((v, k) => (v === null || v === undefined ? v : (v as Row)[k]), row);

forEachRulesTarget("Rules: wildcard Mask rules skip members text cannot go into", (ctx) => {
  async function rowsOf(e: QpPolicyEngine): Promise<Row[]> {
    return (await runDynamic(ctx, await prepare(e), { selects, orders: [{ sort: 1, field: "id", direction: "Ascending" }], page: { pageNumber: 1, pageSize: 30 } })).data;
  }

  it('"*" with a Fixed mask: text members masked, number, boolean and date members keep their values', async () => {
    const plain = await rowsOf(engine());
    const e = engine();
    await e.upsertRuleAsync(wildcard("*", fixed), "admin");
    const rows = await rowsOf(e);
    assert.equal(rows.length, 30);
    rows.forEach((row, i) => {
      for (const member of nonText) assert.deepEqual(row[member], plain[i]![member], `${member} of row ${i + 1}`);
      assert.equal(row.name, "x");
      assert.equal(row.email, "x");
      // phone's overridable QpMask yields to the rule (a text member).
      assert.equal(row.phone, "x");
      // bonus (a number, QpNoSelect overridable) is decided by its attribute, as without the rule.
      assert.equal("bonus" in row, "bonus" in plain[i]!);
      // "*" names Employee's own members; through manager the same members are reached.
      assert.deepEqual(at(row, "manager.salary"), at(plain[i]!, "manager.salary"));
      if (at(plain[i]!, "manager.name") !== null && at(plain[i]!, "manager.name") !== undefined) assert.equal(at(row, "manager.name"), "x");
    });
  });

  it('"manager.*" with a Hash mask: the same skip behind a navigation', async () => {
    const plain = await rowsOf(engine());
    const e = engine({ hashSalt: "a-salt-of-sixteen-chars" });
    await e.upsertRuleAsync(wildcard("manager.*", { strategy: MaskStrategy.Hash }), "admin");
    const rows = await rowsOf(e);
    rows.forEach((row, i) => {
      assert.deepEqual(at(row, "manager.salary"), at(plain[i]!, "manager.salary"), `manager.salary of row ${i + 1}`);
      const name = at(row, "manager.name");
      if (name !== null && name !== undefined) assert.match(String(name), /^[0-9a-f]{32}$/);
    });
  });

  it('"*" with the Null strategy still applies to every member (null fits any column)', async () => {
    const e = engine();
    await e.upsertRuleAsync(wildcard("*", { strategy: MaskStrategy.Null }), "admin");
    for (const row of await rowsOf(e)) {
      for (const member of [...nonText, "name", "email"]) assert.equal(row[member] ?? null, null, `${member}: ${JSON.stringify(row)}`);
    }
  });
});

describe("Rules: explain of a wildcard Mask rule on a non-text member", () => {
  it("the skipped rule is listed as ignored with the reason; a text member is masked by it", async () => {
    const e = engine();
    const saved = await e.upsertRuleAsync(wildcard("*", fixed), "admin");
    const context = await prepare(e);
    const salary = (await e.explainAsync(STAFF, { field: "salary" }, context)) as ExplainResponse;
    assert.equal(salary.masked, false);
    const select = salary.decisions.find((d) => d.feature === "Select")!;
    assert.equal(select.source, "default (no policy)");
    assert.deepEqual(select.ignored, [{ source: `rule ${saved.id}`, reason: "a Fixed mask emits text and salary is a number field: the wildcard rule skips it" }]);
    const name = (await e.explainAsync(STAFF, { field: "name" }, context)) as ExplainResponse;
    assert.equal(name.masked, true);
    assert.deepEqual(name.mask, fixed);
  });
});
