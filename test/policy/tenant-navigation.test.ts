// Navigation between tenant-scoped entities (lib/decisions/tenant-navigation.ts, issue #42 item 7).
// NavPatient and its visits both carry `tenantId = context.tenantId` (QpForceWhere): the usual
// multi-tenant schema. A hop between them is proven tenant-safe and allowed, with the target's
// forced predicate applied inside the join or EXISTS; hops into an entity scoped by another
// context value, another operator, or from an unscoped entity stay refused.
//
// The attack rows: visit 21 belongs to tenant B but its foreign key points at patient 1 of
// tenant A (cost 1, the cheapest visit of all), and visit 13 belongs to tenant A but points at
// patient 3 of tenant B ("Bob"). Without the target's predicate inside the navigation, tenant A
// would find patient 1 by `visits.cost < 10`, rank it first by MIN(visits.cost), see visit 21 in
// patient 1's visits, and read "Bob" through visit 13; tenant B would find visit 21 by
// `patient.name = 'Ann'`. The first test shows those rows are really reachable without the
// policy (the unguarded query finds them); every guarded test shows they are not. Every target:
// memory, SQLite, PostgreSQL, MariaDB.
import assert from "node:assert/strict";
import { Column, Entity, JoinColumn, ManyToOne, OneToMany, PrimaryColumn, type DataSource, type ObjectLiteral } from "typeorm";
import {
  Operator, PolicyErrorCode, QpEntityCatalogue, QpForceWhere, QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTier, applyPolicy, toList, toListAsync,
} from "../../lib/index.js";
import { lintPolicy } from "../../lib/lint/lint-policy.js";
import { resolveOptions } from "../../lib/decisions/options.js";
import { navigationRefusal } from "../../lib/decisions/tenant-navigation.js";
import { openIsolatedDatabase, type Dialect } from "../support/databases.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { type Shape, cond, expectPolicyError, whereShape } from "./helpers.js";

@Entity("tnav_patient")
class NavPatient {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenantId" }) @Column({ type: "varchar", length: 10 }) tenantId!: string;
  @Column({ type: "varchar", length: 40 }) name!: string;
  @OneToMany(() => NavVisit, (v) => v.patient) visits!: NavVisit[];
  @OneToMany(() => NavNote, (n) => n.patient) notes!: NavNote[];
  @OneToMany(() => NavLab, (l) => l.patient) labs!: NavLab[];
}

@Entity("tnav_visit")
class NavVisit {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenantId" }) @Column({ type: "varchar", length: 10 }) tenantId!: string;
  @Column({ type: "int" }) cost!: number;
  @Column({ type: "int" }) patientId!: number;
  @ManyToOne(() => NavPatient, (p) => p.visits) @JoinColumn({ name: "patientId" }) patient!: NavPatient;
}

/** Scoped by another context value ("orgId"): not proven to be the patient's tenant. */
@Entity("tnav_note")
class NavNote {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "orgId" }) @Column({ type: "varchar", length: 10 }) orgId!: string;
  @Column({ type: "varchar", length: 40 }) text!: string;
  @Column({ type: "int" }) patientId!: number;
  @ManyToOne(() => NavPatient, (p) => p.notes) @JoinColumn({ name: "patientId" }) patient!: NavPatient;
}

/** Scoped by the same context value with another operator (In): not proven to be the same scope. */
@Entity("tnav_lab")
class NavLab {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.In, contextValue: "tenantId" }) @Column({ type: "varchar", length: 10 }) tenantId!: string;
  @Column({ type: "int" }) value!: number;
  @Column({ type: "int" }) patientId!: number;
  @ManyToOne(() => NavPatient, (p) => p.labs) @JoinColumn({ name: "patientId" }) patient!: NavPatient;
}

/** Not scoped at all: nothing confines its rows to the caller's tenant. */
@Entity("tnav_device")
class NavDevice {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 40 }) label!: string;
  @Column({ type: "int" }) patientId!: number;
  @ManyToOne(() => NavPatient) @JoinColumn({ name: "patientId" }) patient!: NavPatient;
}

const entities = [NavPatient, NavVisit, NavNote, NavLab, NavDevice];

