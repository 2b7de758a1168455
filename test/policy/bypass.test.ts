// Attempts to reach denied data or to escape the tenant scope, on every target. Each attempt
// must fail: with the exact error code, or with the data simply absent — and a caller whose
// context is prepared for tenant t-1 never receives anything of tenant t-2 (every returned
// tenantId is checked, totals equal the oracle's t-1 counts). Expectations come from
// policyData(), never from the engine.
import assert from "node:assert/strict";
import {
  LogicException, PolicyErrorCode, applyPolicy, PolicyException, QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTier, filter, filterDynamic, group,
  inMemory, order, page, select, selectDynamic, summary, toList, toListAsync, toListAsyncDynamic, toListDynamic, where,
} from "../../lib/index.js";
import { Doctor, Patient, Visit } from "./domain.js";
import { Bed, Ward } from "./more-domain.js";
import {
  type Guarded, type Shape, and, assertTenant, bedDefaultRow, bedsOf, cond, convenience, entriesFor, expectLogicError, expectPolicyError, group as subGroup, idsOf,
  oracle, or, plain, scopedNavigationSource, strict, t1, t2, tenantContext, wardDefaultRow, wardOracle, whereShape,
} from "./helpers.js";
import { type PolicyTargetContext, forEachPolicyTarget } from "./policy-targets.js";

type Row = Record<string, unknown>;

async function run<T = Row>(ctx: PolicyTargetContext, entity: new () => object, context: QpPolicyContext, shape: Shape | string, options: { dynamic?: boolean; queryString?: boolean } = {}): Promise<Guarded<T>> {
  const guarded = ctx.guard(entity as new () => Row, context);
  const result = options.dynamic ? await guarded.toListAsyncDynamic(shape as never, options.queryString ?? false) : await guarded.toListAsync(shape, options.queryString ?? false);
  return result as unknown as Guarded<T>;
}

