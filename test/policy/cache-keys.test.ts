// Keys built from caller-controlled text (subjects, field names, scopes, row values) must never
// let two different inputs share an entry. Each key composed of several parts gets inputs
// built from its own punctuation that a plain join would merge. Keys that are one text taken
// verbatim (the reference memo per root, resolved paths, SQL templates, hash keys by salt, the
// vault's per-scope maps, token scopes per page) have no punctuation of their own to abuse.
import "reflect-metadata";
import assert from "node:assert/strict";
import { Column, Entity, PrimaryColumn } from "typeorm";
import {
  PolicyEffect, PolicyErrorCode, PolicyFeature, QpDeny, QpEntityCatalogue, QpInMemoryTokenVault, QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTier,
  applyPolicy, inMemory, toList,
} from "../../lib/index.js";
import { keyOf } from "../../lib/execute/sql-texts.js";
import { DecisionTable } from "../../lib/decisions/decision-table.js";
import type { PolicyMember } from "../../lib/decisions/references.js";
import { classPolicyOf } from "../../lib/decisions/entity-policy.js";
import { Patient, policyData } from "./domain.js";
import { expectPolicyError, plain } from "./helpers.js";

@Entity("ck_pair")
class Pair {
  @PrimaryColumn({ type: "varchar", length: 20 }) left!: string;
  @PrimaryColumn({ type: "varchar", length: 20 }) right!: string;
  @Column({ type: "varchar", length: 20 }) tag!: string;
}

@Entity("ck_stamp")
class Stamp {
  @PrimaryColumn({ type: "datetime" }) at!: Date;
  @Column({ type: "varchar", length: 20 }) tag!: string;
}

/** Property names that hold the decision table's own separator. */
class Piped {
  @QpDeny(PolicyFeature.Where) "name|2"!: string;
  name!: string;
}

const subject = (kind: string, value: string) => ({ kind: kind as QpSubjectKind, value });