const patientRows = [[1, "A", "Ann"], [2, "A", "Abe"], [3, "B", "Bob"], [4, "B", "Bea"]] as const;
// [id, tenant, patient, cost]: 21 is B's visit on A's patient 1 (the bad foreign key), 13 is A's visit on B's patient 3.
const visitRows = [[10, "A", 1, 100], [11, "A", 1, 300], [12, "A", 2, 50], [13, "A", 3, 40], [20, "B", 3, 70], [21, "B", 1, 1], [22, "B", 4, 5]] as const;

/** The rows as a linked object graph (references and collections both ways), fresh per call. */
function graph() {
  const patients = patientRows.map(([id, tenantId, name]) => Object.assign(new NavPatient(), { id, tenantId, name, visits: [], notes: [], labs: [] }));
  const patient = (id: number) => patients.find((p) => p.id === id)!;
  const visits = visitRows.map(([id, tenantId, patientId, cost]) => Object.assign(new NavVisit(), { id, tenantId, patientId, cost, patient: patient(patientId) }));
  for (const v of visits) v.patient.visits.push(v);
  const notes = [Object.assign(new NavNote(), { id: 1, orgId: "o1", text: "note", patientId: 1, patient: patient(1) })];
  const labs = [Object.assign(new NavLab(), { id: 1, tenantId: "A", value: 7, patientId: 1, patient: patient(1) })];
  const devices = [Object.assign(new NavDevice(), { id: 1, label: "pump", patientId: 3, patient: patient(3) })];
  for (const n of notes) n.patient.notes.push(n);
  for (const l of labs) l.patient.labs.push(l);
  return { patients, visits, notes, labs, devices };
}

const opened = new Map<Dialect, Promise<DataSource>>();
function navDatabase(dialect: Dialect): Promise<DataSource> {
  let pending = opened.get(dialect);
  if (!pending) {
    opened.set(dialect, (pending = openIsolatedDatabase(dialect, "querylib_tenant_nav", entities).then(async (dataSource) => {
      const g = graph();
      const columns = (row: object, drop: string[]) => Object.fromEntries(Object.entries(row).filter(([k]) => !drop.includes(k)));
      await dataSource.getRepository(NavPatient).insert(g.patients.map((p) => columns(p, ["visits", "notes", "labs"])) as never[]);
      await dataSource.getRepository(NavVisit).insert(g.visits.map((v) => columns(v, ["patient"])) as never[]);
      await dataSource.getRepository(NavNote).insert(g.notes.map((v) => columns(v, ["patient"])) as never[]);
      await dataSource.getRepository(NavLab).insert(g.labs.map((v) => columns(v, ["patient"])) as never[]);
      await dataSource.getRepository(NavDevice).insert(g.devices.map((v) => columns(v, ["patient"])) as never[]);
      return dataSource;
    })));
  }
  return pending;
}

const contextOf = (engine: QpPolicyEngine, tenant: string) =>
  engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Tenant, tenant).withValue("tenantId", tenant).withValue("orgId", "o1"));

type Row = Record<string, unknown>;