const ids = (result: Guarded<unknown>) => (result.data as { id: number }[]).map((row) => row.id);
const visitsOf = (...patientIds: number[]) => oracle.visits.filter((v) => patientIds.includes(v.patientId));
const count = (shape: Shape, field: string) => ({ ...shape, groupBy: { fields: [field], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });
const set = (sort: number, conditionGroup: Shape, intersection?: string | number) => ({ sort, conditionGroup, ...(intersection !== undefined ? { intersection } : {}) });
const secrets = [
  ...oracle.patients.map((p) => p.ssn), ...oracle.patients.map((p) => p.internalNote), ...oracle.doctors.map((d) => d.secretCode), ...oracle.visits.map((v) => v.billingCode),
  ...wardOracle.wards.map((w) => w.accessCode), ...wardOracle.beds.map((b) => b.lockCode),
];
/** Bed carries QpRequireWhere on wardId. */
const pinBeds = (...wardIds: number[]) => whereShape(cond("wardId", wardIds.length === 1 ? "Equal" : "In", wardIds));
const wardOf = (id: number) => wardOracle.wards.find((w) => w.id === id)!;

/** No denied value (ssn, internal note, doctor secret code, billing code, access code, lock code) anywhere in a result. */
function assertNoSecrets(result: unknown): void {
  const text = JSON.stringify(result);
  for (const secret of secrets) assert.ok(!text.includes(`"${secret}"`), `the result leaks ${secret}: ${text.slice(0, 400)}`);
}

/** Every row of tenant t-1 (typed or dynamic, nested objects included), none of t-2. */
function assertOnlyT1(value: unknown): void {
  const text = JSON.stringify(value);
  assert.ok(!text.includes('"t-2"'), `a t-2 value leaked: ${text.slice(0, 400)}`);
  for (const p of t2) assert.ok(!text.includes(`"${p.name}"`), `a t-2 patient (${p.name}) leaked: ${text.slice(0, 400)}`);
}

/** A t-1 query: rows exactly the oracle's, tenantIds all t-1, totals the oracle's. */
function assertT1Rows(result: Guarded<Row>, expected: readonly { id: number }[]): void {
  assert.deepEqual(ids(result), idsOf(expected));
  assert.equal(result.totalCount, expected.length);
  assertTenant(result.data);
  assertOnlyT1(result.data);
}

forEachPolicyTarget("Policy: bypass attempts", (ctx) => {
  let c1: QpPolicyContext; // Convenience, tenant t-1
  let s1: QpPolicyContext; // Strict, tenant t-1
  before(async () => {
    c1 = await tenantContext(convenience);
    s1 = await tenantContext(strict);
  });
  const both = () => [c1, s1] as const;

  // ---- names of a denied field ----------------------------------------------------------

  it("01 case variants of a denied field are the same field (where, order, select, group, aggregate)", async () => {
    for (const name of ["SSN", "Ssn", "sSn", "ssN"]) {
      for (const context of both()) await expectPolicyError(() => run(ctx, Patient, context, whereShape(cond(name, "Equal", ["SSN-1"]))), PolicyErrorCode.FieldDeniedForWhere);
      await expectPolicyError(() => run(ctx, Patient, s1, { orders: [{ sort: 1, field: name }] }), PolicyErrorCode.FieldDeniedForOrder);
      await expectPolicyError(() => run(ctx, Patient, s1, { selects: ["id", name] }), PolicyErrorCode.FieldDeniedForSelect);
      await expectPolicyError(() => run(ctx, Patient, c1, { selects: [name] }), PolicyErrorCode.AllSelectsDenied);
      await expectPolicyError(() => run(ctx, Patient, c1, count({}, name)), PolicyErrorCode.FieldDeniedForGroup);
      await expectPolicyError(() => run(ctx, Patient, c1, { groupBy: { fields: ["diagnosis"], aggregateBy: [{ field: name, alias: "x", aggregator: "Count" }] } }), PolicyErrorCode.FieldDeniedForAggregate);
    }
  });

  it("02 whitespace and empty path segments reach the same denied field", async () => {
    for (const name of [" ssn ", "ssn.", ".ssn", "ssn..", " SSN . ", "\tssn"]) {
      await expectPolicyError(() => run(ctx, Patient, c1, whereShape(cond(name, "Equal", ["SSN-1"]))), PolicyErrorCode.FieldDeniedForWhere);
      await expectPolicyError(() => run(ctx, Patient, s1, { selects: ["id", name] }), PolicyErrorCode.FieldDeniedForSelect);
    }
    // Through an (unscoped) navigation: the member's own denial.
    for (const name of ["ward..accessCode", " ward . accessCode ", "ward.accessCode.", "WARD..ACCESSCODE"]) {
      await expectPolicyError(() => run(ctx, Bed, c1, whereShape(cond("wardId", "Equal", [1], 1), cond(name, "Equal", ["ACCESS-1"], 2))), PolicyErrorCode.FieldDeniedForWhere, "QpDenied on Ward.accessCode");
      await expectPolicyError(() => run(ctx, Bed, s1, { ...pinBeds(1), selects: ["id", name] }), PolicyErrorCode.FieldDeniedForSelect, "QpDenied on Ward.accessCode");
    }
    // Through the tenant-scoped Patient: the navigation itself is denied, under any spelling.
    for (const name of ["patient..ssn", " patient . ssn ", "patient.ssn.", "PATIENT..SSN", "patient..name"]) {
      await expectPolicyError(() => run(ctx, Visit, c1, whereShape(cond("patientId", "Equal", [1], 1), cond(name, "Equal", ["SSN-1"], 2))), PolicyErrorCode.FieldDeniedForWhere, scopedNavigationSource);
    }
  });

  it("03 the real name behind an alias is unknown under a guard (where, select, order, group, aggregate)", async () => {
    for (const name of ["email", "EMAIL", "Email"]) {
      await expectLogicError(() => run(ctx, Patient, c1, whereShape(cond(name, "Contains", ["example"]))), "ConditionMustHasValidFieldName");
      await expectLogicError(() => run(ctx, Patient, c1, whereShape(cond(name, "Equal", ["p1@example.com"]))), "ConditionMustHasValidFieldName");
      await expectLogicError(() => run(ctx, Patient, c1, { selects: ["id", name] }), "ConditionMustHasValidFieldName");
      await expectLogicError(() => run(ctx, Patient, c1, { orders: [{ sort: 1, field: name }] }), "ConditionMustHasValidFieldName");
      await expectLogicError(() => run(ctx, Patient, c1, count({}, name)), "ConditionMustHasValidFieldName");
      await expectLogicError(() => run(ctx, Visit, c1, { ...whereShape(cond("patientId", "Equal", [1])), selects: [`patient.${name}`] }), "ConditionMustHasValidFieldName");
    }
    // Through an unscoped navigation, both ways.
    for (const name of ["phoneNumber", "PHONENUMBER"]) {
      await expectLogicError(() => run(ctx, Bed, c1, { ...pinBeds(1), selects: ["id", `ward.${name}`] }), "ConditionMustHasValidFieldName");
      await expectLogicError(() => run(ctx, Bed, c1, whereShape(cond("wardId", "Equal", [1], 1), cond(`ward.${name}`, "Equal", ["+1-555-0101"], 2))), "ConditionMustHasValidFieldName");
    }
    await expectLogicError(() => run(ctx, Ward, c1, { orders: [{ sort: 1, field: "beds.serialNo" }] }), "ConditionMustHasValidFieldName");
    await expectLogicError(() => run(ctx, Ward, c1, count({}, "beds.SerialNo")), "ConditionMustHasValidFieldName");
  });

  it("04 alias case variants cannot dodge QpOperators", async () => {
    for (const [name, operator] of [["MAIL", "Contains"], ["Mail", "StartsWith"], [" mail ", "IContains"], ["mAiL", "NotEqual"], ["mail.", "EndsWith"]]) {
      for (const context of both()) await expectPolicyError(() => run(ctx, Patient, context, whereShape(cond(name!, operator!, ["example"]))), PolicyErrorCode.OperatorNotAllowed);
    }
    // Through a navigation from another root too (unscoped Ward/Bed: a reference and a collection);
    // the refusal names the public alias, never the internal member.
    for (const context of both()) {
      for (const [name, operator] of [["ward.PHONE", "Contains"], ["Ward.Phone", "StartsWith"], [" ward . phone ", "NotEqual"], ["ward.phone", "IsNotNull"]] as const) {
        const error = await expectPolicyError(() => run(ctx, Bed, context, whereShape(cond("wardId", "Equal", [1], 1), cond(name, operator, operator === "IsNotNull" ? [] : ["555"], 2))), PolicyErrorCode.OperatorNotAllowed, "ward.phone");
        assert.ok(!error.message.includes("phoneNumber"), error.message);
      }
      const tag = await expectPolicyError(() => run(ctx, Ward, context, whereShape(cond("beds.TAG", "StartsWith", ["SN-1"]))), PolicyErrorCode.OperatorNotAllowed, "beds.tag");
      assert.ok(!tag.message.includes("serialNo"), tag.message);
    }
    // The refusal's trace source names the public alias of the member reached (seen in a dry run, which records and goes on).
    const dry = await tenantContext(new QpPolicyEngine({ dryRun: true }));
    const traced = await run(ctx, Ward, dry, { ...whereShape(cond("beds.TAG", "StartsWith", ["SN-1"])), selects: ["id"] });
    assert.deepEqual(ids(traced), [2], "not enforced in a dry run: SN-1 is bed 1, in ward 2");
    const denied = entriesFor(traced.policy, "beds.tag", "Where").filter((e) => e.action === "Denied");
    assert.deepEqual(denied.map((e) => [e.source, e.level, e.enforced]), [["QpOperators on Bed.tag", 1, false]], JSON.stringify(traced.policy.entries));
    const phone = await run(ctx, Bed, c1, { ...whereShape(cond("wardId", "In", [1, 2], 1), cond("ward.Phone", "Equal", ["+1-555-0101"], 2)), selects: ["id"] });
    assert.deepEqual(ids(phone), idsOf(bedsOf(1)));
    const tagged = await run(ctx, Ward, c1, { ...whereShape(cond("beds.tag", "In", ["SN-3", "SN-99"])), selects: ["id"] });
    assert.deepEqual(ids(tagged), [2]);
    // Into the tenant-scoped Patient the navigation is denied before any operator is considered.
    await expectPolicyError(() => run(ctx, Visit, c1, whereShape(cond("patientId", "Equal", [1], 1), cond("patient.MAIL", "Contains", ["@"], 2))), PolicyErrorCode.FieldDeniedForWhere, scopedNavigationSource);
    await expectPolicyError(() => run(ctx, Doctor, c1, whereShape(cond("patients.mail", "StartsWith", ["p1"]))), PolicyErrorCode.FieldDeniedForWhere, scopedNavigationSource);
    await expectPolicyError(() => run(ctx, Doctor, s1, whereShape(cond("patients.mail", "Equal", ["p1@example.com"]))), PolicyErrorCode.FieldDeniedForWhere, scopedNavigationSource);
  });

  // ---- other roots ----------------------------------------------------------------------

  it("05 Bed → ward.accessCode (a reference) is denied in every feature, under any case", async () => {
    const pinned = (extra: Shape = {}) => ({ ...pinBeds(1, 2), ...extra });
    const source = "QpDenied on Ward.accessCode";
    await expectPolicyError(() => run(ctx, Bed, c1, whereShape(cond("wardId", "Equal", [1], 1), cond("Ward.ACCESSCODE", "Equal", ["ACCESS-1"], 2))), PolicyErrorCode.FieldDeniedForWhere, source);
    await expectPolicyError(() => run(ctx, Bed, s1, pinned({ selects: ["id", "ward.accessCode"] })), PolicyErrorCode.FieldDeniedForSelect, source);
    await expectPolicyError(() => run(ctx, Bed, c1, pinned({ selects: ["ward.accessCode"] })), PolicyErrorCode.AllSelectsDenied);
    await expectPolicyError(() => run(ctx, Bed, s1, pinned({ orders: [{ sort: 1, field: "ward.accessCode" }] })), PolicyErrorCode.FieldDeniedForOrder, source);
    await expectPolicyError(() => run(ctx, Bed, c1, count(pinBeds(1, 2), "ward.accessCode")), PolicyErrorCode.FieldDeniedForGroup, source);
    await expectPolicyError(() => run(ctx, Bed, c1, pinned({ groupBy: { fields: ["label"], aggregateBy: [{ field: "ward.accessCode", alias: "m", aggregator: "Maximum" }] } })), PolicyErrorCode.FieldDeniedForAggregate, source);
    await expectPolicyError(() => run(ctx, Bed, c1, { conditionSets: [set(1, and(cond("wardId", "Equal", [1], 1), cond("ward.accessCode", "IsNotNull", [], 2)))] }), PolicyErrorCode.FieldDeniedForSegment, source);
    const kept = await run(ctx, Bed, c1, pinned({ selects: ["id", "ward.accessCode", "ward.name"], orders: [{ sort: 1, field: "ward.accessCode", direction: "Descending" }] }));
    assert.deepEqual(plain(kept.data), bedsOf(1, 2).map((b) => ({ id: b.id, ward: { name: wardOf(b.wardId).name, id: b.wardId } })), "primary-key order, the name kept (with the ward's key, 2.1.5 §4.1)");
    assertNoSecrets(kept);
  });

  it("05b Visit → patient.* (the tenant-scoped Patient) is denied in every feature, whichever member", async () => {
    const pinned = (extra: Shape = {}) => ({ ...whereShape(cond("patientId", "In", [1, 2])), ...extra });
    for (const member of ["ssn", "SSN", "name", "id", "mail"]) {
      const path = `Patient.${member}`;
      await expectPolicyError(() => run(ctx, Visit, c1, whereShape(cond("patientId", "Equal", [1], 1), cond(path, "Equal", ["x"], 2))), PolicyErrorCode.FieldDeniedForWhere, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Visit, s1, pinned({ selects: ["id", path] })), PolicyErrorCode.FieldDeniedForSelect, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Visit, c1, pinned({ selects: [path] })), PolicyErrorCode.AllSelectsDenied);
      await expectPolicyError(() => run(ctx, Visit, s1, pinned({ orders: [{ sort: 1, field: path }] })), PolicyErrorCode.FieldDeniedForOrder, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Visit, c1, count(whereShape(cond("patientId", "In", [1, 2])), path)), PolicyErrorCode.FieldDeniedForGroup, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Visit, c1, pinned({ groupBy: { fields: ["reason"], aggregateBy: [{ field: path, alias: "m", aggregator: "Maximum" }] } })), PolicyErrorCode.FieldDeniedForAggregate, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Visit, c1, { conditionSets: [set(1, and(cond("patientId", "Equal", [1], 1), cond(path, "IsNotNull", [], 2)))] }), PolicyErrorCode.FieldDeniedForSegment, scopedNavigationSource);
    }
    const kept = await run(ctx, Visit, c1, pinned({ selects: ["id", "patient.ssn", "patient.name"] }));
    assert.deepEqual(plain(kept.data), visitsOf(1, 2).map((v) => ({ id: v.id })));
    assertNoSecrets(kept);
    assertOnlyT1(kept);
  });

  it("06 Ward → beds.lockCode (a collection) is denied in every feature", async () => {
    const source = "QpDenied on Bed.lockCode";
    await expectPolicyError(() => run(ctx, Ward, c1, whereShape(cond("beds.lockCode", "Equal", ["LOCK-1"]))), PolicyErrorCode.FieldDeniedForWhere, source);
    await expectPolicyError(() => run(ctx, Ward, c1, whereShape(cond("Beds.LockCode", "StartsWith", ["LOCK-1"]))), PolicyErrorCode.FieldDeniedForWhere, source);
    await expectPolicyError(() => run(ctx, Ward, s1, { selects: ["id", "beds.lockCode"] }), PolicyErrorCode.FieldDeniedForSelect, source);
    await expectPolicyError(() => run(ctx, Ward, s1, { orders: [{ sort: 1, field: "beds.lockCode", direction: "Descending" }] }), PolicyErrorCode.FieldDeniedForOrder, source);
    await expectPolicyError(() => run(ctx, Ward, c1, count({}, "beds.lockCode")), PolicyErrorCode.FieldDeniedForGroup, source);
    await expectPolicyError(() => run(ctx, Ward, c1, { groupBy: { fields: ["name"], aggregateBy: [{ field: "beds.lockCode", alias: "m", aggregator: "Minimum" }] } }), PolicyErrorCode.FieldDeniedForAggregate, source);
    await expectPolicyError(() => run(ctx, Ward, c1, { conditionSets: [set(1, and(cond("beds.lockCode", "IsNotNull")))] }), PolicyErrorCode.FieldDeniedForSegment, source);
    const kept = await run(ctx, Ward, c1, { selects: ["id", "beds.lockCode", "beds.label"] });
    assert.deepEqual(plain(kept.data), wardOracle.wards.map((w) => ({ id: w.id, beds: bedsOf(w.id).map((b) => ({ label: b.label, id: b.id })) })));
    assertNoSecrets(kept);
  });

  it("06b Doctor → patients.* (a collection of the tenant-scoped Patient) is denied in every feature", async () => {
    for (const path of ["patients.ssn", "Patients.Ssn", "patients.name", "patients.tenantId"]) {
      await expectPolicyError(() => run(ctx, Doctor, c1, whereShape(cond(path, "Equal", ["SSN-1"]))), PolicyErrorCode.FieldDeniedForWhere, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Doctor, c1, whereShape(cond(path, "StartsWith", ["SSN-1"]))), PolicyErrorCode.FieldDeniedForWhere, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Doctor, s1, { selects: ["id", path] }), PolicyErrorCode.FieldDeniedForSelect, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Doctor, s1, { orders: [{ sort: 1, field: path, direction: "Descending" }] }), PolicyErrorCode.FieldDeniedForOrder, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Doctor, c1, count({}, path)), PolicyErrorCode.FieldDeniedForGroup, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Doctor, c1, { groupBy: { fields: ["name"], aggregateBy: [{ field: path, alias: "m", aggregator: "Minimum" }] } }), PolicyErrorCode.FieldDeniedForAggregate, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Doctor, c1, { conditionSets: [set(1, and(cond(path, "IsNotNull")))] }), PolicyErrorCode.FieldDeniedForSegment, scopedNavigationSource);
    }
    const kept = await run(ctx, Doctor, c1, { selects: ["id", "patients.ssn", "patients.internalNote", "patients.name"] });
    assert.deepEqual(plain(kept.data), oracle.doctors.map((d) => ({ id: d.id })));
    assertNoSecrets(kept);
    assertOnlyT1(kept);
  });

  it("07 round trips back to a denied field (Bed → ward.beds.lockCode, Ward → beds.ward.accessCode) are denied", async () => {
    for (const [entity, path, source] of [[Bed, "ward.beds.lockCode", "QpDenied on Bed.lockCode"], [Ward, "beds.ward.accessCode", "QpDenied on Ward.accessCode"], [Bed, "ward.beds.ward.accessCode", "QpDenied on Ward.accessCode"]] as const) {
      const pin = entity === Bed ? [cond("wardId", "Equal", [1], 1)] : [];
      await expectPolicyError(() => run(ctx, entity, c1, whereShape(...pin, cond(path, "Equal", ["x"], 2))), PolicyErrorCode.FieldDeniedForWhere, source);
      await expectPolicyError(() => run(ctx, entity, s1, { ...whereShape(...pin, cond("id", "GreaterThan", [0], 2)), selects: ["id", path] }), PolicyErrorCode.FieldDeniedForSelect, source);
    }
    const dropped = await run(ctx, Bed, c1, { ...pinBeds(1), selects: ["id", "ward.beds.lockCode", "ward.beds.ward.accessCode"] });
    assert.deepEqual(plain(dropped.data), bedsOf(1).map((b) => ({ id: b.id })));
    assertNoSecrets(dropped);
  });

  it("07b round trips through the tenant-scoped Patient (Patient → visits.patient.*, doctor.patients.*) are denied", async () => {
    for (const path of ["visits.patient.ssn", "doctor.patients.ssn", "doctor.patients.internalNote", "visits.patient.doctor.secretCode", "visits.patient.name", "doctor.patients.id"]) {
      await expectPolicyError(() => run(ctx, Patient, c1, whereShape(cond(path, "Equal", ["x"]))), PolicyErrorCode.FieldDeniedForWhere, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Patient, s1, { selects: ["id", path] }), PolicyErrorCode.FieldDeniedForSelect, scopedNavigationSource);
    }
    const dropped = await run(ctx, Patient, c1, { selects: ["id", "visits.patient.ssn", "doctor.patients.internalNote", "doctor.patients.name"], page: { pageNumber: 1, pageSize: 5 } });
    assert.deepEqual(plain(dropped.data), t1.slice(0, 5).map((p) => ({ id: p.id })));
    assertNoSecrets(dropped);
    assertOnlyT1(dropped);
  });

  // ---- groups and Or ----------------------------------------------------------------------

  it("08 a denied field deep inside nested groups is still denied", async () => {
    const deep = subGroup("And", [cond("name", "StartsWith", ["Patient"])], [
      subGroup("Or", [cond("id", "GreaterThan", [0])], [
        subGroup("And", [], [subGroup("Or", [cond("id", "LessThan", [0], 1), cond("ssn", "Equal", ["SSN-1"], 2)])], 2),
      ]),
    ]);
    for (const context of both()) await expectPolicyError(() => run(ctx, Patient, context, { conditionGroup: deep }), PolicyErrorCode.FieldDeniedForWhere);
  });

  it("09 a denied field in an Or beside an always-true branch, or alone in a single-branch Or, is denied", async () => {
    await expectPolicyError(() => run(ctx, Patient, c1, { conditionGroup: or(cond("id", "GreaterThan", [0], 1), cond("ssn", "Equal", ["SSN-1"], 2)) }), PolicyErrorCode.FieldDeniedForWhere);
    await expectPolicyError(() => run(ctx, Patient, c1, { conditionGroup: or(cond("ssn", "IsNotNull")) }), PolicyErrorCode.FieldDeniedForWhere);
    await expectPolicyError(() => run(ctx, Patient, c1, { conditionGroup: or(cond("age", "GreaterThan", [0], 1), cond("name", "IsNotNull", [], 2)) }), PolicyErrorCode.FieldDeniedForWhere);
  });

  it("10 existence probes (IsNull / IsNotNull) and malformed values on denied fields are denied", async () => {
    for (const [entity, field, pin] of [
      [Patient, "ssn", null], [Patient, "doctor.secretCode", null], [Patient, "visits.billingCode", null], [Patient, "doctor", null],
      [Visit, "billingCode", 1], [Doctor, "secretCode", null], [Doctor, "patients.ssn", null], [Doctor, "patients.name", null], [Visit, "patient.name", 1],
      [Bed, "lockCode", 1], [Bed, "ward.accessCode", 1], [Ward, "beds.lockCode", null], [Ward, "accessCode", null],
    ] as const) {
      for (const operator of ["IsNull", "IsNotNull"]) {
        const pinField = entity === Bed ? "wardId" : "patientId";
        const conditions = pin === null ? [cond(field, operator, [], 1)] : [cond(pinField, "Equal", [pin], 1), cond(field, operator, [], 2)];
        await expectPolicyError(() => run(ctx, entity, c1, whereShape(...conditions)), PolicyErrorCode.FieldDeniedForWhere);
      }
    }
    await expectPolicyError(() => run(ctx, Patient, c1, whereShape(cond("ssn", "Between", ["a", "b"], 1, "DateTime"))), PolicyErrorCode.FieldDeniedForWhere);
    await expectPolicyError(() => run(ctx, Patient, c1, whereShape(cond("age", "In", ["x", "y"], 1, "Boolean"))), PolicyErrorCode.FieldDeniedForWhere);
  });

  // ---- segments and summaries -------------------------------------------------------------

  it("11 Segment sets, orders and selects cannot use denied fields", async () => {
    const anySet = set(1, and(cond("id", "GreaterThan", [0])));
    await expectPolicyError(() => run(ctx, Patient, c1, { conditionSets: [anySet, set(2, and(cond("SSN", "Equal", ["SSN-1"])), "Union")] }), PolicyErrorCode.FieldDeniedForSegment);
    await expectPolicyError(() => run(ctx, Visit, c1, { conditionSets: [set(1, and(cond("patientId", "Equal", [1], 1), cond("patient.ssn", "IsNotNull", [], 2)))] }), PolicyErrorCode.FieldDeniedForSegment, scopedNavigationSource);
    await expectPolicyError(() => run(ctx, Bed, c1, { conditionSets: [set(1, and(cond("wardId", "Equal", [1]))), set(2, and(cond("wardId", "Equal", [1], 1), cond("ward.accessCode", "IsNotNull", [], 2)), "Union")] }), PolicyErrorCode.FieldDeniedForSegment, "QpDenied on Ward.accessCode");
    await expectPolicyError(() => run(ctx, Patient, c1, { conditionSets: [anySet, set(2, and(cond("age", "GreaterThan", [30])), "Except")] }), PolicyErrorCode.FieldDeniedForWhere);
    await expectPolicyError(() => run(ctx, Patient, s1, { conditionSets: [anySet], orders: [{ sort: 1, field: "ssn" }] }), PolicyErrorCode.FieldDeniedForOrder);
    await expectPolicyError(() => run(ctx, Patient, s1, { conditionSets: [anySet], selects: ["id", "ssn"] }), PolicyErrorCode.FieldDeniedForSelect);
    const dropped = await run(ctx, Patient, c1, { conditionSets: [anySet], orders: [{ sort: 1, field: "ssn", direction: "Descending" }], selects: ["id", "ssn", "internalNote"] });
    assert.deepEqual(plain(dropped.data), t1.map((p) => ({ id: p.id })), "primary-key order, no denied member");
    assertNoSecrets(dropped);
  });

  it("12 Summary group, aggregate (every aggregator), having and order cannot use denied fields", async () => {
    for (const field of ["ssn", "SSN", "doctor.secretCode", "visits.billingCode", "ward", "salary", "doctor"]) {
      await expectPolicyError(() => run(ctx, Patient, c1, count({}, field)), PolicyErrorCode.FieldDeniedForGroup);
    }
    for (const aggregator of ["Count", "CountDistinct", "Minimum", "Maximum", "FirstOrDefault", "LastOrDefault", 4, "5"]) {
      await expectPolicyError(() => run(ctx, Patient, c1, { groupBy: { fields: ["diagnosis"], aggregateBy: [{ field: "ssn", alias: "x", aggregator }] } }), PolicyErrorCode.FieldDeniedForAggregate);
    }
    for (const [field, aggregator] of [["salary", "Sumation"], ["salary", "Average"], ["ward", "CountDistinct"], ["doctor.secretCode", "Count"]]) {
      await expectPolicyError(() => run(ctx, Patient, c1, { groupBy: { fields: ["diagnosis"], aggregateBy: [{ field, alias: "x", aggregator }] } }), PolicyErrorCode.FieldDeniedForAggregate);
    }
    // Having names only aliases: naming the field is an error; aggregating it is the policy check.
    await expectLogicError(() => run(ctx, Patient, c1, { ...count({}, "diagnosis"), having: and(cond("ssn", "Equal", ["SSN-1"])) }), "HavingField[ssn]MustExistInAggregateByAliases");
    await expectPolicyError(() => run(ctx, Patient, c1, { groupBy: { fields: ["diagnosis"], aggregateBy: [{ field: "ssn", alias: "top", aggregator: "Maximum" }] }, having: and(cond("top", "StartsWith", ["SSN-1"])) }), PolicyErrorCode.FieldDeniedForAggregate);
    // An order on a field that is neither a key nor an alias is refused, never run.
    for (const context of both()) {
      await assert.rejects(() => run(ctx, Patient, context, { ...count({}, "diagnosis"), orders: [{ sort: 1, field: "ssn", direction: "Descending" }] }), LogicException);
    }
  });

  // ---- orders and selects -----------------------------------------------------------------

  it("13 ordering by a denied field: Strict refuses (3); Convenience's rows keep primary-key order (no ranking leak)", async () => {
    for (const field of ["ssn", "SSN", "doctor.secretCode", "visits.billingCode", "doctor", "diagnosis"]) {
      await expectPolicyError(() => run(ctx, Patient, s1, { orders: [{ sort: 1, field, direction: "Descending" }] }), PolicyErrorCode.FieldDeniedForOrder);
      const result = await run(ctx, Patient, c1, { orders: [{ sort: 1, field, direction: "Descending" }], selects: ["id"] });
      assert.deepEqual(ids(result), idsOf(t1), field);
    }
    // Through an unscoped navigation: Bed ordered by ward.accessCode descending would put ward 2's beds first.
    await expectPolicyError(() => run(ctx, Bed, s1, { ...pinBeds(1, 2), orders: [{ sort: 1, field: "ward.accessCode", direction: "Descending" }] }), PolicyErrorCode.FieldDeniedForOrder);
    const beds = await run(ctx, Bed, c1, { ...pinBeds(1, 2), orders: [{ sort: 1, field: "ward.accessCode", direction: "Descending" }], selects: ["id"] });
    assert.deepEqual(ids(beds), idsOf(bedsOf(1, 2)));
    // ssn order would differ from primary-key order ("SSN-10" < "SSN-2"): the oracle has teeth.
    assert.notDeepEqual([...t1].sort((a, b) => (a.ssn < b.ssn ? 1 : -1)).map((p) => p.id), idsOf(t1));
  });

  it("14 selecting denied members through a relation never returns them", async () => {
    for (const path of ["doctor.secretCode", "visits.billingCode", "Doctor.SecretCode", "doctor.patients.ssn"]) {
      await expectPolicyError(() => run(ctx, Patient, s1, { selects: ["id", path] }), PolicyErrorCode.FieldDeniedForSelect);
      const result = await run(ctx, Patient, c1, { selects: ["id", path] }, { dynamic: true });
      assert.deepEqual(result.data, t1.map((p) => ({ id: p.id })));
      assertNoSecrets(result);
    }
    for (const path of ["ward.accessCode", "Ward.AccessCode", "ward.beds.lockCode"]) {
      await expectPolicyError(() => run(ctx, Bed, s1, { ...pinBeds(2), selects: ["id", path] }), PolicyErrorCode.FieldDeniedForSelect);
      const result = await run(ctx, Bed, c1, { ...pinBeds(2), selects: ["id", path] }, { dynamic: true });
      assert.deepEqual(result.data, bedsOf(2).map((b) => ({ id: b.id })));
      assertNoSecrets(result);
    }
  });

  it("15 whole-relation and whole-object selects leave every denied member out", async () => {
    const patients = await run(ctx, Patient, s1, { selects: ["id", "visits"], page: { pageNumber: 1, pageSize: 8 } });
    assert.deepEqual(plain(patients.data), t1.slice(0, 8).map((p) => ({ id: p.id, visits: visitsOf(p.id).map((v) => ({ id: v.id, patientId: v.patientId, reason: v.reason })) })));
    assertNoSecrets(patients);
    const beds = await run(ctx, Bed, s1, { ...pinBeds(1, 2), selects: ["ward", "id"] }, { dynamic: true });
    assert.deepEqual(beds.data, bedsOf(1, 2).map((b) => ({ id: b.id, ward: wardDefaultRow(wardOf(b.wardId)) })));
    assertNoSecrets(beds);
    const wards = await run(ctx, Ward, s1, { selects: ["id", "beds"] });
    assert.deepEqual(plain(wards.data), wardOracle.wards.map((w) => ({ id: w.id, beds: bedsOf(w.id).map(bedDefaultRow) })));
    assertNoSecrets(wards);
    for (const ward of wards.data as { beds: Row[] }[]) for (const b of ward.beds) assert.ok(!("lockCode" in b) && !("serialNo" in b), JSON.stringify(b));
    await expectPolicyError(() => run(ctx, Patient, s1, { selects: ["doctor"] }), PolicyErrorCode.FieldDeniedForSelect);
    await expectPolicyError(() => run(ctx, Patient, c1, { selects: ["doctor"] }), PolicyErrorCode.AllSelectsDenied);
    // Whole Patient objects reached by navigation are the scoped navigation: dropped (Convenience) or 2 (Strict), never expanded.
    await expectPolicyError(() => run(ctx, Visit, s1, { ...whereShape(cond("patientId", "In", [1, 2, 5])), selects: ["patient", "id"] }, { dynamic: true }), PolicyErrorCode.FieldDeniedForSelect, scopedNavigationSource);
    await expectPolicyError(() => run(ctx, Doctor, s1, { selects: ["id", "patients"] }), PolicyErrorCode.FieldDeniedForSelect, scopedNavigationSource);
    const visits = await run(ctx, Visit, c1, { ...whereShape(cond("patientId", "In", [1, 2, 5])), selects: ["patient", "id"] }, { dynamic: true });
    assert.deepEqual(visits.data, visitsOf(1, 2, 5).map((v) => ({ id: v.id })));
    const doctors = await run(ctx, Doctor, c1, { selects: ["id", "patients"] });
    assert.deepEqual(plain(doctors.data), oracle.doctors.map((d) => ({ id: d.id })));
    for (const result of [visits, doctors]) {
      assertNoSecrets(result);
      assertOnlyT1(result.data);
    }
  });

  // ---- JSON tricks ------------------------------------------------------------------------

  it("16 JSON key case tricks (\"FIELD\", \"Field\", duplicate keys) reach nothing denied", async () => {
    const json = (field: string, key = "Field") => `{"ConditionGroup":{"CONNECTOR":"And","conditions":[{"SORT":1,"${key}":"${field}","DataType":"Text","OPERATOR":"Equal","Values":["SSN-1"]}]}}`;
    for (const key of ["Field", "FIELD", "field", "fIeLd"]) {
      for (const field of ["ssn", "SSN"]) await expectPolicyError(() => run(ctx, Patient, c1, json(field, key)), PolicyErrorCode.FieldDeniedForWhere);
    }
    await expectLogicError(() => run(ctx, Patient, c1, '{"conditionGroup":{"connector":"And","conditions":[{"sort":1,"field":"name","Field":"ssn","operator":"IsNotNull","values":[]}]}}'), "UnknownMember");
    await expectLogicError(() => run(ctx, Patient, c1, '{"selects":["id"],"SELECTS":["ssn"]}'), "UnknownMember");
    await expectPolicyError(() => run(ctx, Patient, s1, '{"SELECTS":["id","Ssn"]}'), PolicyErrorCode.FieldDeniedForSelect);
    await expectPolicyError(() => run(ctx, Patient, c1, '{"Selects":["ssn"]}'), PolicyErrorCode.AllSelectsDenied);
    await expectPolicyError(() => run(ctx, Patient, s1, '{"ORDERS":[{"Sort":1,"FIELD":"ssn","DIRECTION":"Descending"}]}'), PolicyErrorCode.FieldDeniedForOrder);
    await expectPolicyError(() => run(ctx, Patient, c1, '{"GroupBy":{"Fields":["SSN"],"AggregateBy":[{"Alias":"n","Aggregator":"Count"}]}}'), PolicyErrorCode.FieldDeniedForGroup);
    await expectPolicyError(() => run(ctx, Patient, c1, '{"ConditionSets":[{"Sort":1,"ConditionGroup":{"Conditions":[{"Field":"ssn","Operator":"IsNotNull"}]}}]}'), PolicyErrorCode.FieldDeniedForSegment);
  });

  it("17 enum positions cannot smuggle a refused operator, connector or aggregator", async () => {
    // Operator 4 = Contains, 8 = StartsWith, 1 = IEqual; Equal (0) and In (16) are the allowed ones.
    for (const operator of [4, "4", 8, "8", 1]) await expectPolicyError(() => run(ctx, Patient, c1, whereShape(cond("mail", operator as never, ["p1"]))), PolicyErrorCode.OperatorNotAllowed);
    assert.deepEqual(ids(await run(ctx, Patient, c1, whereShape(cond("mail", 16 as never, ["p1@example.com", "p4@example.com"])))), [1]);
    // Connector 1 = Or around the forced predicate; Intersection 2 = Except; Aggregator 4 = Minimum.
    const orByPosition = await run(ctx, Patient, c1, { conditionGroup: { connector: 1, conditions: [cond("tenantId", 0 as never, ["t-2"], 1), cond("id", "GreaterThan", [0], 2)] }, selects: ["id", "tenantId"] });
    assertT1Rows(orByPosition, t1);
    const except = await run(ctx, Patient, c1, { conditionSets: [set(1, and(cond("id", "GreaterThan", [0]))), set(2, and(cond("tenantId", "Equal", ["t-1"])), 2)], selects: ["id", "tenantId"] });
    assertT1Rows(except, []);
    await expectPolicyError(() => run(ctx, Patient, c1, { groupBy: { fields: ["diagnosis"], aggregateBy: [{ field: "ssn", alias: "x", aggregator: 4 }] } }), PolicyErrorCode.FieldDeniedForAggregate);
  });

  // ---- the tenant scope -------------------------------------------------------------------

  it("18 asking for another tenant's rows directly returns none", async () => {
    for (const [operator, values, expected] of [
      ["Equal", ["t-2"], []], ["IEqual", ["T-2"], []], ["NotEqual", ["t-1"], []], ["In", ["t-1", "t-2"], t1], ["NotIn", ["t-1"], []],
      ["StartsWith", ["t-"], t1], ["Contains", ["2"], []], ["IsNotNull", [], t1], ["IsNull", [], []],
    ] as const) {
      for (const context of both()) {
        const result = await run(ctx, Patient, context, { ...whereShape(cond("tenantId", operator, [...values])), selects: ["id", "tenantId"] });
        assertT1Rows(result, expected);
      }
    }
  });

  it("19 an Or at the top cannot escape the forced predicate", async () => {
    for (const context of both()) {
      assertT1Rows(await run(ctx, Patient, context, { conditionGroup: or(cond("tenantId", "Equal", ["t-2"], 1), cond("id", "GreaterThan", [0], 2)), selects: ["id", "tenantId"] }), t1);
      assertT1Rows(await run(ctx, Patient, context, { conditionGroup: or(cond("tenantId", "Equal", ["t-2"], 1), cond("tenantId", "Equal", ["t-1"], 2)) }, { dynamic: true }), t1);
      assertT1Rows(await run(ctx, Patient, context, { conditionGroup: or(cond("tenantId", "Equal", ["t-2"])), selects: ["id", "tenantId"] }), []);
    }
  });

  it("20 a nested Or cannot escape the forced predicate", async () => {
    const nested = subGroup("And", [], [
      subGroup("Or", [cond("id", "GreaterThan", [0], 2)], [subGroup("Or", [cond("tenantId", "Equal", ["t-2"])], [], 1)], 1),
    ]);
    assertT1Rows(await run(ctx, Patient, c1, { conditionGroup: nested, selects: ["id", "tenantId"] }), t1);
    const deeper = subGroup("Or", [cond("tenantId", "Equal", ["t-2"], 1)], [subGroup("And", [cond("id", "LessThan", [11])], [subGroup("Or", [cond("tenantId", "NotEqual", ["t-1"], 1), cond("name", "IsNotNull", [], 2)])])]);
    assertT1Rows(await run(ctx, Patient, s1, { conditionGroup: deeper, selects: ["id", "tenantId"] }), t1.filter((p) => p.id < 11));
  });

  it("21 an Or of always-true conditions cannot escape the forced predicate", async () => {
    for (const group of [
      or(cond("id", "GreaterThan", [0], 1), cond("id", "LessThanOrEqual", [0], 2), cond("tenantId", "IsNotNull", [], 3)),
      or(cond("name", "IsNotNull", [], 1), cond("name", "IsNull", [], 2)),
      or(cond("tenantId", "NotEqual", ["nobody"], 1), cond("tenantId", "Equal", ["t-2"], 2)),
      or(cond("name", "Contains", [""], 1), cond("id", "NotIn", [-1], 2)),
    ]) {
      assertT1Rows(await run(ctx, Patient, c1, { conditionGroup: group, selects: ["id", "tenantId", "name"] }), t1);
    }
  });

  it("22 a Segment Union with a set matching another tenant adds nothing of it", async () => {
    const result = await run(ctx, Patient, c1, { conditionSets: [set(1, and(cond("id", "LessThanOrEqual", [5]))), set(2, and(cond("tenantId", "Equal", ["t-2"])), "Union"), set(3, or(cond("tenantId", "NotEqual", ["t-1"], 1), cond("id", "GreaterThan", [38], 2)), "Union")], selects: ["id", "tenantId"] });
    assertT1Rows(result, t1.filter((p) => p.id <= 5 || p.id > 38));
  });

  it("23 a Segment Except / Intersect cannot produce another tenant's rows", async () => {
    for (const context of both()) {
      assertT1Rows(await run(ctx, Patient, context, { conditionSets: [set(1, and(cond("id", "GreaterThan", [0]))), set(2, and(cond("tenantId", "Equal", ["t-1"])), "Except")], selects: ["id", "tenantId"] }), []);
      assertT1Rows(await run(ctx, Patient, context, { conditionSets: [set(1, and(cond("tenantId", "Equal", ["t-2"]))), set(2, and(cond("id", "GreaterThan", [0])), "Intersect")], selects: ["id", "tenantId"] }), []);
      assertT1Rows(await run(ctx, Patient, context, { conditionSets: [set(1, or(cond("tenantId", "Equal", ["t-2"], 1), cond("id", "LessThan", [9], 2))), set(2, and(cond("id", "LessThan", [5])), "Except")], selects: ["id", "tenantId"] }), t1.filter((p) => p.id >= 5 && p.id < 9));
    }
  });

  it("24 Summary totals and groups count only the caller's tenant", async () => {
    const byTenant = await run(ctx, Patient, c1, count(whereShape(cond("tenantId", "In", ["t-1", "t-2"])), "tenantId"));
    assert.deepEqual(byTenant.data, [{ tenantId: "t-1", n: t1.length }]);
    const stats = await run(ctx, Patient, c1, {
      conditionGroup: or(cond("tenantId", "Equal", ["t-2"], 1), cond("id", "GreaterThan", [0], 2)),
      groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }, { alias: "ages", field: "age", aggregator: "Sumation" }, { alias: "maxId", field: "id", aggregator: "Maximum" }] },
    });
    assert.deepEqual(stats.data, ["asthma", "cold", "flu"].map((d) => {
      const rows = t1.filter((p) => p.diagnosis === d);
      return { diagnosis: d, n: rows.length, ages: rows.reduce((s, p) => s + p.age, 0), maxId: Math.max(...rows.map((p) => p.id)) };
    }));
    assert.equal(stats.totalCount, 3);
    const t2Only = await run(ctx, Patient, c1, count(whereShape(cond("tenantId", "Equal", ["t-2"])), "diagnosis"));
    assert.deepEqual([t2Only.data, t2Only.totalCount], [[], 0]);
  });

  it("25 getQueryString under a forced predicate is refused in every shape and tier (the value would leak)", async () => {
    for (const context of both()) {
      await expectPolicyError(() => run(ctx, Patient, context, { selects: ["id"] }, { queryString: true }), PolicyErrorCode.QueryStringDenied);
      await expectPolicyError(() => run(ctx, Patient, context, {}, { queryString: true, dynamic: true }), PolicyErrorCode.QueryStringDenied);
      await expectPolicyError(() => run(ctx, Patient, context, { conditionSets: [set(1, and(cond("id", "GreaterThan", [0])))] }, { queryString: true }), PolicyErrorCode.QueryStringDenied);
      await expectPolicyError(() => run(ctx, Patient, context, count({}, "diagnosis"), { queryString: true }), PolicyErrorCode.QueryStringDenied);
    }
    await expectPolicyError(() => run(ctx, Visit, s1, whereShape(cond("patientId", "Equal", [1])), { queryString: true }), PolicyErrorCode.QueryStringDenied);
  });

  it("26 a raw QueryBuilder (or a tagged array) of a requirePolicy entity through unguarded functions → PolicyRequired (10)", async () => {
    const attempts: [string, () => unknown][] = [];
    if (ctx.target === "memory") {
      const tagged = inMemory(Patient, ctx.data().patients);
      const empty = inMemory(Patient, []);
      attempts.push(["toList tagged", () => toList(tagged, {})], ["toList empty tagged", () => toList(empty, {})], ["toListDynamic tagged", () => toListDynamic(tagged, { selects: ["tenantId"] })]);
    } else {
      const qb = () => ctx.dataSource().getRepository(Patient).createQueryBuilder("p");
      const scoped = () => qb().where("p.tenantId = :t", { t: "t-1" });
      const joined = () => ctx.dataSource().getRepository(Patient).createQueryBuilder("p").leftJoin("p.doctor", "d");
      for (const [label, source] of [["plain", qb], ["pre-scoped", scoped], ["joined", joined]] as const) {
        attempts.push(
          [`toListAsync ${label}`, () => toListAsync(source(), { selects: ["ssn"] })],
          [`toListAsyncDynamic ${label}`, () => toListAsyncDynamic(source(), {})],
          [`toListAsync summary ${label}`, () => toListAsync(source(), count({}, "tenantId"))],
          [`where ${label}`, () => where(source(), cond("ssn", "IsNotNull"))],
          [`order ${label}`, () => order(source(), [{ sort: 1, field: "ssn" }])],
          [`page ${label}`, () => page(source(), { pageNumber: 1, pageSize: 1 })],
          [`select ${label}`, () => select(source(), ["ssn"])],
          [`selectDynamic ${label}`, () => selectDynamic(source(), ["ssn"])],
          [`filter ${label}`, () => filter(source(), {})],
          [`filterDynamic ${label}`, () => filterDynamic(source(), '{"selects":["ssn"]}')],
          [`summary ${label}`, () => summary(source(), count({}, "tenantId") as never)],
          [`group ${label}`, () => group(source(), { fields: ["tenantId"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } as never)],
        );
      }
    }
    for (const [label, attempt] of attempts) {
      await expectPolicyError(async () => attempt(), PolicyErrorCode.PolicyRequired).catch((error: Error) => {
        throw new Error(`${label}: ${error.message}`);
      });
    }
  });

  it("27 a prepared context cannot be re-pointed at another tenant (an edited context is unprepared, 18)", async () => {
    for (const context of [
      c1.withValue("tenantId", "t-2"),
      c1.withSubject(QpSubjectKind.Tenant, "t-2"),
      s1.withValue("other", 1),
      new QpPolicyContext(c1.subjects, new Map([["tenantId", "t-2"]]), {}),
      Object.assign(Object.create(QpPolicyContext.prototype) as QpPolicyContext, { values: new Map([["tenantId", "t-2"]]), subjects: [], preparedBy: null }),
    ]) {
      await expectPolicyError(async () => run(ctx, Patient, context, {}), PolicyErrorCode.PolicyContextNotPrepared);
      await expectPolicyError(async () => run(ctx, Patient, context, count({}, "tenantId")), PolicyErrorCode.PolicyContextNotPrepared);
    }
    // The prepared context itself is unchanged and still scoped to t-1.
    assertT1Rows(await run(ctx, Patient, c1, { selects: ["id", "tenantId"] }), t1);
    assert.throws(() => { (c1 as { values: unknown }).values = new Map([["tenantId", "t-2"]]); }, TypeError);
  });

  it("28 context values that look like other tenants or like SQL match nothing of t-2", async () => {
    for (const value of [["t-1", "t-2"], "t-1' OR '1'='1", "t-1\" OR \"1\"=\"1", "t-1') OR ('1'='1", "%", "t-%", "t-_", "t-1%", "*"]) {
      const context = await convenience.prepareAsync(new QpPolicyContext().withValue("tenantId", value));
      let result: Guarded<Row> | undefined;
      try {
        result = await run(ctx, Patient, context, { selects: ["id", "tenantId", "name"] });
      } catch (error) {
        assert.ok(error instanceof LogicException, `${JSON.stringify(value)}: ${String(error)}`);
        continue;
      }
      assert.ok(result.data.every((row) => row.tenantId !== "t-2"), `${JSON.stringify(value)} reached t-2: ${JSON.stringify(result.data.slice(0, 3))}`);
      assert.ok(!JSON.stringify(result.data).includes("t-2"));
    }
  });

  // 29 and 30 need a QueryBuilder source: database targets only.
  if (ctx.target !== "memory") it("29 a source QueryBuilder's own conditions cannot widen the forced scope (its WHERE is AND-ed as a whole)", async () => {
    const repo = () => ctx.dataSource().getRepository(Patient);
    const widening = [
      () => repo().createQueryBuilder("p").where("p.id > 0 OR p.tenantId = :t", { t: "t-2" }),
      () => repo().createQueryBuilder("p").where("p.tenantId = :t", { t: "t-2" }).orWhere("p.id > 0"),
    ];
    for (const source of widening) {
      for (const context of both()) {
        assertT1Rows((await applyPolicy(source(), context).toListAsync({ selects: ["id", "tenantId"] })) as unknown as Guarded<Row>, t1);
        assertT1Rows((await applyPolicy(source(), context).toListAsync({ conditionSets: [set(1, and(cond("id", "GreaterThan", [0])))], selects: ["id", "tenantId"] })) as unknown as Guarded<Row>, t1);
        const grouped = (await applyPolicy(source(), context).toListAsync(count({}, "tenantId"))) as unknown as Guarded<Row>;
        assert.deepEqual(grouped.data, [{ tenantId: "t-1", n: t1.length }]);
      }
    }
  });

  if (ctx.target !== "memory") it("30 a source QueryBuilder scoped to another tenant gives nothing (forced AND the builder's own WHERE)", async () => {
    const source = () => ctx.dataSource().getRepository(Patient).createQueryBuilder("p").where("p.tenantId = :t", { t: "t-2" });
    assertT1Rows((await applyPolicy(source(), c1).toListAsync({ selects: ["id", "tenantId"] })) as unknown as Guarded<Row>, []);
    assertT1Rows((await applyPolicy(source(), c1).toListAsyncDynamic({})) as unknown as Guarded<Row>, []);
  });

  it("31 a t-1 context never sees t-2 in any result: typed, dynamic, paged, segment, summary", async () => {
    const shapes: [Shape, readonly { id: number }[]][] = [
      [{}, t1],
      [{ selects: ["id", "tenantId", "name", "mail"] }, t1],
      [{ ...whereShape(cond("name", "StartsWith", ["Patient"])), orders: [{ sort: 1, field: "name", direction: "Descending" }] }, [...t1].reverse()],
      [{ ...whereShape(cond("doctor.name", "Equal", ["Dr 1"])), selects: ["id", "tenantId", "doctor.name"] }, t1.filter((p) => p.doctorId === 1)],
      [{ ...whereShape(cond("visits.reason", "Equal", ["followup"])), selects: ["id", "tenantId", "visits.reason"] }, t1.filter((p) => p.id % 3 === 2)],
      [{ conditionSets: [set(1, and(cond("id", "LessThan", [20]))), set(2, and(cond("id", "GreaterThan", [30])), "Union")], selects: ["id", "tenantId"] }, t1.filter((p) => p.id < 20 || p.id > 30)],
    ];
    for (const context of both()) {
      for (const [shape, expected] of shapes) {
        assertT1Rows(await run(ctx, Patient, context, shape), expected);
        if (!("conditionSets" in shape)) assertT1Rows(await run(ctx, Patient, context, shape, { dynamic: true }), expected);
      }
      // Paging through everything yields exactly the t-1 rows.
      const seen: number[] = [];
      for (let pageNumber = 1; pageNumber <= 6; pageNumber++) {
        const result = await run(ctx, Patient, context, { page: { pageNumber, pageSize: 7 }, selects: ["id", "tenantId"] });
        assertTenant(result.data);
        assert.equal(result.totalCount, t1.length);
        assert.equal(result.pageCount, Math.ceil(t1.length / 7));
        seen.push(...ids(result));
      }
      assert.deepEqual(seen, idsOf(t1));
    }
  });

  /**
   * The navigation into Patient is refused: Strict throws `strictCode`; Convenience throws
   * `convenienceCode`, or (null) drops it and returns the rest, with no value of tenant t-2
   * anywhere and the drop traced with the scope's source.
   */
  async function expectRefusedNavigation(entity: new () => object, shape: Shape, strictCode: PolicyErrorCode, convenienceCode: PolicyErrorCode | null, dropped: string[] = []): Promise<void> {
    for (const dynamic of [false, true]) {
      await expectPolicyError(() => run(ctx, entity, s1, shape, { dynamic }), strictCode, strictCode === PolicyErrorCode.AllSelectsDenied ? undefined : scopedNavigationSource);
      if (convenienceCode !== null) {
        await expectPolicyError(() => run(ctx, entity, c1, shape, { dynamic }), convenienceCode, convenienceCode === PolicyErrorCode.AllSelectsDenied ? undefined : scopedNavigationSource);
        continue;
      }
      const result = await run(ctx, entity, c1, shape, { dynamic });
      assertOnlyT1(result.data);
      assertNoSecrets(result);
      for (const field of dropped) {
        const entries = entriesFor(result.policy, field, "Select");
        // The source keeps the fail-closed rule's words and names why the hop is not tenant-safe (the source entity is not scoped).
        assert.deepEqual(entries.map((e) => [e.action, e.level, e.source.startsWith(scopedNavigationSource), e.enforced]), [["Dropped", 1, true, true]], `${field}: ${JSON.stringify(result.policy.entries)}`);
        assert.match(entries[0]!.source, /not proven tenant-safe: \w+\.\w+ → Patient: \w+ has no QpForceWhere/);
      }
    }
  }

  // Visit 40 belongs to patient 4 (tenant t-2); Doctor 1 has patients of both tenants.
  // Fail closed: Patient rows are reachable only as the root of a guarded query, so every one of
  // these navigations is refused (never filtered): the t-2 rows cannot leak through them.
  it("32a tenant-scoped Patient rows reached from Visit (patient.*) are refused, never shown", async () => {
    const t2Visits = whereShape(cond("patientId", "In", [4, 8]));
    // Select: Strict 2; Convenience drops the navigation (only the visit ids remain) or, with nothing left, 7.
    await expectRefusedNavigation(Visit, { ...t2Visits, selects: ["id", "patient.tenantId", "patient.name"] }, PolicyErrorCode.FieldDeniedForSelect, null, ["patient.tenantId", "patient.name"]);
    await expectRefusedNavigation(Visit, { ...t2Visits, selects: ["id", "patient"] }, PolicyErrorCode.FieldDeniedForSelect, null, ["patient"]);
    await expectRefusedNavigation(Visit, { ...t2Visits, selects: ["patient.tenantId", "patient.name"] }, PolicyErrorCode.FieldDeniedForSelect, PolicyErrorCode.AllSelectsDenied);
    await expectRefusedNavigation(Visit, { ...t2Visits, selects: ["patient"] }, PolicyErrorCode.FieldDeniedForSelect, PolicyErrorCode.AllSelectsDenied);
    const visits = await run(ctx, Visit, c1, { ...t2Visits, selects: ["id", "patient"] });
    assert.deepEqual(plain(visits.data), visitsOf(4, 8).map((v) => ({ id: v.id })), "the visits themselves (Visit is not scoped), without their patient");
    // Probing another tenant's rows by a condition across the navigation is refused (1), in both tiers.
    for (const context of both()) {
      await expectPolicyError(() => run(ctx, Visit, context, { ...whereShape(cond("patientId", "In", [4, 8, 12], 1), cond("patient.tenantId", "Equal", ["t-2"], 2)), selects: ["id"] }), PolicyErrorCode.FieldDeniedForWhere, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Visit, context, { ...whereShape(cond("patientId", "In", [4, 8, 12], 1), cond("patient.name", "StartsWith", ["Patient"], 2)), selects: ["id"] }), PolicyErrorCode.FieldDeniedForWhere, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Visit, context, count(t2Visits, "patient.tenantId")), PolicyErrorCode.FieldDeniedForGroup, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Visit, context, { ...t2Visits, groupBy: { fields: ["reason"], aggregateBy: [{ field: "patient.tenantId", alias: "t", aggregator: "Maximum" }] } }), PolicyErrorCode.FieldDeniedForAggregate, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Visit, context, { conditionSets: [set(1, and(cond("patientId", "In", [4, 8], 1), cond("patient.tenantId", "Equal", ["t-2"], 2)))] }), PolicyErrorCode.FieldDeniedForSegment, scopedNavigationSource);
    }
    // Ordering by the other tenant's values cannot rank the visits either.
    await expectPolicyError(() => run(ctx, Visit, s1, { ...t2Visits, orders: [{ sort: 1, field: "patient.name", direction: "Descending" }] }), PolicyErrorCode.FieldDeniedForOrder, scopedNavigationSource);
    const ranked = await run(ctx, Visit, c1, { ...whereShape(cond("patientId", "In", [4, 8])), orders: [{ sort: 1, field: "patient.name", direction: "Descending" }], selects: ["id"] });
    assert.deepEqual(ids(ranked), idsOf(visitsOf(4, 8)), "primary-key order: 40, 80, 81 (by name descending it would be 80, 81, 40)");
  });

  it("32b tenant-scoped Patient rows reached from Doctor (patients.*) are refused, never shown", async () => {
    await expectRefusedNavigation(Doctor, { selects: ["id", "patients.tenantId", "patients.name"] }, PolicyErrorCode.FieldDeniedForSelect, null, ["patients.tenantId", "patients.name"]);
    await expectRefusedNavigation(Doctor, { selects: ["id", "patients"] }, PolicyErrorCode.FieldDeniedForSelect, null, ["patients"]);
    await expectRefusedNavigation(Doctor, { selects: ["patients"] }, PolicyErrorCode.FieldDeniedForSelect, PolicyErrorCode.AllSelectsDenied);
    const doctors = await run(ctx, Doctor, c1, { selects: ["id", "patients"] });
    assert.deepEqual(plain(doctors.data), oracle.doctors.map((d) => ({ id: d.id })));
    for (const context of both()) {
      // "Which doctor has a t-2 patient" is itself a leak: refused.
      await expectPolicyError(() => run(ctx, Doctor, context, { ...whereShape(cond("patients.tenantId", "Equal", ["t-2"])), selects: ["id"] }), PolicyErrorCode.FieldDeniedForWhere, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Doctor, context, count({}, "patients.tenantId")), PolicyErrorCode.FieldDeniedForGroup, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Doctor, context, { groupBy: { fields: ["name"], aggregateBy: [{ field: "patients.id", alias: "n", aggregator: "CountDistinct" }] } }), PolicyErrorCode.FieldDeniedForAggregate, scopedNavigationSource);
    }
  });

  it("32c tenant-scoped Patient rows reached from a t-1 Patient (doctor.patients.*) are refused, never shown", async () => {
    const paged = { page: { pageNumber: 1, pageSize: 2 } };
    await expectRefusedNavigation(Patient, { ...paged, selects: ["id", "doctor.patients.tenantId", "doctor.patients.name"] }, PolicyErrorCode.FieldDeniedForSelect, null, ["doctor.patients.tenantId", "doctor.patients.name"]);
    await expectRefusedNavigation(Patient, { ...paged, selects: ["id", "doctor.patients"] }, PolicyErrorCode.FieldDeniedForSelect, null, ["doctor.patients"]);
    await expectRefusedNavigation(Patient, { ...paged, selects: ["doctor.patients.tenantId"] }, PolicyErrorCode.FieldDeniedForSelect, PolicyErrorCode.AllSelectsDenied);
    const rows = await run(ctx, Patient, c1, { ...paged, selects: ["id", "doctor.patients"] });
    assert.deepEqual(plain(rows.data), t1.slice(0, 2).map((p) => ({ id: p.id })));
    for (const context of both()) {
      await expectPolicyError(() => run(ctx, Patient, context, whereShape(cond("doctor.patients.tenantId", "Equal", ["t-2"]))), PolicyErrorCode.FieldDeniedForWhere, scopedNavigationSource);
      await expectPolicyError(() => run(ctx, Patient, context, count({}, "doctor.patients.tenantId")), PolicyErrorCode.FieldDeniedForGroup, scopedNavigationSource);
    }
  });

  it("32d dry run does not reopen the navigation into Patient: no value of tenant t-2 through patient.* or patients.*", async () => {
    // Dry run relaxes refusals and drops, never the tenant scope: a navigation into Patient
    // must still not return another tenant's rows (refused, or dropped while enforced).
    for (const tier of [QpTier.Convenience, QpTier.Strict]) {
      const dry = await tenantContext(new QpPolicyEngine({ dryRun: true, tier }));
      // [root, request, is a probe for t-2 rows (any row it returns is a leak)]
      for (const [entity, shape, probe] of [
        [Visit, { ...whereShape(cond("patientId", "In", [4, 8])), selects: ["id", "patient.tenantId", "patient.name"] }, false],
        [Visit, { ...whereShape(cond("patientId", "In", [4, 8])), selects: ["id", "patient"] }, false],
        [Doctor, { selects: ["id", "patients.tenantId", "patients.name"] }, false],
        [Patient, { selects: ["id", "doctor.patients.tenantId"], page: { pageNumber: 1, pageSize: 2 } }, false],
        [Visit, count(whereShape(cond("patientId", "In", [4, 8, 12, 16, 20, 24])), "patient.tenantId"), false],
        [Visit, { ...whereShape(cond("patientId", "In", [4, 8, 12], 1), cond("patient.tenantId", "Equal", ["t-2"], 2)), selects: ["id"] }, true],
        [Doctor, { ...whereShape(cond("patients.tenantId", "Equal", ["t-2"])), selects: ["id"] }, true],
      ] as [new () => object, Shape, boolean][]) {
        let result: Guarded<Row>;
        try {
          result = await run(ctx, entity, dry, shape);
        } catch (error) {
          assert.ok(error instanceof PolicyException, String(error));
          continue;
        }
        const label = `${tier} dry run, ${entity.name} ${JSON.stringify(shape)}`;
        assert.ok(!JSON.stringify(result.data).includes('"t-2"'), `${label}: a t-2 value leaked: ${JSON.stringify(result.data).slice(0, 300)}`);
        assertOnlyT1(result.data);
        if (probe) assert.deepEqual(result.data, [], `${label}: a probe for tenant t-2 matched rows`);
      }
    }
  });

  it("33 the internal name of an aliased member never appears in results, traces or errors", async () => {
    const outputs: unknown[] = [
      await run(ctx, Patient, c1, {}),
      await run(ctx, Patient, c1, { ...whereShape(cond("mail", "In", ["p1@example.com"])), selects: ["mail"], orders: [{ sort: 1, field: "mail" }] }, { dynamic: true }),
      await run(ctx, Patient, c1, count({}, "mail")),
      // The navigation into Patient is dropped; its trace and reasons still name only public paths.
      await run(ctx, Visit, c1, { ...whereShape(cond("patientId", "Equal", [1])), selects: ["id", "patient", "patient.mail"] }),
      // Through unscoped navigations, both ways: whole objects and named members.
      await run(ctx, Bed, c1, { ...pinBeds(1, 2), selects: ["id", "ward", "ward.phone"] }),
      await run(ctx, Bed, c1, { ...pinBeds(1, 2), selects: ["ward"] }, { dynamic: true }),
      await run(ctx, Ward, c1, { ...whereShape(cond("beds.tag", "In", ["SN-1", "SN-2"])), selects: ["id", "beds"] }),
      await run(ctx, Ward, c1, { groupBy: { fields: ["phone"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } }),
      await run(ctx, Bed, c1, pinBeds(1)),
    ];
    const bed = outputs[5] as Guarded<Row>;
    assert.deepEqual(plain(bed.data), bedsOf(1, 2).map((b) => ({ ward: wardDefaultRow(wardOf(b.wardId)) })), "the aliased member comes back as phone");
    for (const attempt of [
      () => run(ctx, Patient, c1, whereShape(cond("mail", "Contains", ["x"]))),
      () => run(ctx, Patient, s1, whereShape(cond("MAIL", "NotEqual", ["x"]))),
      () => run(ctx, Visit, s1, { ...whereShape(cond("patientId", "Equal", [1])), selects: ["id", "patient.mail"] }),
      () => run(ctx, Bed, c1, whereShape(cond("wardId", "Equal", [1], 1), cond("ward.phone", "Contains", ["555"], 2))),
      () => run(ctx, Ward, s1, whereShape(cond("beds.tag", "StartsWith", ["SN"]))),
      // A DataType that does not fit the field: the message names the field as the caller spelled it.
      () => run(ctx, Patient, c1, whereShape(cond("mail", "Equal", [5], 1, "Number"))),
      () => run(ctx, Ward, c1, whereShape(cond("PHONE", "Equal", [5], 1, "Number"))),
      () => run(ctx, Ward, c1, whereShape(cond("beds.tag", "Equal", [5], 1, "Number"))),
    ]) outputs.push(await attempt().catch((error: Error) => ({ message: error.message, path: (error as LogicException).path })));
    for (const output of outputs) {
      const text = JSON.stringify(output);
      assert.ok(!/email/i.test(text.replace(/@example\.com/g, "")), `the internal name "email" leaked: ${text.slice(0, 600)}`);
      assert.ok(!/phoneNumber|serialNo/i.test(text), `an internal name (phoneNumber, serialNo) leaked: ${text.slice(0, 600)}`);
    }
  });

  it("33b ... nor in a dry-run trace of a refused operator (its source names Patient.email)", async () => {
    const dry = await tenantContext(new QpPolicyEngine({ dryRun: true }));
    const result = await run(ctx, Patient, dry, { ...whereShape(cond("mail", "Contains", ["p1@"])), selects: ["id", "mail"] });
    assert.deepEqual(plain(result.data), [{ id: 1, mail: "p1@example.com" }]);
    const text = JSON.stringify(result.policy);
    assert.ok(!/email/i.test(text), `the internal name "email" leaked: ${text}`);
  });

  it("34 dry run never relaxes the forced predicate", async () => {
    const dry = await tenantContext(new QpPolicyEngine({ dryRun: true, tier: QpTier.Strict }));
    assertT1Rows(await run(ctx, Patient, dry, { ...whereShape(cond("tenantId", "Equal", ["t-2"])), selects: ["id", "tenantId"] }), []);
    assertT1Rows(await run(ctx, Patient, dry, { conditionGroup: or(cond("tenantId", "Equal", ["t-2"], 1), cond("ssn", "IsNotNull", [], 2)), selects: ["id", "tenantId"] }), t1);
    assertT1Rows(await run(ctx, Patient, dry, { conditionSets: [set(1, and(cond("id", "GreaterThan", [0]))), set(2, and(cond("tenantId", "Equal", ["t-2"])), "Union")], selects: ["id", "tenantId"] }), t1);
    const grouped = await run(ctx, Patient, dry, count({}, "tenantId"));
    assert.deepEqual(grouped.data, [{ tenantId: "t-1", n: t1.length }]);
  });

  it("35 a t-2 context sees exactly t-2 (the scope is the context's, not a constant)", async () => {
    const c2 = await tenantContext(convenience, "t-2");
    const result = await run(ctx, Patient, c2, { conditionGroup: or(cond("tenantId", "Equal", ["t-1"], 1), cond("id", "GreaterThan", [0], 2)), selects: ["id", "tenantId"] });
    assert.deepEqual(ids(result), idsOf(t2));
    assertTenant(result.data, "t-2");
  });
});

