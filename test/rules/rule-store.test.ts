// Writing rules: validation on write (RuleRejected with a reason, nothing stored), the rule
// record (TYPESCRIPT-API.md "Rule record"), replacing by id, listing by subject, deleting; on
// the in-memory store and on the relational store of each dialect.
import assert from "node:assert/strict";
import type { DataSource } from "typeorm";
import {
  MaskStrategy, PolicyEffect, PolicyFeature, QpDecoratorError, QpInMemoryRuleStore, QpMask, QpSubjectKind, QpTypeOrmRuleStore, RuleRejected, type IQpRuleStore,
  type MaskOptions,
  applyPolicy, type QpPolicyContext, type QpPolicyEngine, type QpRule, type QpRuleInput,
} from "../../lib/index.js";
import { skipIfUnavailable } from "../support/databases.js";
import { type Target, targets } from "../support/targets.js";
import { DEPARTMENTS, STAFF, ruleData } from "./domain.js";
import { seenOnSelect, seenOnWhere } from "./observe.js";
import { clearRuleTables, engine, expectLogicError, prepare, role, rulesDatabase, tenant, user } from "./support.js";

const base: QpRuleInput = { subjectKind: QpSubjectKind.Global, entity: STAFF, field: "city", effect: PolicyEffect.Deny };
const input = (extra: Partial<QpRuleInput> | Record<string, unknown>): QpRuleInput => ({ ...base, ...extra }) as QpRuleInput;
const fixed = (text: string) => ({ strategy: MaskStrategy.Fixed, text });

/** Rules the engine must refuse, each with a word its reason must contain. */
const rejected: [string, Record<string, unknown>, RegExp][] = [
  ["an entity exposed under another name (class name)", { entity: "Employee" }, /Employee/],
  ["an unknown entity", { entity: "nobody" }, /nobody/],
  ["an unknown field", { field: "nope" }, /nope/],
  ["an unknown field behind a navigation", { field: "manager.nope" }, /nope/],
  ["a wildcard after a value", { field: "name.*" }, /wildcard|name/],
  ["a malformed path", { field: "a..b" }, /field|path/i],
  ["an empty field", { field: "" }, /field/i],
  ["the real name of an aliased member (only public names exist)", { field: "nick" }, /nick/],
  ["a QpDenied field (default features: All)", { field: "ssn", effect: PolicyEffect.Allow }, /sealed/],
  ["a QpDenied field for one feature", { field: "ssn", features: PolicyFeature.Order, effect: PolicyEffect.Allow }, /sealed/],
  ["a QpDenied field reached through a navigation", { field: "manager.ssn", features: PolicyFeature.Select, effect: PolicyEffect.Allow }, /sealed/],
  ["a field sealed for Where, with Where", { field: "secret", features: PolicyFeature.Where, effect: PolicyEffect.Allow }, /sealed/],
  ["a field sealed for Where, with All", { field: "secret", effect: PolicyEffect.Deny }, /sealed/],
  ["a field sealed for Where, with Where|Select", { field: "secret", features: PolicyFeature.Where | PolicyFeature.Select, effect: PolicyEffect.Deny }, /sealed/],
  ["a sealed QpMask field, for Select", { field: "badge", features: PolicyFeature.Select, effect: PolicyEffect.Allow }, /sealed/],
  ["a sealed QpMask field, with a Deny for All", { field: "badge", effect: PolicyEffect.Deny }, /sealed/],
  ["a Global rule with a subject", { subject: "x" }, /Global/],
  ["a Role rule without a subject", { subjectKind: QpSubjectKind.Role }, /subject/],
  ["a User rule with an empty subject", { subjectKind: QpSubjectKind.User, subject: "" }, /subject/],
  ["a Tenant rule with a null subject", { subjectKind: QpSubjectKind.Tenant, subject: null }, /subject/],
  ["an unknown subject kind", { subjectKind: "Group", subject: "g" }, /subjectKind/],
  ["an unknown effect", { effect: "Permit" }, /effect/],
  ["features 0", { features: 0 }, /features/],
  ["features above All", { features: 64 }, /features/],
  ["negative features", { features: -1 }, /features/],
  ["fractional features", { features: 1.5 }, /features/],
  ["a fractional priority", { priority: 1.5 }, /priority/],
  ["a text priority", { priority: "high" }, /priority/],
  ["a Mask rule without mask settings", { effect: PolicyEffect.Mask }, /mask/i],
  ["a Mask rule with an unknown strategy", { effect: PolicyEffect.Mask, mask: { strategy: "Blur" } }, /mask|strategy/i],
  ["an Allow rule with mask settings", { effect: PolicyEffect.Allow, mask: fixed("x") }, /mask/i],
  ["a Fixed mask on a number", { field: "salary", effect: PolicyEffect.Mask, mask: fixed("x") }, /salary/],
  ["a Full mask on an overridable number", { field: "bonus", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Full } }, /bonus/],
  ["a Partial mask on a boolean", { field: "active", effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Partial } }, /active/],
  ["a Fixed mask on a date", { field: "birthDate", effect: PolicyEffect.Mask, mask: fixed("x") }, /birthDate/],
  ["a Hash mask on a number behind a navigation", { field: "manager.salary", effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Hash } }, /salary/],
  ["a Fixed mask on another entity's number", { entity: DEPARTMENTS, field: "budget", effect: PolicyEffect.Mask, mask: fixed("x") }, /budget/],
];