describeOnTargets("Policy: navigation between tenant-scoped entities", targets, navDatabase, (target, dataSource) => {
  // Strict: a refused select is an error, never a silent drop.
  let engine: QpPolicyEngine;
  let a: QpPolicyContext;
  let b: QpPolicyContext;
  before(async () => {
    engine = new QpPolicyEngine({ tier: QpTier.Strict });
    a = await contextOf(engine, "A");
    b = await contextOf(engine, "B");
  });

  const sourceOf = (entity: Function): ObjectLiteral[] | ReturnType<DataSource["getRepository"]> => {
    if (target !== "memory") return dataSource().getRepository(entity);
    const g = graph();
    return ({ NavPatient: g.patients, NavVisit: g.visits, NavNote: g.notes, NavLab: g.labs, NavDevice: g.devices } as Record<string, ObjectLiteral[]>)[entity.name]!;
  };
  const run = async (entity: Function, context: QpPolicyContext, shape: Shape): Promise<Row[]> =>
    JSON.parse(JSON.stringify((await applyPolicy(sourceOf(entity) as never, context).toListAsync(shape as never)).data)) as Row[];
  const ids = async (entity: Function, context: QpPolicyContext, shape: Shape) =>
    (await run(entity, context, { orders: [{ sort: 1, field: "id" }], ...shape, selects: ["id"] })).map((r) => r.id as number);

  it("the attack rows are there: without the policy, tenant A's patient 1 is found through B's visit 21 and visit 13 reads B's Bob", async () => {
    const shape = { ...whereShape(cond("visits.cost", "LessThan", [10])), selects: ["id"] };
    const found = target === "memory" ? toList(graph().patients, shape as never) : await toListAsync(dataSource().getRepository(NavPatient), shape as never);
    assert.deepEqual((found.data as unknown as Row[]).map((r) => r.id), [1, 4], "the unguarded any-match reaches visit 21 (tenant B) from patient 1 (tenant A)");
    const visit13 = target === "memory" ? toList(graph().visits, { ...whereShape(cond("id", "Equal", [13])), selects: ["id", "patient.name"] } as never)
      : await toListAsync(dataSource().getRepository(NavVisit), { ...whereShape(cond("id", "Equal", [13])), selects: ["id", "patient.name"] } as never);
    assert.equal(((visit13.data as unknown as Row[])[0]!.patient as Row).name, "Bob");
  });

  it("collection condition (any-match): only the caller's tenant's visits are tested inside the EXISTS", async () => {
    assert.deepEqual(await ids(NavPatient, a, whereShape(cond("visits.cost", "LessThan", [10]))), [], "B's visit 21 (cost 1) must not make A's patient 1 match");
    assert.deepEqual(await ids(NavPatient, a, whereShape(cond("visits.cost", "GreaterThanOrEqual", [50]))), [1, 2]);
    assert.deepEqual(await ids(NavPatient, b, whereShape(cond("visits.cost", "LessThan", [10]))), [4]);
    assert.deepEqual(await ids(NavPatient, b, whereShape(cond("visits.cost", "Equal", [40]))), [], "A's visit 13 must not make B's patient 3 match");
    assert.deepEqual(await ids(NavPatient, b, whereShape(cond("visits.cost", "Equal", [70]))), [3]);
    // A Segment set tests its any-match the same way.
    const segment = { conditionSets: [{ sort: 1, conditionGroup: { connector: "And", conditions: [cond("visits.cost", "LessThan", [60])] } }], selects: ["id"], orders: [{ sort: 1, field: "id" }] };
    assert.deepEqual((await run(NavPatient, a, segment)).map((r) => r.id), [2]);
  });

  it("reference condition: a visit's patient of another tenant matches nothing", async () => {
    assert.deepEqual(await ids(NavVisit, a, whereShape(cond("patient.name", "Equal", ["Bob"]))), [], "A's visit 13 must not reach B's Bob");
    assert.deepEqual(await ids(NavVisit, a, whereShape(cond("patient.name", "Equal", ["Ann"]))), [10, 11]);
    assert.deepEqual(await ids(NavVisit, b, whereShape(cond("patient.name", "Equal", ["Ann"]))), [], "B's visit 21 must not reach A's Ann");
    assert.deepEqual(await ids(NavVisit, b, whereShape(cond("patient.name", "StartsWith", ["B"]))), [20, 22]);
  });

  it("reference select: a patient of another tenant comes back null, never its values", async () => {
    const rows = await run(NavVisit, a, { selects: ["id", "patient.name", "patient.tenantId"], orders: [{ sort: 1, field: "id" }] });
    assert.deepEqual(rows.map((r) => [r.id, (r.patient as Row | null)?.name ?? null, (r.patient as Row | null)?.tenantId ?? null]), [[10, "Ann", "A"], [11, "Ann", "A"], [12, "Abe", "A"], [13, null, null]]);
    const whole = await run(NavVisit, b, { selects: ["id", "patient"], orders: [{ sort: 1, field: "id" }] });
    assert.deepEqual(whole.map((r) => [r.id, (r.patient as Row | null)?.name ?? null]), [[20, "Bob"], [21, null], [22, "Bea"]]);
    assert.ok(!JSON.stringify(whole).includes("Ann") && !JSON.stringify(rows).includes("Bob"));
  });

  it("nested path of two hops (visit → patient → visits): each hop holds its own tenant predicate", async () => {
    assert.deepEqual(await ids(NavVisit, a, whereShape(cond("patient.visits.cost", "LessThan", [10]))), [], "patient 1's visit 21 belongs to B");
    assert.deepEqual(await ids(NavVisit, a, whereShape(cond("patient.visits.cost", "Equal", [50]))), [12]);
    assert.deepEqual(await ids(NavVisit, a, whereShape(cond("patient.visits.cost", "Equal", [40]))), [], "visit 13's patient is B's: the first hop reaches nothing");
    assert.deepEqual(await ids(NavPatient, a, whereShape(cond("visits.patient.name", "Equal", ["Bob"]))), [], "through A's visit 13 to B's Bob");
    assert.deepEqual(await ids(NavPatient, b, whereShape(cond("visits.patient.name", "Equal", ["Bob"]))), [3]);
  });

  it("order across a collection: the MIN/MAX reduction reads only the caller's tenant's visits", async () => {
    const ascending = await run(NavPatient, a, { selects: ["id"], orders: [{ sort: 1, field: "visits.cost", direction: "Ascending" }] });
    assert.deepEqual(ascending.map((r) => r.id), [2, 1], "MIN over A's visits: Abe 50, Ann 100 (with B's visit 21 Ann would be 1 and first)");
    const descending = await run(NavPatient, b, { selects: ["id"], orders: [{ sort: 1, field: "visits.cost", direction: "Descending" }] });
    assert.deepEqual(descending.map((r) => r.id), [3, 4]);
    const byPatientName = await run(NavVisit, a, { selects: ["id"], orders: [{ sort: 1, field: "patient.name", direction: "Descending" }, { sort: 2, field: "id" }] });
    // Visit 13's patient is out of scope: a NULL key, last descending.
    assert.deepEqual(byPatientName.map((r) => r.id), [10, 11, 12, 13]);
  });

  it("selected collection: a patient's visits are its tenant's only", async () => {
    const rows = await run(NavPatient, a, { selects: ["id", "visits.id", "visits.cost"], orders: [{ sort: 1, field: "id" }] });
    assert.deepEqual(rows.map((r) => [r.id, (r.visits as Row[]).map((v) => v.id)]), [[1, [10, 11]], [2, [12]]]);
    const rowsB = await run(NavPatient, b, { selects: ["id", "visits"], orders: [{ sort: 1, field: "id" }] });
    assert.deepEqual(rowsB.map((r) => [r.id, (r.visits as Row[]).map((v) => v.id)]), [[3, [20]], [4, [22]]]);
  });

  it("a Summary grouped through the reference: another tenant's patient is a NULL key", async () => {
    const summary = { groupBy: { fields: ["patient.name"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, orders: [{ sort: 1, field: "n", direction: "Descending" }] };
    // A group floor of 1: the point is which key each visit falls under, not the floor.
    const unfloored = new QpPolicyEngine({ tier: QpTier.Strict, caps: { minGroupSize: 1 } });
    const result = await applyPolicy(sourceOf(NavVisit) as never, await contextOf(unfloored, "A")).toListAsync(summary as never);
    const groups = (result.data as Row[]).map((r) => [r.patientName ?? null, Number(r.n)]);
    assert.deepEqual(groups.sort((x, y) => String(x[0]).localeCompare(String(y[0]))), [["Abe", 1], ["Ann", 2], [null, 1]]);
  });

  it("the plan cache: callers of two tenants alternate on one request and each gets its own tenant's rows", async () => {
    const shape = { ...whereShape(cond("visits.cost", "LessThan", [80])), selects: ["id", "visits.id"], orders: [{ sort: 1, field: "visits.cost" }] };
    const expectedA = [[2, [12]]];
    const expectedB = [[4, [22]], [3, [20]]];
    const hitsBefore = engine.caches.plans.stats.hits;
    for (let i = 0; i < 3; i++) {
      for (const [context, expected] of [[a, expectedA], [b, expectedB]] as const) {
        const rows = await run(NavPatient, context, shape);
        assert.deepEqual(rows.map((r) => [r.id, (r.visits as Row[]).map((v) => v.id)]), expected, `round ${i}`);
      }
    }
    if (target === "memory") return;
    assert.ok(engine.caches.plans.stats.hits > hitsBefore, "the plans were cached and reused");
    // The statements bind each caller's own tenant inside the EXISTS and the reduction, never the other's.
    for (const [context, own, other] of [[a, "A", "B"], [b, "B", "A"]] as const) {
      const statements = await applyPolicy(dataSource().getRepository(NavPatient), context).toStatementsAsync(shape as never);
      const values = JSON.stringify(statements.data.parameters);
      assert.ok(values.includes(`"${own}"`) && !values.includes(`"${other}"`), `${own}: ${values}`);
      // The root's forced predicate, the EXISTS's and the order's MIN each bind the tenant.
      assert.ok(statements.data.parameters.filter((p) => p === own).length >= 3, values);
    }
  });

  // A builder is a TypeORM SelectQueryBuilder: there is none on an array, so memory has no such case.
  if (target !== "memory") it("a guarded builder (filter) carries the target's predicate in its EXISTS and join too", async function () {
    const builder = await applyPolicy(dataSource().getRepository(NavPatient), a).filter({ ...whereShape(cond("visits.cost", "LessThan", [10])), selects: ["id"] } as never);
    assert.deepEqual((await builder.getMany()).map((p) => p.id), [], "B's visit 21 must not make A's patient 1 match");
    const visits = await applyPolicy(dataSource().getRepository(NavVisit), a).filter({ ...whereShape(cond("patient.name", "Equal", ["Bob"])), selects: ["id"] } as never);
    assert.deepEqual((await visits.getMany()).map((v) => v.id), []);
  });

  it("navigations that are not proven tenant-safe stay refused, each naming why", async () => {
    await expectPolicyError(() => run(NavPatient, a, whereShape(cond("notes.text", "Equal", ["note"]))), PolicyErrorCode.FieldDeniedForWhere, /bound to the context value "orgId"/);
    await expectPolicyError(() => run(NavPatient, a, whereShape(cond("labs.value", "Equal", [7]))), PolicyErrorCode.FieldDeniedForWhere, /tests "tenantId" with In/);
    await expectPolicyError(() => run(NavDevice, a, { selects: ["id", "patient.name"] }), PolicyErrorCode.FieldDeniedForSelect, /NavDevice has no QpForceWhere/);
    await expectPolicyError(() => run(NavDevice, a, whereShape(cond("patient.name", "Equal", ["Bob"]))), PolicyErrorCode.FieldDeniedForWhere, /reachable only as the query's root/);
    await expectPolicyError(() => run(NavNote, a, { selects: ["id", "patient.name"] }), PolicyErrorCode.FieldDeniedForSelect, /bound to the context value "tenantId", NavNote's QpForceWhere to "orgId"/);
    await expectPolicyError(() => run(NavPatient, a, { selects: ["id"], orders: [{ sort: 1, field: "labs.value" }] }), PolicyErrorCode.FieldDeniedForOrder, /not proven tenant-safe/);
  });
});

describe("Policy: what counts as a proven tenant-safe navigation", () => {
  it("same context value and operator: proven; another value, another operator, an unscoped source or constants only: refused", () => {
    assert.equal(navigationRefusal(NavPatient, "visits", NavVisit), null);
    assert.equal(navigationRefusal(NavVisit, "patient", NavPatient), null);
    assert.equal(navigationRefusal(NavVisit, "patient", NavDevice), null, "an unscoped target needs no proof");
    assert.match(navigationRefusal(NavPatient, "notes", NavNote)!.why, /"orgId"/);
    assert.match(navigationRefusal(NavPatient, "labs", NavLab)!.why, /with In/);
    const unscoped = navigationRefusal(NavDevice, "patient", NavPatient)!;
    assert.equal(unscoped.unscopedSource, true);
    assert.match(unscoped.fix, /add QpForceWhere/);
  });

  it("the linter names each refused navigation with its reason and fix, and none of the proven ones", () => {
    const options = resolveOptions({ lint: "off", hashSalt: "0123456789abcdef-salt" });
    const catalogue: QpEntityCatalogue = options.entities;
    for (const entity of entities) catalogue.expose(entity, entity.name.toLowerCase());
    const findings = lintPolicy(options).filter((f) => f.code === "NavigationIntoScopedEntity" || f.code === "NavigationNotTenantSafe");
    const found = findings.map((f) => `${f.code} ${f.entity}.${f.field}`).sort();
    assert.deepEqual(found, [
      "NavigationIntoScopedEntity navdevice.patient",
      "NavigationNotTenantSafe navlab.patient",
      "NavigationNotTenantSafe navnote.patient",
      "NavigationNotTenantSafe navpatient.labs",
      "NavigationNotTenantSafe navpatient.notes",
    ]);
    for (const f of findings) assert.ok(f.why.length > 0 && f.fix.length > 0 && f.source.startsWith("QpForceWhere on "), JSON.stringify(f));
  });
});
