// The guarded builders (applyPolicy(source, context).filter / filterDynamic / where / order /
// page / select / selectDynamic / summary / group): the plan after the policy's transform,
// compiled and handed to the host, who runs it with TypeORM. The attacks: a host that runs the
// builder (getMany, getRawMany, its own andWhere) must get no denied field, no other tenant's
// row and no untransformed value, on every dialect; a transformed member or a key the caller may
// not see refuses the builder (16, 2). On arrays a builder is refused as the unguarded ones are.
import assert from "node:assert/strict";
import type { SelectQueryBuilder } from "typeorm";
import {
  LogicException, MaskStrategy, PolicyAction, PolicyEffect, PolicyErrorCode, PolicyFeature, QpEntityCatalogue, QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTier,
  applyPolicy, filter as unguardedFilter, inMemory, policyTraceOf,
} from "../../lib/index.js";
import { Account, accountsDatabase, expectedIds } from "../nest/support.js";
import { Patient, Visit, policyData } from "./domain.js";
import { Codes } from "../../lib/errors/codes.js";
import { cond, expectEntry, expectPolicyError, idsOf, t1, whereShape } from "./helpers.js";
import { forEachPolicyTarget } from "./policy-targets.js";

const catalogue = () => new QpEntityCatalogue().expose(Patient, "patients").expose(Visit, "visits");

async function engineWith(tier = QpTier.Convenience, rules: object[] = []): Promise<QpPolicyEngine> {
  const engine = new QpPolicyEngine({ tier, entities: catalogue() });
  for (const rule of rules) await engine.upsertRuleAsync(rule as never, "builder-test");
  return engine;
}

const contextOf = (engine: QpPolicyEngine, roles: string[] = []) =>
  engine.prepareAsync(new QpPolicyContext(roles.map((value) => ({ kind: QpSubjectKind.Role, value })), new Map([["tenantId", "t-1"]])));

const t1Ids = idsOf(t1).sort((a, b) => a - b);
const maskName = { subjectKind: QpSubjectKind.Role, subject: "masked", entity: "patients", field: "name", effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Full } };
const denyId = { subjectKind: QpSubjectKind.Role, subject: "nokey", entity: "patients", field: "id", features: PolicyFeature.Select, effect: PolicyEffect.Deny };
const maskId = { subjectKind: QpSubjectKind.Role, subject: "maskedkey", entity: "patients", field: "id", effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Null } };
const denyVisitId = { subjectKind: QpSubjectKind.Role, subject: "novisitkey", entity: "visits", field: "id", features: PolicyFeature.Select, effect: PolicyEffect.Deny };

async function expectLogic(action: () => Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(action, (error: unknown) => error instanceof LogicException && error.code === code);
}

/** Every key of the raw rows a builder returns (column aliases, as TypeORM names them). */
async function rawKeys(qb: SelectQueryBuilder<object>): Promise<string[]> {
  return [...new Set((await qb.getRawMany()).flatMap((row) => Object.keys(row as object)))].map((k) => k.toLowerCase());
}