/** Rules the engine must accept (positive controls of the checks above). */
const accepted: [string, Record<string, unknown>][] = [
  ["a plain field", {}],
  ["a field sealed for Where, for its other features", { field: "secret", features: PolicyFeature.Select | PolicyFeature.Order | PolicyFeature.Group, effect: PolicyEffect.Allow }],
  ["a sealed QpMask field, for Where", { field: "badge", features: PolicyFeature.Where, effect: PolicyEffect.Deny }],
  ["an overridable field", { field: "bonus", features: PolicyFeature.Select, effect: PolicyEffect.Allow }],
  ["an aliased field by its public name", { field: "nickname", effect: PolicyEffect.Mask, mask: fixed("n") }],
  ["a Null mask on a number", { field: "salary", effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Null } }],
  ["a Null mask on a date", { field: "birthDate", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Null } }],
  ["the `*` wildcard (sealed members keep their attributes)", { field: "*", effect: PolicyEffect.Allow }],
  ["a navigation wildcard", { field: "department.*", effect: PolicyEffect.Deny }],
  ["a field behind two navigations", { field: "manager.department.name", effect: PolicyEffect.Deny }],
  ["another exposed entity", { entity: DEPARTMENTS, field: "budget", effect: PolicyEffect.Deny }],
  ["an entity name in another case", { entity: "STAFF" }],
  ["a negative priority", { priority: -3 }],
  ["a Custom subject", { subjectKind: QpSubjectKind.Custom, subject: "contractor" }],
];

type StoreKind = Target;

