// A prepared context is immutable: its values and subjects are read-only copies. Changing them
// after prepareAsync (values.set/delete/clear, subjects.push, a subject's value, a nested array
// or object) throws a TypeError, and the next query still runs with what was prepared: the same
// forced predicates (tenant and wing scoping) and the same decisions. On every target.
import "reflect-metadata";
import assert from "node:assert/strict";
import { Column, Entity, PrimaryColumn, type DataSource } from "typeorm";
import {
  Operator, PolicyEffect, PolicyErrorCode, PolicyFeature, QpEntityCatalogue, QpForceWhere, QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTier,
  applyPolicy, type QpSubject,
} from "../../lib/index.js";
import { openIsolatedDatabase, type Dialect } from "../support/databases.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { expectPolicyError } from "./helpers.js";

/** Rooms scoped by tenant (Equal) and by the wings the caller may see (In over an array value). */
@Entity("prep_room")
class Room {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenantId" }) @Column({ type: "varchar", length: 20 }) tenantId!: string;
  @QpForceWhere({ operator: Operator.In, contextValue: "wings" }) @Column({ type: "varchar", length: 20 }) wing!: string;
  @Column({ type: "varchar", length: 40 }) name!: string;
}

const rooms = () => [1, 2, 3, 4, 5, 6, 7, 8].map((id) => Object.assign(new Room(), { id, tenantId: id <= 4 ? "t-1" : "t-2", wing: id % 2 ? "north" : "south", name: `Room ${id}` }));
const roomIds = (tenant: string, wings: string[]) => rooms().filter((r) => r.tenantId === tenant && wings.includes(r.wing)).map((r) => r.id);

const opened = new Map<Dialect, Promise<DataSource>>();
function roomDatabase(dialect: Dialect): Promise<DataSource> {
  let pending = opened.get(dialect);
  if (!pending) {
    opened.set(dialect, (pending = openIsolatedDatabase(dialect, "querylib_prepared", [Room]).then(async (dataSource) => {
      await dataSource.getRepository(Room).insert(rooms());
      return dataSource;
    })));
  }
  return pending;
}

/** Strict; the rule hides Room.name from role "guest". */
async function guestEngine(): Promise<QpPolicyEngine> {
  const engine = new QpPolicyEngine({ tier: QpTier.Strict, entities: new QpEntityCatalogue().expose(Room, "rooms") });
  await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "guest", entity: "rooms", field: "name", features: PolicyFeature.Select, effect: PolicyEffect.Deny });
  return engine;
}