forEachPolicyTarget("Guarded builders", ({ target, dataSource, guard }) => {
  if (target === "memory") {
    it("on an array, every builder is refused as the unguarded builders are (EntityNotSupported)", async () => {
      const engine = await engineWith();
      const context = await contextOf(engine);
      const rows = inMemory(Patient, policyData().patients);
      let code = "";
      assert.throws(() => unguardedFilter(rows as never, {}), (e: unknown) => e instanceof LogicException && (code = e.code) === Codes.EntityNotSupported);
      const guarded = guard(Patient, context);
      for (const build of [
        () => guarded.filter({}), () => guarded.filterDynamic({}), () => guarded.where(cond("id", "Equal", [1])), () => guarded.order({ sort: 1, field: "id" }),
        () => guarded.page({ pageNumber: 1, pageSize: 5 }), () => guarded.select(["id"]), () => guarded.selectDynamic(["id"]),
        () => guarded.summary({ groupBy: { fields: ["ward"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } }), () => guarded.group({ fields: ["ward"], aggregateBy: [] }),
      ]) await expectLogic(build, code);
    });
    return;
  }

  it("filter: a host running the builder gets the caller's tenant only, the selected columns only, the rows toListAsync returns", async () => {
    const engine = await engineWith();
    const context = await contextOf(engine);
    const request = { ...whereShape(cond("id", "GreaterThan", [0])), selects: ["id", "name"], orders: [{ sort: 1, field: "id", direction: "Ascending" }], page: { pageNumber: 1, pageSize: 100 } } as never;
    const qb = await guard(Patient, context).filter(request);
    const entities = await qb.getMany();
    assert.deepEqual(entities.map((p) => p.id), t1Ids);
    for (const p of entities) assert.deepEqual(Object.keys(p).sort(), ["id", "name"]);
    const listed = await guard(Patient, context).toListAsync(request);
    assert.deepEqual(listed.data.map((p) => (p as Patient).id), t1Ids);
    // The host adds its own condition (an Or that would escape a flat merge): still t-1 only.
    const widened = await (await guard(Patient, context).filter(request)).orWhere("1 = 1").getMany();
    assert.deepEqual(widened.map((p) => p.id).sort((a, b) => a - b), t1Ids, "a host's orWhere cannot widen the forced predicate");
    // TypeORM's where() replaces every condition: the tenant still holds (the forced predicate is also a join).
    const replaced = await (await guard(Patient, context).filter(request)).where("1 = 1").getMany();
    assert.deepEqual(replaced.map((p) => p.id).sort((a, b) => a - b), t1Ids, "a host's where() cannot drop the forced predicate");
    const pinned = await guard(Patient, context).filter(request);
    assert.match(pinned.getSql(), /INNER JOIN .*ql_scope/, pinned.getSql());
    const counted = await (await guard(Patient, context).filter(request)).where("1 = 1").getCount();
    assert.equal(counted, t1.length);
  });

  it("on a host's own SelectQueryBuilder: its conditions are kept, bracketed, and the pinned scope joins under its alias", async () => {
    const engine = await engineWith();
    const context = await contextOf(engine);
    const hostQuery = dataSource().getRepository(Patient).createQueryBuilder("p").where("p.id < :below OR p.id > :above", { below: 10, above: 1000 });
    const qb = await applyPolicy(hostQuery, context).filter({ selects: ["id"], orders: [{ sort: 1, field: "id" }] });
    assert.deepEqual((await qb.getMany()).map((p) => p.id), t1Ids.filter((id) => id < 10), "the host's Or stays inside its brackets, under the forced predicate");
    assert.deepEqual((await qb.orWhere("1 = 1").getMany()).map((p) => p.id).sort((a, b) => a - b), t1Ids, "the pinned scope still holds");
    assert.equal(hostQuery.getSql().includes("ql_scope"), false, "the host's own builder is not changed");
  });

  it("filter without selects: the default projection, so neither getMany nor getRawMany carries a denied column", async () => {
    const engine = await engineWith();
    const qb = await guard(Patient, await contextOf(engine)).filter({});
    for (const entity of await qb.getMany()) {
      assert.equal(entity.tenantId, "t-1");
      assert.ok(!("ssn" in entity) && !("internalNote" in entity), `denied members in ${JSON.stringify(entity)}`);
    }
    const keys = await rawKeys(qb as never);
    assert.ok(keys.length > 0);
    assert.ok(!keys.some((k) => k.includes("ssn") || k.includes("internalnote")), keys.join(", "));
    assert.equal((await qb.getRawMany()).length, t1.length, "paged as the guarded query pages: page 1 of MaxPageSize");
  });

  it("where, order, page, select: each is the guarded Filter of its part (forced predicate, default projection, decisions)", async () => {
    const engine = await engineWith(QpTier.Strict);
    const context = await contextOf(engine);
    const guarded = guard(Patient, context);
    assert.deepEqual(await (await guarded.where(cond("tenantId", "Equal", ["t-2"]))).getMany(), [], "asking for t-2 finds nothing: (forced t-1) AND (t-2)");
    assert.deepEqual((await (await guarded.where({ connector: "Or", conditions: [cond("id", "Equal", [1]), cond("id", "GreaterThan", [0], 2)] })).getMany()).map((p) => p.id).sort((a, b) => a - b), t1Ids);
    await expectPolicyError(() => guarded.where(cond("ssn", "Equal", ["x"])), PolicyErrorCode.FieldDeniedForWhere);
    await expectPolicyError(() => guarded.where(cond("age", "Equal", [1])), PolicyErrorCode.FieldDeniedForWhere);
    await expectPolicyError(() => guarded.order({ sort: 1, field: "diagnosis" }), PolicyErrorCode.FieldDeniedForOrder);
    await expectPolicyError(() => guarded.order([{ sort: 1, field: "ssn" }]), PolicyErrorCode.FieldDeniedForOrder);
    const ordered = await (await guarded.order({ sort: 1, field: "id", direction: "Descending" })).getMany();
    assert.deepEqual(ordered.map((p) => p.id), [...t1Ids].reverse());
    const paged = await (await guarded.page({ pageNumber: 2, pageSize: 3 })).getMany();
    assert.equal(paged.length, Math.min(3, Math.max(0, t1.length - 3)));
    await expectPolicyError(() => guarded.page({ pageNumber: 1, pageSize: engine.options.caps.maxPageSize + 1 }), PolicyErrorCode.CapExceeded);
    await expectPolicyError(() => guarded.select(["id", "ssn"]), PolicyErrorCode.FieldDeniedForSelect);
    // A member with a public alias is reachable only by it: its real name is no field.
    await expectLogic(() => guarded.select(["email"]), Codes.InvalidField);
    const selected = await (await guarded.select(["mail"])).getMany();
    assert.ok(selected.length > 0 && selected.every((p) => Object.keys(p).sort().join() === "email,id"), "mail, and the key TypeORM hydrates by");
  });

  it("Convenience: a denied select or order is dropped and traced (policyTraceOf), never run", async () => {
    const engine = await engineWith();
    const qb = await guard(Patient, await contextOf(engine)).filter({ selects: ["id", "ssn"], orders: [{ sort: 1, field: "diagnosis" }, { sort: 2, field: "id" }] });
    const trace = policyTraceOf(qb)!;
    expectEntry(trace, "ssn", "Select", { action: PolicyAction.Dropped });
    expectEntry(trace, "diagnosis", "Order", { action: PolicyAction.Dropped });
    expectEntry(trace, "tenantId", "Where", { action: PolicyAction.Injected });
    assert.ok(!qb.getSql().toLowerCase().includes("ssn") && !qb.getSql().toLowerCase().includes("diagnosis"), qb.getSql());
    assert.deepEqual((await qb.getMany()).map((p) => p.id), t1Ids);
  });

  it("filterDynamic and selectDynamic: rows under public names, tenant-scoped, nothing denied", async () => {
    const engine = await engineWith();
    const guarded = guard(Patient, await contextOf(engine));
    const dynamic = await guarded.filterDynamic({ selects: ["id", "mail"], orders: [{ sort: 1, field: "id" }] });
    const rows = await dynamic.getRows();
    assert.deepEqual(rows.map((r) => r.id), t1Ids);
    for (const row of rows) assert.deepEqual(Object.keys(row), ["id", "mail"]);
    const [sql] = dynamic.getQueryAndParameters();
    assert.match(sql.toLowerCase(), /tenant/);
    const selected = await (await guarded.selectDynamic(["name"])).getRows();
    assert.equal(selected.length, t1.length);
    assert.ok(selected.every((r) => Object.keys(r).join() === "name"));
  });

  it("summary and group: the forced predicate and the group floor are in the SQL; getRows hides the floor's column", async () => {
    const engine = await engineWith();
    const guarded = guard(Patient, await contextOf(engine));
    const request = { groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, orders: [{ sort: 1, field: "diagnosis" }] } as never;
    const query = await guarded.summary(request);
    const rows = await query.getRows();
    const listed = await guarded.toListAsync(request);
    assert.deepEqual(rows, listed.data);
    const floor = engine.options.caps.minGroupSize;
    for (const row of rows) {
      assert.deepEqual(Object.keys(row), ["diagnosis", "n"]);
      assert.ok((row.n as number) >= floor);
    }
    const expected = new Map<string, number>();
    for (const p of t1) expected.set(p.diagnosis, (expected.get(p.diagnosis) ?? 0) + 1);
    assert.deepEqual(rows.map((r) => [r.diagnosis, r.n]), [...expected].filter(([, n]) => n >= floor).sort(([a], [b]) => (a < b ? -1 : 1)));
    const raw = await query.builder.getRawMany();
    assert.equal(raw.length, rows.length, "the floor holds for a host that runs the builder itself");
    const grouped = await (await guarded.group({ fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }] })).getRows();
    assert.deepEqual(new Set(grouped.map((r) => r.diagnosis)), new Set(rows.map((r) => r.diagnosis)));
    await expectPolicyError(() => guarded.summary({ groupBy: { fields: ["salary"], aggregateBy: [] } }), PolicyErrorCode.FieldDeniedForGroup);
    await expectPolicyError(() => guarded.group({ fields: ["ward"], aggregateBy: [] }), PolicyErrorCode.FieldDeniedForGroup);
    await expectPolicyError(() => guarded.group({ fields: ["diagnosis"], aggregateBy: [{ alias: "top", field: "salary", aggregator: "Maximum" }] }), PolicyErrorCode.FieldDeniedForAggregate);
    await expectPolicyError(() => guarded.filterDynamic({ ...whereShape(cond("age", "Equal", [1])) }), PolicyErrorCode.FieldDeniedForWhere);
  });

  it("a transformed member refuses the builder (16) naming it, unless the request leaves it out", async () => {
    const engine = await engineWith(QpTier.Convenience, [maskName]);
    const guarded = guard(Patient, await contextOf(engine, ["masked"]));
    const refused = await expectPolicyError(() => guarded.filter({ selects: ["id", "name"] }), PolicyErrorCode.TransformRequiresMaterialization, "name");
    assert.match(refused.message, /toListAsync/);
    await expectPolicyError(() => guarded.filter({}), PolicyErrorCode.TransformRequiresMaterialization, "name");
    await expectPolicyError(() => guarded.where(cond("id", "GreaterThan", [0])), PolicyErrorCode.TransformRequiresMaterialization, "name");
    await expectPolicyError(() => guarded.filterDynamic({ selects: ["name"] }), PolicyErrorCode.TransformRequiresMaterialization, "name");
    await expectPolicyError(() => guarded.selectDynamic(["name"]), PolicyErrorCode.TransformRequiresMaterialization, "name");
    // Filtering on the masked member is not selecting it: allowed, and the value never leaves the database.
    const kept = await (await guarded.filter({ ...whereShape(cond("name", "StartsWith", ["P"])), selects: ["id", "mail"] })).getMany();
    assert.ok(kept.length > 0 && kept.every((p) => !("name" in p)));
    // The same request through toListAsync is masked, not refused.
    const listed = await guarded.toListAsync({ selects: ["id", "name"] });
    assert.ok(listed.data.every((p) => (p as Patient).name !== t1.find((t) => t.id === (p as Patient).id)!.name));
    // Another caller without the rule gets the builder, and it hands out the stored names: what a
    // masked caller would read from it unrefused.
    const stored = await (await guard(Patient, await contextOf(engine)).filter({ selects: ["id", "name"] })).getMany();
    assert.deepEqual(stored.map((p) => [p.id, p.name]).sort((a, b) => (a[0] as number) - (b[0] as number)), t1.map((p) => [p.id, p.name]).sort((a, b) => (a[0] as number) - (b[0] as number)));
  });

  it("a key TypeORM reads that the caller may not see refuses the builder: denied (2), masked (16); a collection's keys too", async () => {
    const engine = await engineWith(QpTier.Convenience, [denyId, maskId, denyVisitId]);
    await expectPolicyError(async () => guard(Patient, await contextOf(engine, ["nokey"])).filter({ selects: ["name"] }), PolicyErrorCode.FieldDeniedForSelect, "reads id");
    await expectPolicyError(async () => guard(Patient, await contextOf(engine, ["nokey"])).selectDynamic(["name"]), PolicyErrorCode.FieldDeniedForSelect, "reads id");
    await expectPolicyError(async () => guard(Patient, await contextOf(engine, ["maskedkey"])).filter({ selects: ["name"] }), PolicyErrorCode.TransformRequiresMaterialization, "reads id");
    await expectPolicyError(async () => guard(Patient, await contextOf(engine, ["novisitkey"])).filter({ selects: ["id", "visits.reason"] }), PolicyErrorCode.FieldDeniedForSelect, "reads visits.id");
    // Without the rules' roles, the same builders are made, and they carry the key nobody selected
    // (TypeORM hydrates by it): what a caller denied the key would read from them unrefused.
    const context = await contextOf(engine);
    const unselectedKey = await (await guard(Patient, context).filter({ selects: ["name"] })).getMany();
    assert.ok(unselectedKey.length > 0 && unselectedKey.every((p) => t1Ids.includes(p.id)), "every entity carries its id");
    const withVisits = await (await guard(Patient, context).filter({ selects: ["id", "visits.reason"], orders: [{ sort: 1, field: "id" }] })).getMany();
    assert.deepEqual(withVisits.map((p) => p.id), t1Ids);
    assert.ok(withVisits.some((p) => p.visits.length > 0));
    for (const visit of withVisits.flatMap((p) => p.visits)) assert.ok(!("billingCode" in visit));
    assert.ok(dataSource().isInitialized);
  });
});