for (const kind of targets as StoreKind[]) {
  describe(`Rules: writing, listing and deleting [${kind} store]`, function () {
    let dataSource: DataSource | undefined;
    let store: IQpRuleStore;
    let e: QpPolicyEngine;

    if (kind !== "memory") {
      before(async function () {
        this.timeout(120_000);
        try {
          dataSource = await rulesDatabase(kind);
        } catch (error) {
          skipIfUnavailable(this, error);
        }
      });
    }

    beforeEach(async () => {
      if (dataSource) await clearRuleTables(dataSource);
      store = dataSource ? new QpTypeOrmRuleStore(dataSource) : new QpInMemoryRuleStore();
      e = engine({}, { ruleStore: store });
    });

    for (const [title, extra, reason] of rejected) {
      it(`rejects ${title}`, async () => {
        const before = e.health().snapshotVersion;
        const error = await expectLogicError(() => e.upsertRuleAsync(input(extra), "admin"), RuleRejected);
        assert.match(error.message, reason);
        assert.deepEqual(await e.listRulesAsync(), [], "nothing was stored");
        assert.equal((await store.loadAsync()).rules.length, 0);
        assert.equal(e.health().snapshotVersion, before);
      });
    }

    it("accepts every valid variant", async () => {
      for (const [title, extra] of accepted) {
        const saved = await e.upsertRuleAsync(input(extra), "admin");
        assert.ok(typeof saved.id === "string" && saved.id.length > 0, title);
      }
      assert.equal((await e.listRulesAsync()).length, accepted.length);
    });

    it("creates a rule with a new id and the record of TYPESCRIPT-API.md; the store keeps who and when", async () => {
      const started = Date.now();
      const saved = await e.upsertRuleAsync(input({ description: "no cities" }), "admin@corp");
      assert.match(saved.id, /\S/);
      const listed = await e.listRulesAsync();
      assert.equal(listed.length, 1);
      const r = listed[0]!;
      assert.equal(r.id, saved.id);
      assert.equal(r.subjectKind, QpSubjectKind.Global);
      assert.equal(r.subject, null);
      assert.equal(r.entity, STAFF);
      assert.equal(r.field, "city");
      assert.equal(r.features, PolicyFeature.All, "features default to All");
      assert.equal(r.effect, PolicyEffect.Deny);
      assert.equal(r.mask, null);
      assert.equal(r.priority, 0, "priority defaults to 0");
      assert.equal(r.description, "no cities");
      assert.equal(r.changedBy, "admin@corp");
      const at = Date.parse(r.changedAt);
      assert.ok(at >= started - 1000 && at <= Date.now() + 1000, `changedAt ${r.changedAt}`);
      // Two creations give two ids.
      const second = await e.upsertRuleAsync(input({ field: "team" }));
      assert.notEqual(second.id, saved.id);
      assert.equal((await e.listRulesAsync()).length, 2);
      assert.equal((await e.listRulesAsync()).find((x) => x.id === second.id)!.changedBy, null);
    });

    it("keeps mask settings, features and priority exactly (read back by a new engine)", async () => {
      const mask = { strategy: MaskStrategy.Partial, keepStart: 2, keepEnd: 1, maskChar: "#" };
      const saved = await e.upsertRuleAsync(input({ subjectKind: QpSubjectKind.Role, subject: "analyst", field: "email", features: PolicyFeature.Select | PolicyFeature.Order, effect: PolicyEffect.Mask, mask, priority: -7 }), "admin");
      const fresh = engine({}, { ruleStore: store });
      const [r] = await fresh.listRulesAsync();
      assert.equal(r!.id, saved.id);
      assert.equal(r!.subjectKind, QpSubjectKind.Role);
      assert.equal(r!.subject, "analyst");
      assert.equal(r!.features, PolicyFeature.Select | PolicyFeature.Order);
      assert.equal(r!.effect, PolicyEffect.Mask);
      assert.deepEqual(r!.mask, mask);
      assert.equal(r!.priority, -7);
      // The fresh engine decides with it: e4@corp.test → "e4" kept, "@corp.tes" masked, "t" kept.
      const context = await prepare(fresh, role("analyst"));
      const out = await seenOnSelectValues(context);
      assert.equal(out[3], "e4" + "#".repeat("@corp.tes".length) + "t");
    });

    it("replaces a rule by id: one rule, the new content, a new snapshot version", async () => {
      const first = await e.upsertRuleAsync(input({ field: "email", effect: PolicyEffect.Deny }), "a");
      const v1 = e.health().snapshotVersion;
      assert.equal(await seenOnSelect(await prepare(e), "email"), "Deny");
      const replaced = await e.upsertRuleAsync(input({ id: first.id, field: "email", effect: PolicyEffect.Mask, mask: fixed("R"), priority: 4 }), "b");
      assert.equal(replaced.id, first.id);
      const listed = await e.listRulesAsync();
      assert.equal(listed.length, 1);
      assert.equal(listed[0]!.effect, PolicyEffect.Mask);
      assert.equal(listed[0]!.priority, 4);
      assert.equal(listed[0]!.changedBy, "b");
      assert.ok(e.health().snapshotVersion > v1, "a replacement is a new snapshot");
      assert.equal(await seenOnSelect(await prepare(e), "email"), "Mask:R");
      // A replacement that fails validation leaves the old rule in place.
      await expectLogicError(() => e.upsertRuleAsync(input({ id: first.id, field: "ssn", effect: PolicyEffect.Allow })), RuleRejected);
      assert.equal((await e.listRulesAsync())[0]!.field, "email");
    });

    it("lists rules by subject (\"Role:x\", \"Tenant:t\", \"User:u\", \"Custom:c\", \"Global\")", async () => {
      const made = new Map<string, QpRule>();
      for (const [key, extra] of [
        ["Role:a", { subjectKind: QpSubjectKind.Role, subject: "a" }],
        ["Role:a2", { subjectKind: QpSubjectKind.Role, subject: "a", field: "team" }],
        ["Role:b", { subjectKind: QpSubjectKind.Role, subject: "b" }],
        ["Tenant:t-1", { subjectKind: QpSubjectKind.Tenant, subject: "t-1" }],
        ["User:u", { subjectKind: QpSubjectKind.User, subject: "u" }],
        ["Custom:c", { subjectKind: QpSubjectKind.Custom, subject: "c" }],
        ["Global", {}],
        ["Global2", { field: "email" }],
      ] as const) made.set(key, await e.upsertRuleAsync(input(extra)));
      const idsOf = (rules: QpRule[]) => rules.map((r) => r.id).sort();
      const expected = (...keys: string[]) => keys.map((k) => made.get(k)!.id).sort();
      assert.deepEqual(idsOf(await e.listRulesAsync("Role:a")), expected("Role:a", "Role:a2"));
      assert.deepEqual(idsOf(await e.listRulesAsync("Role:b")), expected("Role:b"));
      assert.deepEqual(idsOf(await e.listRulesAsync("Tenant:t-1")), expected("Tenant:t-1"));
      assert.deepEqual(idsOf(await e.listRulesAsync("User:u")), expected("User:u"));
      assert.deepEqual(idsOf(await e.listRulesAsync("Custom:c")), expected("Custom:c"));
      assert.deepEqual(idsOf(await e.listRulesAsync("Global")), expected("Global", "Global2"));
      assert.deepEqual(idsOf(await e.listRulesAsync("Role:nobody")), []);
      assert.deepEqual(idsOf(await e.listRulesAsync("Tenant:a")), [], "the kind is part of the subject");
      assert.deepEqual(idsOf(await e.listRulesAsync()), [...made.values()].map((r) => r.id).sort());
    });

    it("deletes a rule: true once, then false; the decision is lifted at once; an unknown id is false", async () => {
      const deny = await e.upsertRuleAsync(input({ field: "email", effect: PolicyEffect.Deny }));
      const keep = await e.upsertRuleAsync(input({ field: "team", effect: PolicyEffect.Deny }));
      const context = await prepare(e);
      assert.equal(await seenOnWhere(context, "email", "e4@corp.test"), "Deny");
      const version = e.health().snapshotVersion;
      assert.equal(await e.deleteRuleAsync(deny.id), true);
      assert.ok(e.health().snapshotVersion > version);
      assert.deepEqual((await e.listRulesAsync()).map((r) => r.id), [keep.id]);
      assert.equal(await seenOnWhere(await prepare(e), "email", "e4@corp.test"), "Allow");
      assert.equal(await seenOnWhere(await prepare(e), "team", "red"), "Deny");
      const after = e.health().snapshotVersion;
      assert.equal(await e.deleteRuleAsync(deny.id), false);
      assert.equal(await e.deleteRuleAsync("no-such-rule"), false);
      assert.equal(e.health().snapshotVersion, after, "a delete of nothing is no new snapshot");
    });

    it("an id no store can hold (U+0000, empty, over 64 characters) is refused on write and names no rule on delete, never a store failure", async () => {
      // Found by the HTTP fuzz: DELETE /qp-admin/rules/%00 reached PostgreSQL, whose driver failed (a 503).
      for (const id of ["\0", "a\0b", "x".repeat(65)]) {
        assert.equal(await e.deleteRuleAsync(id), false, JSON.stringify(id));
        await expectLogicError(() => e.upsertRuleAsync(input({ id } as never)), "RuleRejected", "id must be 1 to 64 characters");
      }
      const longest = await e.upsertRuleAsync(input({ id: "y".repeat(64) } as never));
      assert.equal(await e.deleteRuleAsync(longest.id), true);
    });

    it("a rule applies only to callers with its subject, on every level", async () => {
      await e.upsertRuleAsync(input({ subjectKind: QpSubjectKind.User, subject: "u1", field: "email", effect: PolicyEffect.Deny }));
      await e.upsertRuleAsync(input({ subjectKind: QpSubjectKind.Tenant, subject: "t-2", field: "team", effect: PolicyEffect.Deny }));
      assert.equal(await seenOnSelect(await prepare(e, user("u1")), "email"), "Deny");
      assert.equal(await seenOnSelect(await prepare(e, user("u2")), "email"), "Allow");
      assert.equal(await seenOnSelect(await prepare(e, tenant("t-2")), "team"), "Deny");
      assert.equal(await seenOnSelect(await prepare(e, tenant("t-1")), "team"), "Allow");
    });
  });
}