describeOnTargets("Policy: a prepared context is immutable", targets, roomDatabase, (target, dataSource) => {
  const guard = (context: QpPolicyContext) => applyPolicy(target === "memory" ? rooms() : dataSource().getRepository(Room), context);
  const ids = async (context: QpPolicyContext) => ((await guard(context).toListAsync({ selects: ["id"], orders: [{ sort: 1, field: "id" }] })).data as { id: number }[]).map((r) => r.id);
  let engine: QpPolicyEngine;
  before(async () => {
    engine = await guestEngine();
  });
  const prepare = (wings: unknown = ["north", "south"]) =>
    engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, "guest").withValue("tenantId", "t-1").withValue("wings", wings));

  it("values.set, delete and clear throw, also through Map.prototype; the forced predicates stay", async () => {
    const context = await prepare();
    assert.deepEqual(await ids(context), roomIds("t-1", ["north", "south"]));
    const values = context.values as Map<string, unknown>;
    assert.throws(() => values.set("tenantId", "t-2"), TypeError);
    assert.throws(() => values.delete("tenantId"), TypeError);
    assert.throws(() => values.clear(), TypeError);
    assert.throws(() => Map.prototype.set.call(values, "tenantId", "t-2"), TypeError);
    assert.throws(() => Map.prototype.clear.call(values), TypeError);
    assert.equal(context.values.get("tenantId"), "t-1");
    assert.equal(context.values.size, 2);
    assert.deepEqual(await ids(context), roomIds("t-1", ["north", "south"]));
  });

  it("a nested array value is a frozen copy: neither the prepared array nor the caller's original changes the scope", async () => {
    const original = ["north"];
    const context = await prepare(original);
    assert.deepEqual(await ids(context), roomIds("t-1", ["north"]));
    const wings = context.values.get("wings") as string[];
    assert.throws(() => wings.push("south"), TypeError);
    assert.throws(() => { wings[0] = "south"; }, TypeError);
    original[0] = "south";
    original.push("east");
    assert.deepEqual(context.values.get("wings"), ["north"]);
    assert.deepEqual(await ids(context), roomIds("t-1", ["north"]));
  });

  it("nested objects and dates are read-only too", async () => {
    const at = new Date("2026-01-01T00:00:00.000Z");
    const context = await engine.prepareAsync(new QpPolicyContext().withValue("tenantId", "t-1").withValue("wings", ["north"]).withValue("claims", { org: { id: "o-1" }, tags: ["a"] }).withValue("at", at));
    const claims = context.values.get("claims") as { org: { id: string }; tags: string[] };
    assert.throws(() => { claims.org.id = "o-2"; }, TypeError);
    assert.throws(() => claims.tags.push("b"), TypeError);
    const preparedAt = context.values.get("at") as Date;
    assert.ok(preparedAt instanceof Date);
    assert.throws(() => preparedAt.setTime(0), TypeError);
    assert.throws(() => preparedAt.setUTCFullYear(2000), TypeError);
    at.setTime(0);
    assert.equal(preparedAt.toISOString(), "2026-01-01T00:00:00.000Z", "the caller's date is not the prepared one");
  });

  it("subjects: push, a subject's value and its kind throw; the decisions stay", async () => {
    const context = await prepare();
    await expectPolicyError(() => guard(context).toListAsync({ selects: ["id", "name"] }), PolicyErrorCode.FieldDeniedForSelect, "name");
    const subjects = context.subjects as QpSubject[];
    assert.throws(() => subjects.push({ kind: QpSubjectKind.Role, value: "admin" }), TypeError);
    assert.throws(() => { (subjects[0] as { value: string }).value = "staff"; }, TypeError);
    assert.throws(() => { (subjects[0] as { kind: string }).kind = QpSubjectKind.User; }, TypeError);
    assert.throws(() => subjects.splice(0, 1), TypeError);
    assert.deepEqual(context.subjectsOf(QpSubjectKind.Role), ["guest"]);
    await expectPolicyError(() => guard(context).toListAsync({ selects: ["id", "name"] }), PolicyErrorCode.FieldDeniedForSelect, "name");
  });

  it("the subjects handed in are copied: changing them after preparation changes nothing", async () => {
    const handed: QpSubject[] = [{ kind: QpSubjectKind.Role, value: "guest" }];
    const context = await engine.prepareAsync(new QpPolicyContext(handed, new Map<string, unknown>([["tenantId", "t-1"], ["wings", ["south"]]])));
    (handed[0] as { value: string }).value = "staff";
    handed.push({ kind: QpSubjectKind.Role, value: "admin" });
    assert.deepEqual(context.subjectsOf(QpSubjectKind.Role), ["guest"]);
    await expectPolicyError(() => guard(context).toListAsync({ selects: ["id", "name"] }), PolicyErrorCode.FieldDeniedForSelect, "name");
    assert.deepEqual(await ids(context), roomIds("t-1", ["south"]));
  });

  it("a value that cannot be made read-only (a Map, a class instance) is refused at preparation", async () => {
    for (const value of [new Map([["a", 1]]), new Set([1]), new (class Claims { id = 1 })()]) {
      await assert.rejects(() => engine.prepareAsync(new QpPolicyContext().withValue("tenantId", "t-1").withValue("odd", value)), TypeError);
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await assert.rejects(() => engine.prepareAsync(new QpPolicyContext().withValue("cyclic", cyclic)), TypeError);
  });

  it("a changed copy (withValue) is unprepared again; prepared anew it scopes by its own values", async () => {
    const context = await prepare(["north"]);
    const changed = context.withValue("tenantId", "t-2");
    assert.equal(changed.isPrepared, false);
    await expectPolicyError(() => ids(changed), PolicyErrorCode.PolicyContextNotPrepared);
    assert.deepEqual(await ids(await engine.prepareAsync(changed)), roomIds("t-2", ["north"]));
    assert.deepEqual(await ids(context), roomIds("t-1", ["north"]));
  });
});