describe("Guarded builders: decorator transforms and audit (SQLite, the Nest fixture's accounts)", () => {
  it("a decorator's mask refuses the builders that would return it; audit events are recorded when the builder is built", async () => {
    const dataSource = await accountsDatabase();
    const engine = new QpPolicyEngine({});
    const context = await engine.prepareAsync(new QpPolicyContext().withValue("tenantId", "t-1"));
    const guarded = applyPolicy(dataSource.getRepository(Account), context);
    await expectPolicyError(() => guarded.filter({}), PolicyErrorCode.TransformRequiresMaterialization, "email");
    await expectPolicyError(() => guarded.summary({ groupBy: { fields: ["email"], aggregateBy: [] } }), PolicyErrorCode.TransformRequiresMaterialization, "email");
    const before = context.auditEvents.length;
    const qb = await guarded.filter({ conditionGroup: { connector: "And", conditions: [{ field: "email", operator: "In", values: ["holder3@bank.example", "holder6@bank.example", "holder4@bank.example"] }] }, selects: ["id", "salary"] });
    const events = context.auditEvents.slice(before) as { field: string; feature: string; action: string }[];
    assert.deepEqual(events.map((e) => [e.field, e.feature, e.action]), [["salary", "Select", "Allowed"]], "recorded at build time, before the host runs it");
    const rows = await qb.getMany();
    assert.deepEqual(rows.map((a) => [a.id, a.salary]), [[3, 3000], [6, 6000]], "holder4 is another tenant's");
    assert.equal(context.auditEvents.length, before + 1, "running the builder records nothing more");
    assert.deepEqual((await (await guarded.selectDynamic(["id", "name"])).getRows()).map((r) => r.id), expectedIds("t-1").slice(0, 1000));
  });
});