describe("Cache keys: different inputs never share an entry", () => {
  describe("decision tables by subject set", () => {
    /** Strict, Patient exposed; the rule denies Patient.name for Select to role "b" only. */
    async function engineDenyingNameToB(): Promise<QpPolicyEngine> {
      const engine = new QpPolicyEngine({ tier: QpTier.Strict, entities: new QpEntityCatalogue().expose(Patient, "patients") });
      await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "b", entity: "patients", field: "name", features: PolicyFeature.Select, effect: PolicyEffect.Deny });
      return engine;
    }
    const patients = () => inMemory(Patient, policyData().patients);
    const selectName = { conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "id", operator: "Equal", values: [1], dataType: "Number" }] }, selects: ["id", "name"] };
    const prepare = (engine: QpPolicyEngine, subjects: { kind: QpSubjectKind; value: string }[]) =>
      engine.prepareAsync(new QpPolicyContext(subjects, new Map([["tenantId", "t-1"]])));

    // Each pair spelled the same under the former key (`kind:value`, sorted, NUL-joined).
    const pairs: [string, { kind: QpSubjectKind; value: string }[], { kind: QpSubjectKind; value: string }[]][] = [
      ["a role value embedding the separator and another role", [subject("Role", "a\u0000Role:b")], [subject("Role", "a"), subject("Role", "b")]],
      ["a custom value embedding the separator and a role", [subject("Custom", "c\u0000Role:b")], [subject("Custom", "c"), subject("Role", "b")]],
    ];
    for (const [title, without, withB] of pairs) {
      it(`${title}: the caller holding role b is still denied after the other set was served`, async () => {
        const engine = await engineDenyingNameToB();
        const first = await prepare(engine, without);
        const second = await prepare(engine, withB);
        const allowed = await applyPolicy(patients(), first).toListAsync(selectName);
        assert.deepEqual(plain(allowed.data), [{ id: 1, name: "Patient 01" }]);
        await expectPolicyError(() => applyPolicy(patients(), second).toListAsync(selectName), PolicyErrorCode.FieldDeniedForSelect, "name");
        assert.notEqual(await engine.decisionsAsync(first), await engine.decisionsAsync(second));
      });
    }

    it("a kind spelled with the colon and part of the value is another subject", async () => {
      const engine = await engineDenyingNameToB();
      const tables = await Promise.all([[subject("Role:a", "b")], [subject("Role", "a:b")]].map(async (s) => engine.decisionsAsync(await prepare(engine, s))));
      assert.notEqual(tables[0], tables[1]);
    });

    it("a frozen list of subjects that are not frozen is read anew each time (only fully frozen lists are memoised)", async () => {
      const engine = await engineDenyingNameToB();
      const member = { kind: QpSubjectKind.Role, value: "a" };
      const context = new QpPolicyContext(Object.freeze([member]));
      const before = await engine.decisionsAsync(context);
      member.value = "b";
      assert.notEqual(await engine.decisionsAsync(context), before);
      assert.equal(await engine.decisionsAsync(context), await engine.decisionsAsync(new QpPolicyContext([subject("Role", "b")])));
    });

    it("the same subjects in another order share a table (the key sorts them)", async () => {
      const engine = await engineDenyingNameToB();
      const one = await engine.decisionsAsync(await prepare(engine, [subject("Role", "a"), subject("Tenant", "t-1")]));
      const other = await engine.decisionsAsync(await prepare(engine, [subject("Tenant", "t-1"), subject("Role", "a")]));
      assert.equal(one, other);
    });
  });

  it("decisions per member and feature: a member name ending in `|<feature>` is another member (the numeric feature closes the key)", async () => {
    const engine = new QpPolicyEngine({});
    const table = await engine.decisionsAsync(await engine.prepareAsync(new QpPolicyContext()));
    assert.ok(table instanceof DecisionTable);
    const member = (name: string): PolicyMember => ({
      owner: Piped, member: { kind: "column", name } as PolicyMember["member"], policy: classPolicyOf(Piped).members.get(name), publicName: name,
    });
    // "name|2" + Where(1) and "name" + Select(2) would both read "name|2|1" / "name|2" under a
    // join that let the feature carry a separator; here each keeps its own decision.
    assert.equal(table.decide(member("name"), PolicyFeature.Where).effect, PolicyEffect.Allow);
    assert.equal(table.decide(member("name|2"), PolicyFeature.Where).effect, PolicyEffect.Deny);
    assert.equal(table.decide(member("name"), PolicyFeature.Select).effect, PolicyEffect.Allow);
    assert.equal(table.decide(member("name|2"), PolicyFeature.Select).effect, PolicyEffect.Allow);
    assert.equal(table.decide(member("name"), PolicyFeature.Where).effect, PolicyEffect.Allow);
  });

  it("in-memory Segment membership: composite primary keys whose parts hold the old NUL separator stay apart", () => {
    const rows = [
      Object.assign(new Pair(), { left: "k\u0000l", right: "m", tag: "x" }),
      Object.assign(new Pair(), { left: "k", right: "l\u0000m", tag: "y" }),
    ];
    const tagIs = (tag: string) => ({ connector: "And", conditions: [{ sort: 1, field: "tag", operator: "Equal", values: [tag] }] });
    const except = toList(inMemory(Pair, rows), { conditionSets: [{ sort: 1, conditionGroup: tagIs("x") }, { sort: 2, intersection: "Except", conditionGroup: tagIs("y") }] });
    assert.deepEqual(plain(except.data), [{ left: "k\u0000l", right: "m", tag: "x" }]);
    const union = toList(inMemory(Pair, rows), { conditionSets: [{ sort: 1, conditionGroup: tagIs("x") }, { sort: 2, intersection: "Union", conditionGroup: tagIs("y") }] });
    assert.equal(union.data.length, 2);
    const intersect = toList(inMemory(Pair, rows), { conditionSets: [{ sort: 1, conditionGroup: tagIs("x") }, { sort: 2, intersection: "Intersect", conditionGroup: tagIs("y") }] });
    assert.deepEqual(intersect.data, []);
    // Dates a millisecond apart are two rows (their text form stops at the second).
    const stamps = [Object.assign(new Stamp(), { at: new Date("2026-01-01T00:00:00.001Z"), tag: "x" }), Object.assign(new Stamp(), { at: new Date("2026-01-01T00:00:00.002Z"), tag: "y" })];
    const stampExcept = toList(inMemory(Stamp, stamps), { conditionSets: [{ sort: 1, conditionGroup: tagIs("x") }, { sort: 2, intersection: "Except", conditionGroup: tagIs("y") }] });
    assert.deepEqual((stampExcept.data as Stamp[]).map((r) => r.tag), ["x"]);
  });

  it("in-memory Summary groups: keys holding JSON punctuation are different groups", () => {
    const rows = [
      Object.assign(new Pair(), { left: 'a","b', right: "c", tag: "1" }),
      Object.assign(new Pair(), { left: "a", right: 'b","c', tag: "2" }),
      Object.assign(new Pair(), { left: "a\u0000b", right: "c", tag: "3" }),
      Object.assign(new Pair(), { left: "a", right: "b\u0000c", tag: "4" }),
    ];
    const result = toList(inMemory(Pair, rows), { groupBy: { fields: ["left", "right"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });
    assert.equal(result.data.length, 4);
    for (const row of result.data as { n: number }[]) assert.equal(row.n, 1);
  });

  it("token vault digests: a scope and a value split differently around the NUL never share a token", async () => {
    const vault = new QpInMemoryTokenVault({ digestKey: "a digest key of some length" });
    const one = (await vault.tokenize("s\u0000t", ["v"])).get("v");
    const other = (await vault.tokenize("s", ["t\u0000v"])).get("t\u0000v");
    assert.ok(one && other);
    assert.notEqual(one, other);
  });

  it("SQL text keys (keyOf): its own length, colon, semicolon and brackets cannot merge parts", () => {
    const pairs: unknown[][][] = [
      [["2:ab"], ["2:", "ab"]],
      [["1;"], [1]],
      [[["1:a"], "b"], [["1:a", "b"]]],
      [["[", "]"], [[]]],
    ];
    for (const [one, other] of pairs) assert.notEqual(keyOf(one!), keyOf(other!), JSON.stringify([one, other]));
  });
});