describe("Rules: mask settings are validated on write like QpMask's [memory store]", () => {
  let e: QpPolicyEngine;
  beforeEach(() => {
    e = engine();
  });

  for (const [title, mask] of [
    ["a Regex pattern with a lookahead (RE2 cannot run it)", { strategy: MaskStrategy.Regex, pattern: "\\d(?=\\d{4})" }],
    ["a Regex mask without a pattern", { strategy: MaskStrategy.Regex }],
    ["a two-character maskChar", { strategy: MaskStrategy.Full, maskChar: "ab" }],
    ["a negative keepStart", { strategy: MaskStrategy.Partial, keepStart: -1 }],
  ] as const) {
    it(`rejects mask settings QpMask itself refuses: ${title}`, async () => {
      await expectLogicError(() => e.upsertRuleAsync(input({ field: "email", effect: PolicyEffect.Mask, mask }), "admin"), RuleRejected);
      assert.deepEqual(await e.listRulesAsync(), []);
    });
  }

  // Each refusal gives the decorator's own reason: defining a class with QpMask(mask) says it too.
  for (const [title, mask] of [
    ["a Regex pattern with a backreference (RE2 cannot run it)", { strategy: MaskStrategy.Regex, pattern: "(a|b)\\1" }],
    ["a Regex pattern that does not compile", { strategy: MaskStrategy.Regex, pattern: "(" }],
    ["an empty Regex pattern", { strategy: MaskStrategy.Regex, pattern: "" }],
    ["an unknown strategy", { strategy: "Blur" }],
    ["an empty maskChar", { strategy: MaskStrategy.Full, maskChar: "" }],
    ["a maskChar that is not text", { strategy: MaskStrategy.Full, maskChar: 7 }],
    ["a fractional keepEnd", { strategy: MaskStrategy.Partial, keepEnd: 1.5 }],
    ["a text keepStart", { strategy: MaskStrategy.Partial, keepStart: "2" }],
    ["a minGroupSize of 0", { strategy: MaskStrategy.Fixed, text: "x", minGroupSize: 0 }],
  ] as const) {
    it(`refuses with QpMask's own reason: ${title}`, async () => {
      const reason = decoratorRefusal(mask as unknown as MaskOptions);
      const error = await expectLogicError(() => e.upsertRuleAsync(input({ field: "email", effect: PolicyEffect.Mask, mask }), "admin"), RuleRejected);
      assert.equal(error.message, `RuleRejected: ${reason}`);
      assert.deepEqual(await e.listRulesAsync(), []);
    });
  }

  it("accepts what QpMask accepts (controls of the cases above)", async () => {
    for (const mask of [
      { strategy: MaskStrategy.Regex, pattern: "[0-9]+" },
      { strategy: MaskStrategy.Regex, pattern: "(a+)+$" },
      { strategy: MaskStrategy.Full, maskChar: "•" },
      { strategy: MaskStrategy.Partial, keepStart: 0, keepEnd: 2 },
      { strategy: MaskStrategy.Fixed, text: "x", minGroupSize: 3 },
    ]) {
      assert.equal(decoratorRefusal(mask), null, JSON.stringify(mask));
      await e.upsertRuleAsync(input({ field: "email", effect: PolicyEffect.Mask, mask }), "admin");
    }
    assert.equal((await e.listRulesAsync()).length, 5);
  });

  it("a wildcard text mask never puts text into number, boolean or date members (refused on write, or those members not given text)", async () => {
    try {
      await e.upsertRuleAsync(input({ field: "*", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: fixed("x") }), "admin");
    } catch (error) {
      assert.equal((error as { code?: string }).code, RuleRejected);
      return;
    }
    const result = (await applyPolicy(ruleData().employees, await prepare(e)).toListAsyncDynamic({ selects: ["id", "salary", "active", "birthDate", "name"] } as never)) as unknown as { data: Record<string, unknown>[] };
    for (const row of result.data) {
      for (const member of ["id", "salary", "active", "birthDate"]) assert.notEqual(row[member], "x", `${member} became text: ${JSON.stringify(row)}`);
    }
  });
});

/** The reason the QpMask decorator gives for these options (after "Class.property: "), or null when it takes them. */
function decoratorRefusal(mask: MaskOptions): string | null {
  class Probe {}
  try {
    QpMask(mask)(Probe.prototype, "field");
    return null;
  } catch (error) {
    assert.ok(error instanceof QpDecoratorError, String(error));
    return error.message.replace(/^Probe\.field: /, "");
  }
}

/** The email column as a guarded select returns it, in id order. */
async function seenOnSelectValues(context: QpPolicyContext): Promise<unknown[]> {
  const result = (await applyPolicy(ruleData().employees, context).toListAsyncDynamic({ selects: ["id", "email"] } as never)) as unknown as { data: { email: unknown }[] };
  return result.data.map((r) => r.email);
}
