// The blocked-action table and every refusal of the policy layer, on every target (memory,
// SQLite, PostgreSQL, MariaDB), under Convenience and Strict: exact error codes, what is dropped
// and how the trace says so (field public path, feature, action, level, source). Expected rows
// are computed here from policyData(), never from the engine.
import assert from "node:assert/strict";
import {
  PolicyAction, PolicyErrorCode, QpPolicyContext, applyPolicy, QpPolicyEngine, QpTier, filter, filterDynamic, group, order, page, select,
  selectDynamic, summary, toList, toListAsync, toListAsyncDynamic, toListDynamic, where, type PolicyTrace,
} from "../../lib/index.js";
import { Doctor, Patient, Visit } from "./domain.js";
import { AliasClash, Bed, CaseTwin, Clinic, Ward } from "./more-domain.js";
import {
  type Guarded, type Shape, and, assertTenant, bedDefaultRow, bedsOf, bothTiers, cond, convenience, engineWith, entriesFor, expectEntry, expectLogicError,
  expectPolicyError, group as subGroup, idsOf, oracle, or, patientDefaultRow, plain, scopedNavigationSource, scopedNavigationTrace, strict, t1, t2, tenantContext, wardDefaultRow,
  wardOracle, whereShape,
} from "./helpers.js";
import { type PolicyTargetContext, forEachPolicyTarget } from "./policy-targets.js";

type Row = Record<string, unknown>;

/** Runs `shape` on Entity for this target under `context` (typed, or dynamic for a Filter). */
async function run<T = Row>(ctx: PolicyTargetContext, entity: new () => object, context: QpPolicyContext, shape: Shape, options: { dynamic?: boolean; queryString?: boolean } = {}): Promise<Guarded<T>> {
  const guarded = ctx.guard(entity as new () => Row, context);
  const result = options.dynamic ? await guarded.toListAsyncDynamic(shape as never, options.queryString ?? false) : await guarded.toListAsync(shape, options.queryString ?? false);
  return result as unknown as Guarded<T>;
}

const visitsOf = (...patientIds: number[]) => oracle.visits.filter((v) => patientIds.includes(v.patientId));
const ids = (result: Guarded<unknown>) => (result.data as { id: number }[]).map((row) => row.id);
const keysOf = (row: unknown) => Object.keys(row as object).sort();
const sorted = (keys: string[]) => [...keys].sort();
const count = (shape: Shape, field = "id") => ({ ...shape, groupBy: { fields: [field], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });
const pinVisits = (...patientIds: number[]) => whereShape(cond("patientId", patientIds.length === 1 ? "Equal" : "In", patientIds));
/** Bed carries QpRequireWhere on wardId, like Visit on patientId. */
const pinBeds = (...wardIds: number[]) => whereShape(cond("wardId", wardIds.length === 1 ? "Equal" : "In", wardIds));
const wardOf = (id: number) => wardOracle.wards.find((w) => w.id === id)!;
const allPatientIds = oracle.patients.map((p) => p.id);

/** Summary oracle: rows grouped by key, groups below the floor (5) hidden, sorted by key. */
function groupCounts<T>(rows: readonly T[], key: (row: T) => string | number | null, floor = 5): { key: string | number | null; n: number }[] {
  const counts = new Map<string | number | null, number>();
  for (const row of rows) counts.set(key(row), (counts.get(key(row)) ?? 0) + 1);
  return [...counts].filter(([, n]) => n >= floor).map(([k, n]) => ({ key: k, n })).sort((a, b) => (a.key === null ? -1 : b.key === null ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

forEachPolicyTarget("Policy: blocked-action table", (ctx) => {
  const contexts = new Map<string, QpPolicyContext>();
  before(async () => {
    contexts.set("Convenience", await tenantContext(convenience));
    contexts.set("Strict", await tenantContext(strict));
  });

  for (const { tier } of bothTiers) {
    const c = () => contexts.get(tier)!;

    describe(`${tier}`, () => {
      it("WHERE on a denied field throws FieldDeniedForWhere (1), whatever the operator", async () => {
        for (const [field, value, source] of [
          ["ssn", "SSN-1", "QpDenied on Patient.ssn"],
          ["age", 21, "QpNoWhere on Patient.age"],
          ["doctor.secretCode", "S1", "QpDenied on Doctor.secretCode"],
          ["visits.billingCode", "B0", "QpDenied on Visit.billingCode"],
        ] as const) {
          await expectPolicyError(() => run(ctx, Patient, c(), whereShape(cond(field, "Equal", [value]))), PolicyErrorCode.FieldDeniedForWhere, source);
          await expectPolicyError(() => run(ctx, Patient, c(), whereShape(cond(field, "IsNotNull", [], 1, typeof value === "number" ? "Number" : "Text"))), PolicyErrorCode.FieldDeniedForWhere, field);
        }
      });

      it("WHERE with an operator QpOperators refuses throws OperatorNotAllowed (8); allowed operators work", async () => {
        for (const [operator, values] of [["Contains", ["example"]], ["NotEqual", ["p1@example.com"]], ["IEqual", ["P1@EXAMPLE.COM"]], ["IsNull", []], ["StartsWith", ["p"]], ["NotIn", ["x"]]] as const) {
          await expectPolicyError(() => run(ctx, Patient, c(), whereShape(cond("mail", operator, [...values]))), PolicyErrorCode.OperatorNotAllowed, "mail");
        }
        const equal = await run(ctx, Patient, c(), whereShape(cond("mail", "Equal", ["p1@example.com"])));
        assert.deepEqual(ids(equal), [1]);
        const inList = await run(ctx, Patient, c(), whereShape(cond("mail", "In", ["p2@example.com", "p4@example.com", "p6@example.com"])));
        assert.deepEqual(ids(inList), [2, 6], "p4 belongs to tenant t-2");
      });

      it("ORDER on a denied field: Convenience drops it (trace Dropped), Strict throws FieldDeniedForOrder (3)", async () => {
        const shape = { orders: [{ sort: 1, field: "diagnosis", direction: "Ascending" }, { sort: 2, field: "name", direction: "Descending" }], selects: ["id", "name"] };
        if (tier === "Strict") {
          await expectPolicyError(() => run(ctx, Patient, c(), shape), PolicyErrorCode.FieldDeniedForOrder, "QpNoOrder on Patient.diagnosis");
          await expectPolicyError(() => run(ctx, Patient, c(), { orders: [{ sort: 1, field: "ssn" }] }), PolicyErrorCode.FieldDeniedForOrder, "ssn");
          return;
        }
        const result = await run<{ id: number }>(ctx, Patient, c(), shape);
        assert.deepEqual(ids(result), [...t1].sort((a, b) => b.name.localeCompare(a.name)).map((p) => p.id), "ordered by name only");
        expectEntry(result.policy, "diagnosis", "Order", { action: PolicyAction.Dropped, level: 1, source: "QpNoOrder on Patient.diagnosis", enforced: true });
        expectEntry(result.policy, "name", "Order", { action: PolicyAction.Allowed, enforced: true });
        const bySsn = await run(ctx, Patient, c(), { orders: [{ sort: 1, field: "ssn", direction: "Descending" }], selects: ["id"] });
        assert.deepEqual(ids(bySsn), idsOf(t1), "primary-key order, not ssn order");
        expectEntry(bySsn.policy, "ssn", "Order", { action: PolicyAction.Dropped, level: 1, source: "QpDenied on Patient.ssn" });
      });

      it("SELECT of a denied field: Convenience drops it (trace Dropped), Strict throws FieldDeniedForSelect (2)", async () => {
        const shape = { selects: ["id", "internalNote", "name"] };
        if (tier === "Strict") {
          await expectPolicyError(() => run(ctx, Patient, c(), shape), PolicyErrorCode.FieldDeniedForSelect, "QpNoSelect on Patient.internalNote");
          await expectPolicyError(() => run(ctx, Patient, c(), { selects: ["ssn", "id"] }, { dynamic: true }), PolicyErrorCode.FieldDeniedForSelect, "ssn");
          return;
        }
        const result = await run(ctx, Patient, c(), shape);
        assert.deepEqual(plain(result.data), t1.map((p) => ({ id: p.id, name: p.name })));
        assert.ok(result.data.every((row) => row instanceof Patient));
        expectEntry(result.policy, "internalNote", "Select", { action: PolicyAction.Dropped, level: 1, source: "QpNoSelect on Patient.internalNote", enforced: true });
        const dynamic = await run(ctx, Patient, c(), { selects: ["ssn", "id"] }, { dynamic: true });
        assert.deepEqual(dynamic.data, t1.map((p) => ({ id: p.id })));
        expectEntry(dynamic.policy, "ssn", "Select", { action: PolicyAction.Dropped, source: "QpDenied on Patient.ssn" });
      });

      it("every select dropped → AllSelectsDenied (7) under Convenience (never a fallback); Strict refuses the first (2)", async () => {
        for (const selects of [["ssn"], ["ssn", "internalNote"], ["doctor"], ["doctor.secretCode"], ["visits.billingCode", "SSN"]]) {
          const code = tier === "Strict" ? PolicyErrorCode.FieldDeniedForSelect : PolicyErrorCode.AllSelectsDenied;
          await expectPolicyError(() => run(ctx, Patient, c(), { selects }), code);
          await expectPolicyError(() => run(ctx, Patient, c(), { selects }, { dynamic: true }), code);
        }
        await expectPolicyError(() => run(ctx, Clinic, c(), { selects: ["address.doorCode", "note"] }), tier === "Strict" ? PolicyErrorCode.FieldDeniedForSelect : PolicyErrorCode.AllSelectsDenied);
      });

      it("GROUP BY a denied field throws FieldDeniedForGroup (4)", async () => {
        for (const [field, source] of [["ward", "QpNoGroup on Patient.ward"], ["salary", "QpDeny on Patient.salary"], ["ssn", "QpDenied on Patient.ssn"], ["doctor.secretCode", "QpDenied on Doctor.secretCode"]]) {
          await expectPolicyError(() => run(ctx, Patient, c(), count({}, field!)), PolicyErrorCode.FieldDeniedForGroup, source);
        }
      });

      it("AGGREGATE a denied field throws FieldDeniedForAggregate (5)", async () => {
        for (const [field, aggregator, source] of [
          ["salary", "Sumation", "QpDeny on Patient.salary"],
          ["ward", "Count", "QpNoAggregate on Patient.ward"],
          ["ssn", "CountDistinct", "QpDenied on Patient.ssn"],
          ["doctor.secretCode", "Minimum", "QpDenied on Doctor.secretCode"],
          ["visits.billingCode", "Maximum", "QpDenied on Visit.billingCode"],
        ]) {
          const shape = { groupBy: { fields: ["diagnosis"], aggregateBy: [{ field, alias: "x", aggregator }] } };
          await expectPolicyError(() => run(ctx, Patient, c(), shape), PolicyErrorCode.FieldDeniedForAggregate, source);
        }
      });

      it("a condition in a Segment set on a field denied for Segment → FieldDeniedForSegment (6); Where-denied in a set → 1", async () => {
        const segment = (conditionGroup: Shape, entity = "patient") => ({
          conditionSets: [
            { sort: 1, conditionGroup: and(cond("id", "GreaterThan", [0])) },
            { sort: 2, intersection: "Intersect", conditionGroup },
          ],
          ...(entity === "patient" ? { selects: ["id"] } : {}),
        });
        await expectPolicyError(() => run(ctx, Patient, c(), segment(and(cond("ssn", "Equal", ["SSN-1"])))), PolicyErrorCode.FieldDeniedForSegment, "ssn");
        await expectPolicyError(() => run(ctx, Patient, c(), segment(and(cond("age", "Equal", [21])))), PolicyErrorCode.FieldDeniedForWhere, "QpNoWhere on Patient.age");
        await expectPolicyError(() => run(ctx, Clinic, c(), segment(and(cond("rating", "Equal", [2])), "clinic")), PolicyErrorCode.FieldDeniedForSegment, "QpDeny on Clinic.rating");
        // The same field stays usable in a Filter's where.
        const filtered = await run(ctx, Clinic, c(), whereShape(cond("rating", "GreaterThan", [2])));
        assert.deepEqual(ids(filtered), [2, 3]);
      });

      it("a missing QpRequireWhere condition throws RequiredFilterMissing (11)", async () => {
        await expectPolicyError(() => run(ctx, Visit, c(), {}), PolicyErrorCode.RequiredFilterMissing, "patientId");
        await expectPolicyError(() => run(ctx, Visit, c(), whereShape(cond("reason", "Equal", ["checkup"]))), PolicyErrorCode.RequiredFilterMissing);
      });

      it("an exceeded cap throws CapExceeded (9)", async () => {
        await expectPolicyError(() => run(ctx, Patient, c(), { page: { pageNumber: 1, pageSize: 1001 } }), PolicyErrorCode.CapExceeded, "MaxPageSize");
      });

      it("a query above the cost budget throws QueryCostExceeded (19)", async () => {
        const shape = { conditionGroup: or(cond("notes", "IsNotNull", [], 1), cond("notes", "IsNotNull", [], 2), cond("notes", "IsNotNull", [], 3)) };
        await expectPolicyError(() => run(ctx, Patient, c(), shape), PolicyErrorCode.QueryCostExceeded, "1200");
      });

      it("the default projection is every root column the caller may select, the rest left out silently", async () => {
        const result = await run(ctx, Patient, c(), {});
        assert.deepEqual(plain(result.data), t1.map(patientDefaultRow));
        assert.ok(result.data.every((row) => row instanceof Patient));
        assert.equal(result.totalCount, t1.length);
        expectEntry(result.policy, "ssn", "Select", { action: PolicyAction.Dropped, level: 1, source: "QpDenied on Patient.ssn", enforced: true });
        expectEntry(result.policy, "internalNote", "Select", { action: PolicyAction.Dropped, level: 1, source: "QpNoSelect on Patient.internalNote", enforced: true });
        expectEntry(result.policy, "mail", "Select", { action: PolicyAction.Allowed, level: null });
        assert.equal(result.policy.tier, tier);
        assert.equal(result.policy.cost, 0, "the default projection costs nothing");
        const dynamic = await run(ctx, Patient, c(), {}, { dynamic: true });
        assert.deepEqual(dynamic.data, t1.map(patientDefaultRow));
        const visits = await run(ctx, Visit, c(), pinVisits(2, 5));
        assert.deepEqual(plain(visits.data), visitsOf(2, 5).map((v) => ({ id: v.id, patientId: v.patientId, reason: v.reason })));
        expectEntry(visits.policy, "billingCode", "Select", { action: PolicyAction.Dropped, source: "QpDenied on Visit.billingCode" });
        const doctors = await run(ctx, Doctor, c(), {});
        assert.deepEqual(plain(doctors.data), oracle.doctors.map((d) => ({ id: d.id, name: d.name })));
        const clinics = await run(ctx, Clinic, c(), {});
        assert.deepEqual(plain(clinics.data), ctx.data().clinics.map((k) => ({ id: k.id, name: k.name, address: { city: k.address.city, street: k.address.street }, rating: k.rating })));
        expectEntry(clinics.policy, "address.doorCode", "Select", { action: PolicyAction.Dropped, level: 1, source: "QpDenied on ClinicAddress.doorCode" });
        expectEntry(clinics.policy, "note", "Select", { action: PolicyAction.Dropped, level: 1 });
      });

      it("a whole relation or embedded select expands to its columns; denied columns inside are left out silently", async () => {
        const withVisits = await run(ctx, Patient, c(), { selects: ["id", "visits"], conditionGroup: and(cond("id", "LessThanOrEqual", [6])) });
        assert.deepEqual(plain(withVisits.data), t1.filter((p) => p.id <= 6).map((p) => ({ id: p.id, visits: visitsOf(p.id).map((v) => ({ id: v.id, patientId: v.patientId, reason: v.reason })) })));
        expectEntry(withVisits.policy, "visits.billingCode", "Select", { action: PolicyAction.Dropped, level: 1, source: "QpDenied on Visit.billingCode" });
        // A whole reference (Bed → ward, unscoped): its columns, the denied one left out, the aliased one under its public name.
        const withWard = await run(ctx, Bed, c(), { ...pinBeds(1, 2), selects: ["id", "ward"] });
        assert.deepEqual(plain(withWard.data), bedsOf(1, 2).map((b) => ({ id: b.id, ward: wardDefaultRow(wardOf(b.wardId)) })));
        expectEntry(withWard.policy, "ward.accessCode", "Select", { action: PolicyAction.Dropped, level: 1, source: "QpDenied on Ward.accessCode" });
        expectEntry(withWard.policy, "ward.phone", "Select", { action: PolicyAction.Allowed, level: null });
        assert.equal(entriesFor(withWard.policy, "ward.phoneNumber", "Select").length, 0, "the trace never names the internal member");
        // A whole collection (Ward → beds, unscoped), ordered by element primary key; ward 3 has none.
        const withBeds = await run(ctx, Ward, c(), { selects: ["id", "beds"] });
        assert.deepEqual(plain(withBeds.data), wardOracle.wards.map((w) => ({ id: w.id, beds: bedsOf(w.id).map(bedDefaultRow) })));
        expectEntry(withBeds.policy, "beds.lockCode", "Select", { action: PolicyAction.Dropped, level: 1, source: "QpDenied on Bed.lockCode" });
        expectEntry(withBeds.policy, "beds.tag", "Select", { action: PolicyAction.Allowed });
        // A whole reference into the tenant-scoped Patient is the navigation itself, denied: never expanded.
        if (tier === "Strict") await expectPolicyError(() => run(ctx, Visit, c(), { ...pinVisits(1, 2), selects: ["id", "patient"] }), PolicyErrorCode.FieldDeniedForSelect, scopedNavigationSource);
        else {
          const withPatient = await run(ctx, Visit, c(), { ...pinVisits(1, 2), selects: ["id", "patient"] });
          assert.deepEqual(plain(withPatient.data), visitsOf(1, 2).map((v) => ({ id: v.id })));
          expectEntry(withPatient.policy, "patient", "Select", { action: PolicyAction.Dropped, level: 1, source: scopedNavigationTrace("patient"), enforced: true });
          assert.equal(withPatient.policy.entries.filter((e) => e.field.startsWith("patient.")).length, 0, "the denied navigation is not expanded");
        }
        const address = await run(ctx, Clinic, c(), { selects: ["address"] });
        assert.deepEqual(plain(address.data), ctx.data().clinics.map((k) => ({ address: { city: k.address.city, street: k.address.street } })));
        expectEntry(address.policy, "address.doorCode", "Select", { action: PolicyAction.Dropped, source: "QpDenied on ClinicAddress.doorCode" });
        if (tier === "Strict") await expectPolicyError(() => run(ctx, Clinic, c(), { selects: ["address.doorCode", "name"] }), PolicyErrorCode.FieldDeniedForSelect, "doorCode");
        else {
          const named = await run(ctx, Clinic, c(), { selects: ["address.doorCode", "name"] });
          assert.deepEqual(plain(named.data), ctx.data().clinics.map((k) => ({ name: k.name })));
        }
      });

      it("QpDenied on a navigation denies only the navigation member: doctor (whole) is denied, doctor.name allowed, doctor.secretCode denied", async () => {
        const named = await run(ctx, Patient, c(), {
          conditionGroup: and(cond("doctor.name", "Equal", ["Dr 1"])),
          orders: [{ sort: 1, field: "doctor.name", direction: "Descending" }],
          selects: ["id", "doctor.name"],
        });
        // The doctor comes with its key (2.1.5 §4.1): Doctor.id is selectable.
        assert.deepEqual(plain(named.data), t1.filter((p) => p.doctorId === 1).map((p) => ({ id: p.id, doctor: { name: "Dr 1", id: 1 } })));
        expectEntry(named.policy, "doctor.name", "Where", { action: PolicyAction.Allowed });
        const ordered = await run(ctx, Patient, c(), { orders: [{ sort: 1, field: "doctor.name", direction: "Descending" }], selects: ["id"] });
        assert.deepEqual(ids(ordered), [...t1.filter((p) => p.doctorId === 2), ...t1.filter((p) => p.doctorId === 1)].map((p) => p.id));
        const grouped = await run(ctx, Patient, c(), count({}, "doctor.name"));
        assert.deepEqual(grouped.data, groupCounts(t1, (p) => `Dr ${p.doctorId}`).map((g) => ({ doctorName: g.key, n: g.n })));
        await expectPolicyError(() => run(ctx, Patient, c(), whereShape(cond("doctor.secretCode", "Equal", ["S1"]))), PolicyErrorCode.FieldDeniedForWhere, "QpDenied on Doctor.secretCode");
        if (tier === "Strict") {
          await expectPolicyError(() => run(ctx, Patient, c(), { selects: ["id", "doctor"] }), PolicyErrorCode.FieldDeniedForSelect, "QpDenied on Patient.doctor");
          await expectPolicyError(() => run(ctx, Patient, c(), { selects: ["id", "doctor.secretCode"] }), PolicyErrorCode.FieldDeniedForSelect, "QpDenied on Doctor.secretCode");
          return;
        }
        const whole = await run(ctx, Patient, c(), { selects: ["id", "doctor"] });
        assert.deepEqual(plain(whole.data), t1.map((p) => ({ id: p.id })));
        expectEntry(whole.policy, "doctor", "Select", { action: PolicyAction.Dropped, level: 1, source: "QpDenied on Patient.doctor" });
        const secret = await run(ctx, Patient, c(), { selects: ["id", "doctor.secretCode"] });
        assert.deepEqual(plain(secret.data), t1.map((p) => ({ id: p.id })));
        expectEntry(secret.policy, "doctor.secretCode", "Select", { action: PolicyAction.Dropped, source: "QpDenied on Doctor.secretCode" });
      });

      it("navigation into the tenant-scoped Patient fails closed: denied for the feature it is used for (1, dropped/2, dropped/3, 4, 5, 6)", async () => {
        const src = scopedNavigationSource;
        const strictTier = tier === "Strict";
        // Where → 1, whatever the member (even the key) and whatever the root.
        for (const [entity, pin, field, value] of [
          [Visit, [1, 2], "patient.name", "Patient 01"], [Visit, [1, 2], "patient.id", 1], [Visit, [1, 2], "Patient.TenantId", "t-1"], [Visit, [1, 2], "patient.doctor.name", "Dr 1"],
          [Doctor, null, "patients.name", "Patient 01"], [Doctor, null, "patients.tenantId", "t-1"],
          [Patient, null, "doctor.patients.id", 1], [Patient, null, "visits.patient.name", "Patient 01"],
        ] as const) {
          const conditions = pin ? [cond("patientId", "In", [...pin], 1), cond(field, "Equal", [value], 2)] : [cond(field, "Equal", [value], 1)];
          await expectPolicyError(() => run(ctx, entity, c(), whereShape(...conditions)), PolicyErrorCode.FieldDeniedForWhere, src);
          const probes = pin ? [cond("patientId", "In", [...pin], 1), cond(field, "IsNotNull", [], 2, typeof value === "number" ? "Number" : "Text")] : [cond(field, "IsNull", [], 1, typeof value === "number" ? "Number" : "Text")];
          await expectPolicyError(() => run(ctx, entity, c(), whereShape(...probes)), PolicyErrorCode.FieldDeniedForWhere, src);
        }
        // Select → Convenience drops (trace Dropped, level 1, the scope's source), Strict 2; nothing left → 7.
        for (const [entity, shape, navigations] of [
          [Visit, { ...pinVisits(1, 2), selects: ["id", "patient.name", "patient"] }, ["patient.name", "patient"]],
          [Doctor, { selects: ["id", "patients.name", "patients"] }, ["patients.name", "patients"]],
          [Patient, { selects: ["id", "doctor.patients.name", "visits.patient"] }, ["doctor.patients.name", "visits.patient"]],
        ] as const) {
          if (strictTier) {
            await expectPolicyError(() => run(ctx, entity, c(), shape), PolicyErrorCode.FieldDeniedForSelect, src);
            await expectPolicyError(() => run(ctx, entity, c(), shape, { dynamic: true }), PolicyErrorCode.FieldDeniedForSelect, src);
            continue;
          }
          const expected: readonly { id: number }[] = entity === Visit ? visitsOf(1, 2) : entity === Doctor ? oracle.doctors : t1;
          for (const dynamic of [false, true]) {
            const result = await run(ctx, entity, c(), shape, { dynamic });
            assert.deepEqual(plain(result.data), expected.map((row) => ({ id: row.id })), `${entity.name} ${JSON.stringify(shape.selects)}`);
            for (const field of navigations) expectEntry(result.policy, field, "Select", { action: PolicyAction.Dropped, level: 1, source: scopedNavigationTrace(field), enforced: true });
          }
          const only = { ...shape, selects: shape.selects.filter((f) => f !== "id") };
          await expectPolicyError(() => run(ctx, entity, c(), only), PolicyErrorCode.AllSelectsDenied);
        }
        // Order → Convenience drops (primary-key order, not the patient's name), Strict 3.
        const byName = { ...pinVisits(1, 2), orders: [{ sort: 1, field: "patient.name", direction: "Descending" }], selects: ["id"] };
        assert.notDeepEqual([...visitsOf(1, 2)].sort((a, b) => b.patientId - a.patientId || a.id - b.id).map((v) => v.id), idsOf(visitsOf(1, 2)), "the oracle has teeth");
        if (strictTier) {
          await expectPolicyError(() => run(ctx, Visit, c(), byName), PolicyErrorCode.FieldDeniedForOrder, src);
          await expectPolicyError(() => run(ctx, Doctor, c(), { orders: [{ sort: 1, field: "patients.name" }] }), PolicyErrorCode.FieldDeniedForOrder, src);
        } else {
          const ordered = await run(ctx, Visit, c(), byName);
          assert.deepEqual(ids(ordered), idsOf(visitsOf(1, 2)));
          expectEntry(ordered.policy, "patient.name", "Order", { action: PolicyAction.Dropped, level: 1, source: scopedNavigationTrace("patient.name"), enforced: true });
          const doctors = await run(ctx, Doctor, c(), { orders: [{ sort: 1, field: "patients.id", direction: "Ascending" }], selects: ["id"] });
          assert.deepEqual(ids(doctors), [1, 2], "applied, the order would put Dr 2 (patient 1) first");
        }
        // Group → 4, Aggregate → 5 (Summary keys and aggregated fields).
        await expectPolicyError(() => run(ctx, Visit, c(), count(pinVisits(1, 2), "patient.name")), PolicyErrorCode.FieldDeniedForGroup, src);
        await expectPolicyError(() => run(ctx, Doctor, c(), count({}, "patients.tenantId")), PolicyErrorCode.FieldDeniedForGroup, src);
        await expectPolicyError(() => run(ctx, Visit, c(), { ...pinVisits(1, 2), groupBy: { fields: ["reason"], aggregateBy: [{ alias: "n", field: "patient.id", aggregator: "Count" }] } }), PolicyErrorCode.FieldDeniedForAggregate, src);
        await expectPolicyError(() => run(ctx, Doctor, c(), { groupBy: { fields: ["name"], aggregateBy: [{ alias: "m", field: "patients.salary", aggregator: "Maximum" }] } }), PolicyErrorCode.FieldDeniedForAggregate, src);
        // Segment → 6 (a condition inside a set).
        await expectPolicyError(() => run(ctx, Visit, c(), { conditionSets: [{ sort: 1, conditionGroup: and(cond("patientId", "Equal", [1], 1), cond("patient.name", "IsNotNull", [], 2)) }] }), PolicyErrorCode.FieldDeniedForSegment, src);
        await expectPolicyError(() => run(ctx, Doctor, c(), { conditionSets: [{ sort: 1, conditionGroup: and(cond("id", "GreaterThan", [0])) }, { sort: 2, intersection: "Except", conditionGroup: and(cond("patients.tenantId", "Equal", ["t-2"])) }] }), PolicyErrorCode.FieldDeniedForSegment, src);
        // Paths that stay out of Patient are unaffected, from Patient as root too.
        const rooted = await run(ctx, Patient, c(), { ...whereShape(cond("doctor.name", "Equal", ["Dr 1"], 1), cond("visits.reason", "Equal", ["followup"], 2)), selects: ["id", "doctor.name", "visits.reason"] });
        assert.deepEqual(plain(rooted.data), t1.filter((p) => p.doctorId === 1 && p.id % 3 === 2).map((p) => ({ id: p.id, doctor: { name: "Dr 1", id: 1 }, visits: visitsOf(p.id).map((v) => ({ reason: v.reason, id: v.id })) })));
        const doctorNames = await run(ctx, Doctor, c(), { ...whereShape(cond("name", "Equal", ["Dr 2"])), selects: ["id", "name"] });
        assert.deepEqual(plain(doctorNames.data), [{ id: 2, name: "Dr 2" }]);
      });

      it("QpRequireWhere: a pinning condition on the root field, outside any Or with more than one branch", async () => {
        const v = (shape: Shape) => run(ctx, Visit, c(), { ...shape, selects: ["id"] });
        assert.deepEqual(ids(await v(pinVisits(1))), idsOf(visitsOf(1)));
        assert.deepEqual(ids(await v(pinVisits(1, 2))), idsOf(visitsOf(1, 2)));
        assert.deepEqual(ids(await v(whereShape(cond("patientId", "Equal", ["2"], 1, "Number"), cond("reason", "Equal", ["followup"], 2)))), [21]);
        // An Or with a single branch counts as And, also nested.
        assert.deepEqual(ids(await v({ conditionGroup: or(cond("patientId", "Equal", [2])) })), idsOf(visitsOf(2)));
        assert.deepEqual(ids(await v({ conditionGroup: subGroup("Or", [], [subGroup("And", [cond("patientId", "Equal", [5])])]) })), idsOf(visitsOf(5)));
        assert.deepEqual(ids(await v({ conditionGroup: subGroup("And", [cond("reason", "Equal", ["checkup"])], [subGroup("And", [cond("patientId", "In", [1, 2])])]) })), [10, 20]);
        const result = await v(pinVisits(1));
        const satisfied = entriesFor(result.policy, "patientId", "Where").filter((e) => e.source === "QpRequireWhere on Visit.patientId");
        assert.deepEqual(satisfied.map((e) => [e.action, e.level, e.enforced]), [[PolicyAction.Allowed, 1, true]], JSON.stringify(result.policy.entries));
        for (const shape of [
          whereShape(cond("patientId", "GreaterThan", [0])),
          whereShape(cond("patientId", "NotEqual", [1])),
          whereShape(cond("patientId", "NotIn", [1])),
          { conditionGroup: or(cond("patientId", "Equal", [1], 1), cond("patientId", "Equal", [2], 2)) },
          { conditionGroup: or(cond("patientId", "Equal", [1], 1), cond("reason", "Equal", ["checkup"], 2)) },
          { conditionGroup: subGroup("And", [cond("reason", "Equal", ["checkup"])], [subGroup("Or", [cond("patientId", "Equal", [1], 1), cond("id", "Equal", [10], 2)])]) },
          { conditionGroup: subGroup("Or", [cond("id", "Equal", [10])], [subGroup("And", [cond("patientId", "Equal", [1])])]) },
        ]) {
          await expectPolicyError(() => v(shape), PolicyErrorCode.RequiredFilterMissing, "patientId");
        }
        // A condition on the same key reached through a navigation does not pin the root field:
        // Bed → ward.id (unscoped) leaves Bed.wardId's requirement unmet.
        assert.deepEqual(ids(await run(ctx, Bed, c(), { ...pinBeds(2), selects: ["id"] })), idsOf(bedsOf(2)));
        await expectPolicyError(() => run(ctx, Bed, c(), { ...whereShape(cond("ward.id", "Equal", [1])), selects: ["id"] }), PolicyErrorCode.RequiredFilterMissing, "wardId");
        await expectPolicyError(() => run(ctx, Bed, c(), whereShape(cond("ward.name", "Equal", ["Ward 1"]))), PolicyErrorCode.RequiredFilterMissing, "wardId");
        // Visit → patient.id crosses into the tenant-scoped Patient: the navigation itself is denied (1), before the requirement.
        await expectPolicyError(() => v(whereShape(cond("patient.id", "Equal", [1]))), PolicyErrorCode.FieldDeniedForWhere, scopedNavigationSource);
      });

      it("QpRequireWhere in a Segment (every set) and a Summary (its conditionGroup)", async () => {
        const set = (sort: number, conditionGroup: Shape, intersection?: string) => ({ sort, conditionGroup, ...(intersection ? { intersection } : {}) });
        const both = await run(ctx, Visit, c(), { conditionSets: [set(1, and(cond("patientId", "Equal", [1]))), set(2, and(cond("patientId", "In", [2, 5])), "Union")], selects: ["id"] });
        assert.deepEqual(ids(both), idsOf(visitsOf(1, 2, 5)));
        await expectPolicyError(() => run(ctx, Visit, c(), { conditionSets: [set(1, and(cond("patientId", "Equal", [1]))), set(2, and(cond("reason", "Equal", ["followup"])), "Union")] }), PolicyErrorCode.RequiredFilterMissing);
        await expectPolicyError(() => run(ctx, Visit, c(), { conditionSets: [set(1, and(cond("reason", "Equal", ["followup"]))), set(2, and(cond("patientId", "Equal", [1])), "Intersect")] }), PolicyErrorCode.RequiredFilterMissing);
        await expectPolicyError(() => run(ctx, Visit, c(), count({}, "reason")), PolicyErrorCode.RequiredFilterMissing);
        const someIds = allPatientIds.slice(0, 10);
        const summed = await run(ctx, Visit, c(), count(whereShape(cond("patientId", "In", someIds)), "reason"));
        assert.deepEqual(summed.data, groupCounts(visitsOf(...someIds), (v) => v.reason).map((g) => ({ reason: g.key, n: g.n })));
      });

      it("QpRequireWhere must narrow: an In of every key no longer stands for the filter (CapExceeded at its values, MaxRequiredInValues 10) (#42)", async () => {
        assert.ok(allPatientIds.length > 10, "the attack needs more keys than the bound");
        const refusedAt = async (shape: Shape, entity: new () => object = Visit) => {
          const error = await expectPolicyError(() => run(ctx, entity, c(), shape), PolicyErrorCode.CapExceeded, "MaxRequiredInValues");
          return error.path;
        };
        // The attack: every patient id in the In on the required field returned every visit.
        assert.equal(await refusedAt({ ...pinVisits(...allPatientIds), selects: ["id"] }), "conditionGroup.conditions[0].values");
        assert.equal(await refusedAt(count(whereShape(cond("patientId", "In", allPatientIds)), "reason")), "conditionGroup.conditions[0].values");
        assert.equal(await refusedAt({ conditionSets: [{ sort: 1, conditionGroup: and(cond("reason", "IsNotNull", [], 1), cond("patientId", "In", allPatientIds, 2)) }], selects: ["id"] }), "conditionSets[0].conditionGroup.conditions[1].values");
        assert.equal(await refusedAt({ conditionGroup: subGroup("And", [cond("reason", "IsNotNull", [])], [subGroup("And", [cond("patientId", "IIn", allPatientIds.map(String), 1, "Text")])]) }), "conditionGroup.subConditionGroups[0].conditions[0].values");
        // Ten keys narrow, after the eleven were refused and before (no decision is reused across list lengths).
        const ten = allPatientIds.slice(0, 10);
        assert.deepEqual(ids(await run(ctx, Visit, c(), { ...pinVisits(...ten), selects: ["id"] })), idsOf(visitsOf(...ten)));
        assert.equal(await refusedAt({ ...pinVisits(...allPatientIds.slice(0, 11)), selects: ["id"] }), "conditionGroup.conditions[0].values");
        // A long list beside a narrowing condition on the same field: the Equal is the required filter.
        assert.deepEqual(ids(await run(ctx, Visit, c(), { ...whereShape(cond("patientId", "In", allPatientIds, 1), cond("patientId", "Equal", [3], 2)), selects: ["id"] })), idsOf(visitsOf(3)));
        // The bound is an option: an engine that sets it as high as the keys answers every visit, as before.
        const wide = new QpPolicyEngine({ tier: tier as QpTier, caps: { maxRequiredInValues: allPatientIds.length } });
        const every = await run(ctx, Visit, await tenantContext(wide), { ...pinVisits(...allPatientIds), selects: ["id"] });
        assert.deepEqual(ids(every), idsOf(visitsOf(...allPatientIds)));
      });

      it("forced predicates: (caller AND forced) in Filter, every Segment set and Summary, traced as Injected", async () => {
        const filtered = await run(ctx, Patient, c(), whereShape(cond("name", "StartsWith", ["Patient 1"])));
        assert.deepEqual(ids(filtered), t1.filter((p) => p.name.startsWith("Patient 1")).map((p) => p.id));
        expectEntry(filtered.policy, "tenantId", "Where", { action: PolicyAction.Injected, level: 1, source: "QpForceWhere on Patient.tenantId", enforced: true });
        const segment = await run(ctx, Patient, c(), {
          conditionSets: [
            { sort: 1, conditionGroup: and(cond("id", "LessThanOrEqual", [10])) },
            { sort: 2, intersection: "Union", conditionGroup: and(cond("id", "GreaterThanOrEqual", [36])) },
          ],
          selects: ["id", "tenantId"],
        });
        assert.deepEqual(ids(segment), t1.filter((p) => p.id <= 10 || p.id >= 36).map((p) => p.id));
        assertTenant(segment.data);
        assert.equal(entriesFor(segment.policy, "tenantId", "Where").filter((e) => e.action === PolicyAction.Injected).length, 2, "once per set");
        const grouped = await run(ctx, Patient, c(), count({}, "tenantId"));
        assert.deepEqual(grouped.data, [{ tenantId: "t-1", n: t1.length }]);
        const t2Context = await tenantContext(tier === "Strict" ? strict : convenience, "t-2");
        const other = await run(ctx, Patient, t2Context, { selects: ["id", "tenantId"] });
        assert.deepEqual(ids(other), idsOf(t2));
        assertTenant(other.data, "t-2");
      });

      it("a forced predicate without its context value → MissingContextValue (12)", async () => {
        const engine = tier === "Strict" ? strict : convenience;
        for (const raw of [new QpPolicyContext(), new QpPolicyContext().withValue("tenantId", ""), new QpPolicyContext().withValue("tenantId", null), new QpPolicyContext().withValue("tenant", "t-1")]) {
          const context = await engine.prepareAsync(raw);
          await expectPolicyError(() => run(ctx, Patient, context, {}), PolicyErrorCode.MissingContextValue, "tenantId");
          await expectPolicyError(() => run(ctx, Patient, context, count({}, "diagnosis")), PolicyErrorCode.MissingContextValue);
          await expectPolicyError(() => run(ctx, Patient, context, { conditionSets: [{ sort: 1, conditionGroup: and(cond("id", "GreaterThan", [0])) }] }), PolicyErrorCode.MissingContextValue);
          // An entity without forced predicates does not need the value.
          assert.deepEqual(ids(await run(ctx, Visit, context, pinVisits(1))), idsOf(visitsOf(1)));
        }
        // A provider may supply the value while preparing.
        const provided = new QpPolicyEngine({ tier: tier as QpTier }, { resolveValues: () => ({ tenantId: "t-2" }) });
        const fromProvider = await run(ctx, Patient, await provided.prepareAsync(new QpPolicyContext()), { selects: ["id"] });
        assert.deepEqual(ids(fromProvider), idsOf(t2));
      });

      it("QpRequireWhere and caps and cost throw under Strict as under Convenience (9, 11, 19)", async () => {
        await expectPolicyError(() => run(ctx, Visit, c(), whereShape(cond("patientId", "LessThan", [3]))), PolicyErrorCode.RequiredFilterMissing);
        await expectPolicyError(() => run(ctx, Patient, c(), { orders: Array.from({ length: 11 }, (_, i) => ({ sort: i, field: "id" })) }), PolicyErrorCode.CapExceeded, "MaxOrderFields");
      });

      it("getQueryString is refused (14) when a forced predicate applies or under Strict", async () => {
        await expectPolicyError(() => run(ctx, Patient, c(), { selects: ["id"] }, { queryString: true }), PolicyErrorCode.QueryStringDenied);
        await expectPolicyError(() => run(ctx, Patient, c(), { selects: ["id"] }, { queryString: true, dynamic: true }), PolicyErrorCode.QueryStringDenied);
        await expectPolicyError(() => run(ctx, Patient, c(), count({}, "diagnosis"), { queryString: true }), PolicyErrorCode.QueryStringDenied);
        await expectPolicyError(() => run(ctx, Patient, c(), { conditionSets: [{ sort: 1, conditionGroup: and(cond("id", "GreaterThan", [0])) }] }, { queryString: true }), PolicyErrorCode.QueryStringDenied);
        if (tier === "Strict") {
          await expectPolicyError(() => run(ctx, Visit, c(), pinVisits(1), { queryString: true }), PolicyErrorCode.QueryStringDenied, "Strict");
          await expectPolicyError(() => run(ctx, Doctor, c(), {}, { queryString: true }), PolicyErrorCode.QueryStringDenied);
          return;
        }
        const visits = await run(ctx, Visit, c(), pinVisits(1), { queryString: true });
        assert.deepEqual(ids(visits), idsOf(visitsOf(1)));
        assert.equal(typeof visits.queryString, "string");
        if (ctx.target !== "memory") assert.match(visits.queryString!, /\n-- parameters: /);
        const doctors = await run(ctx, Doctor, c(), {}, { queryString: true });
        assert.equal(typeof doctors.queryString, "string");
      });

      it("two summary outputs with one name (any case) → AmbiguousGroupKey (15)", async () => {
        const agg = (alias: string, field?: string) => ({ alias, aggregator: "Count", ...(field ? { field } : {}) });
        for (const groupBy of [
          { fields: ["diagnosis"], aggregateBy: [agg("Diagnosis")] },
          { fields: ["doctor.name"], aggregateBy: [agg("DOCTORNAME")] },
          { fields: ["mail"], aggregateBy: [agg("mail", "id")] },
          { fields: ["diagnosis"], aggregateBy: [agg("n"), agg("N", "id")] },
        ]) {
          await expectPolicyError(() => run(ctx, Patient, c(), { groupBy }), PolicyErrorCode.AmbiguousGroupKey);
        }
      });

      it("an alias that is another member's name → AmbiguousFieldName (13) at the first guarded query, even one naming no field", async () => {
        // Without the check the default projection returns both members under one name: the
        // value of AliasClash.secret ("code") is silently replaced by AliasClash.code's.
        await expectPolicyError(() => run(ctx, AliasClash, c(), {}), PolicyErrorCode.AmbiguousFieldName, "AliasClash");
        await expectPolicyError(() => run(ctx, AliasClash, c(), {}, { dynamic: true }), PolicyErrorCode.AmbiguousFieldName, "AliasClash");
      });

      it("an alias that is another member's name, or a segment matching two members, → AmbiguousFieldName (13)", async () => {
        await expectPolicyError(() => run(ctx, AliasClash, c(), { selects: ["id"] }), PolicyErrorCode.AmbiguousFieldName, "AliasClash.secret");
        await expectPolicyError(() => run(ctx, AliasClash, c(), whereShape(cond("code", "Equal", ["code-1"]))), PolicyErrorCode.AmbiguousFieldName);
        await expectPolicyError(() => run(ctx, AliasClash, c(), count({}, "id")), PolicyErrorCode.AmbiguousFieldName);
        for (const path of ["CODE", "cOdE"]) {
          await expectPolicyError(() => run(ctx, CaseTwin, c(), whereShape(cond(path, "Equal", ["lower-1"]))), PolicyErrorCode.AmbiguousFieldName, path);
          await expectPolicyError(() => run(ctx, CaseTwin, c(), { selects: [path] }), PolicyErrorCode.AmbiguousFieldName);
          await expectPolicyError(() => run(ctx, CaseTwin, c(), { orders: [{ sort: 1, field: path }] }), PolicyErrorCode.AmbiguousFieldName);
        }
        // The exact names still resolve.
        const exact = await run(ctx, CaseTwin, c(), { conditionGroup: and(cond("Code", "Equal", ["UPPER-2"])), selects: ["code", "Code"] });
        assert.deepEqual(plain(exact.data), [{ code: "lower-2", Code: "UPPER-2" }]);
      });

      it("the order of checks: shape first, then the policy on every reference, then formats", async () => {
        await expectLogicError(() => run(ctx, Patient, c(), whereShape(cond("ssn", "Equal", ["a"], 1), cond("name", "Equal", ["b"], 1))), "AnyListOfConditionsMustHasUniqueSortValue");
        await expectLogicError(() => run(ctx, Patient, c(), whereShape(cond("ssn", "Between", ["a"]))), "ConditionWithOperator[Between-NotBetween]MustHasOnlyTwoValues");
        await expectLogicError(() => run(ctx, Patient, c(), { ...whereShape(cond("ssn", "Equal", ["a"])), page: { pageNumber: 0, pageSize: 5 } }), "PageNumberMustBeGreaterThanZero");
        await expectLogicError(() => run(ctx, Patient, c(), { selects: [] }), "MustHasFields");
        await expectLogicError(() => run(ctx, Patient, c(), { conditionSets: [{ sort: 1, conditionGroup: and(cond("ssn", "Equal", ["a"])) }, { sort: 2, conditionGroup: and(cond("id", "Equal", [1])) }] }), "ConditionsSetOfIndex[1-N]MustHasIntersection");
        // A denied field with a malformed value or a mismatched DataType reports the denial.
        await expectPolicyError(() => run(ctx, Patient, c(), whereShape(cond("ssn", "Equal", ["not a number"], 1, "Number"))), PolicyErrorCode.FieldDeniedForWhere);
        await expectPolicyError(() => run(ctx, Patient, c(), whereShape(cond("age", "Equal", ["x"], 1, "Date"))), PolicyErrorCode.FieldDeniedForWhere);
        await expectPolicyError(() => run(ctx, Patient, c(), whereShape(cond("ssn", "GreaterThan", ["1"], 1, "Guid"))), PolicyErrorCode.FieldDeniedForWhere);
        await expectPolicyError(() => run(ctx, Patient, c(), whereShape(cond("mail", "Contains", ["x"], 1, "Number"))), PolicyErrorCode.OperatorNotAllowed);
        // An unknown field is a validation error; formats come after the policy.
        await expectLogicError(() => run(ctx, Patient, c(), whereShape(cond("nope", "Equal", ["a"]))), "ConditionMustHasValidFieldName");
        const format = await expectLogicError(() => run(ctx, Patient, c(), whereShape(cond("id", "Equal", ["abc"], 1, "Number"))), "InvalidFormat");
        // A format error names the condition where the caller put it, not where the forced tenant predicate moved it.
        assert.equal(format.path, "conditionGroup.conditions[0].values[0]");
        const nested = await expectLogicError(() => run(ctx, Patient, c(), { conditionGroup: { ...and(cond("id", "GreaterThan", [0])), subConditionGroups: [{ sort: 1, ...and(cond("id", "Between", [1, "abc"], 1, "Number")) }] } }), "InvalidFormat");
        assert.equal(nested.path, "conditionGroup.subConditionGroups[0].conditions[0].values[1]");
        const inSet = await expectLogicError(() => run(ctx, Patient, c(), {
          conditionSets: [{ sort: 1, conditionGroup: and(cond("id", "GreaterThan", [0])) }, { sort: 2, intersection: "Union", conditionGroup: and(cond("id", "Equal", ["abc"], 1, "Number")) }],
        }), "InvalidFormat");
        assert.equal(inSet.path, "conditionSets[1].conditionGroup.conditions[0].values[0]");
        // ... and in a Summary's having, which the group floor (caps.minGroupSize, 5 by default) wraps.
        const grouped = { groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } };
        const inHaving = await expectLogicError(() => run(ctx, Patient, c(), { ...grouped, having: { connector: "Or", conditions: [cond("n", "GreaterThan", [1]), cond("n", "Equal", ["abc"], 2, "Number")] } }), "InvalidFormat");
        assert.equal(inHaving.path, "having.conditions[1].values[0]");
        const unknownAlias = await expectLogicError(() => run(ctx, Patient, c(), { ...grouped, having: and(cond("m", "GreaterThan", [1])) }), "HavingField[m]MustExistInAggregateByAliases");
        assert.equal(unknownAlias.path, "having.conditions[0].field");
        // Where is checked before orders and selects.
        await expectPolicyError(() => run(ctx, Patient, c(), { ...whereShape(cond("ssn", "Equal", ["a"])), orders: [{ sort: 1, field: "nope" }] }), PolicyErrorCode.FieldDeniedForWhere);
      });

      it("Summary: where, group, aggregate, having and orders under the policy; the group floor hides small groups", async () => {
        await expectPolicyError(() => run(ctx, Patient, c(), count(whereShape(cond("ssn", "Equal", ["SSN-1"])), "diagnosis")), PolicyErrorCode.FieldDeniedForWhere);
        const shape = {
          conditionGroup: and(cond("id", "LessThanOrEqual", [36])),
          groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }, { alias: "oldest", field: "age", aggregator: "Maximum" }] },
          having: and(cond("n", "GreaterThanOrEqual", [5])),
          orders: [{ sort: 1, field: "oldest", direction: "Descending" }],
        };
        const result = await run(ctx, Patient, c(), shape);
        const rows = t1.filter((p) => p.id <= 36);
        const expected = ["asthma", "cold", "flu"].map((d) => ({ diagnosis: d, n: rows.filter((p) => p.diagnosis === d).length, oldest: Math.max(...rows.filter((p) => p.diagnosis === d).map((p) => p.age)) }))
          .filter((g) => g.n >= 5).sort((a, b) => b.oldest - a.oldest || (a.diagnosis < b.diagnosis ? -1 : 1));
        assert.deepEqual(result.data, expected);
        assert.equal(result.policy.cost, 3, "id (where) + diagnosis (group) + age (aggregate)");
        // Every group of one patient is below the floor (5): an empty list, not an error.
        const tiny = await run(ctx, Patient, c(), count({}, "name"));
        assert.deepEqual(tiny.data, []);
        assert.equal(tiny.totalCount, 0);
      });

      it("Summary: ordering groups by a key denied for Order follows the table (Convenience drops, Strict 3)", async () => {
        const shape = { groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, orders: [{ sort: 1, field: "diagnosis", direction: "Descending" }] };
        if (tier === "Strict") {
          await expectPolicyError(() => run(ctx, Patient, c(), shape), PolicyErrorCode.FieldDeniedForOrder, "diagnosis");
          return;
        }
        const result = await run(ctx, Patient, c(), shape);
        assert.deepEqual(result.data.map((row) => row.diagnosis), ["asthma", "cold", "flu"], "the dropped order leaves the keys ascending");
        expectEntry(result.policy, "diagnosis", "Order", { action: PolicyAction.Dropped, source: "QpNoOrder on Patient.diagnosis" });
      });

      it("Segment: sets combined under the policy; orders and selects follow the table", async () => {
        const sets = [
          { sort: 1, conditionGroup: and(cond("id", "LessThanOrEqual", [12])) },
          { sort: 2, intersection: "Except", conditionGroup: and(cond("diagnosis", "Equal", ["flu"])) },
        ];
        const shape = { conditionSets: sets, orders: [{ sort: 1, field: "ssn", direction: "Descending" }], selects: ["id", "ssn", "name"] };
        if (tier === "Strict") {
          await expectPolicyError(() => run(ctx, Patient, c(), shape), PolicyErrorCode.FieldDeniedForOrder);
          await expectPolicyError(() => run(ctx, Patient, c(), { conditionSets: sets, selects: ["id", "ssn"] }), PolicyErrorCode.FieldDeniedForSelect);
          return;
        }
        const result = await run(ctx, Patient, c(), shape);
        assert.deepEqual(plain(result.data), t1.filter((p) => p.id <= 12 && p.diagnosis !== "flu").map((p) => ({ id: p.id, name: p.name })));
        expectEntry(result.policy, "ssn", "Order", { action: PolicyAction.Dropped });
        expectEntry(result.policy, "ssn", "Select", { action: PolicyAction.Dropped });
        await expectPolicyError(() => run(ctx, Patient, c(), { conditionSets: sets, selects: ["ssn"] }), PolicyErrorCode.AllSelectsDenied);
      });

      it("the trace answers \"why is this column missing\": public path, feature, action, level, source", async () => {
        const shape = { selects: ["id", "MAIL", "internalNote", "doctor.secretCode", "visits.billingCode", "visits.reason"], conditionGroup: and(cond("id", "LessThan", [4])) };
        if (tier === "Strict") {
          await expectPolicyError(() => run(ctx, Patient, c(), shape), PolicyErrorCode.FieldDeniedForSelect, "internalNote");
          return;
        }
        const result = await run(ctx, Patient, c(), shape);
        assert.deepEqual(plain(result.data), t1.filter((p) => p.id < 4).map((p) => ({ id: p.id, mail: p.email, visits: visitsOf(p.id).map((v) => ({ reason: v.reason, id: v.id })) })));
        expectEntry(result.policy, "mail", "Select", { action: PolicyAction.Allowed, level: null, enforced: true });
        expectEntry(result.policy, "internalNote", "Select", { action: PolicyAction.Dropped, level: 1, source: "QpNoSelect on Patient.internalNote", enforced: true });
        expectEntry(result.policy, "doctor.secretCode", "Select", { action: PolicyAction.Dropped, level: 1, source: "QpDenied on Doctor.secretCode", enforced: true });
        expectEntry(result.policy, "visits.billingCode", "Select", { action: PolicyAction.Dropped, level: 1, source: "QpDenied on Visit.billingCode", enforced: true });
        expectEntry(result.policy, "id", "Where", { action: PolicyAction.Allowed });
        assert.equal(entriesFor(result.policy, "email", "Select").length, 0, "the trace never names the internal member");
        for (const entry of result.policy.entries) {
          assert.deepEqual(sorted(Object.keys(entry).filter((k) => k !== "reason")), sorted(["field", "feature", "action", "level", "source", "enforced"]));
          assert.ok(["Where", "Select", "Order", "Group", "Aggregate", "Segment", "Page", "Query"].includes(entry.feature), entry.feature);
        }
        // Through an (unscoped) navigation the trace names the public path too.
        const bed = await run(ctx, Bed, c(), { ...pinBeds(1), selects: ["ward.PHONE", "ward.accessCode", "id"] });
        assert.deepEqual(plain(bed.data), bedsOf(1).map((b) => ({ id: b.id, ward: { phone: wardOf(1).phoneNumber, id: 1 } })));
        expectEntry(bed.policy, "ward.phone", "Select", { action: PolicyAction.Allowed, level: null, enforced: true });
        expectEntry(bed.policy, "ward.accessCode", "Select", { action: PolicyAction.Dropped, level: 1, source: "QpDenied on Ward.accessCode", enforced: true });
        assert.ok(!JSON.stringify(bed.policy).includes("phoneNumber"), JSON.stringify(bed.policy.entries));
        // Through the tenant-scoped Patient the navigation is what is dropped, and the trace says why.
        const visit = await run(ctx, Visit, c(), { ...pinVisits(3), selects: ["id", "patient.mail"] });
        assert.deepEqual(plain(visit.data), visitsOf(3).map((v) => ({ id: v.id })));
        expectEntry(visit.policy, "patient.mail", "Select", { action: PolicyAction.Dropped, level: 1, source: scopedNavigationTrace("patient.mail"), enforced: true });
      });

      it("precedence: a sealed attribute (level 1) beats an overridable one (level 6)", async () => {
        if (tier === "Strict") {
          await expectPolicyError(() => run(ctx, Clinic, c(), { selects: ["id", "note"] }), PolicyErrorCode.FieldDeniedForSelect, "QpDeny on Clinic.note");
          return;
        }
        const result = await run(ctx, Clinic, c(), { selects: ["id", "note"] });
        assert.deepEqual(plain(result.data), ctx.data().clinics.map((k) => ({ id: k.id })));
        expectEntry(result.policy, "note", "Select", { action: PolicyAction.Dropped, level: 1, source: "QpDeny on Clinic.note" });
      });
    });
  }

  describe("tier-independent", () => {
    it("Patient (requirePolicy) refuses every unguarded function with PolicyRequired (10)", async () => {
      const attempts: [string, () => unknown][] = [];
      if (ctx.target === "memory") {
        const rows = ctx.data().patients;
        attempts.push(["toList", () => toList(rows, {})], ["toList summary", () => toList(rows, count({}, "diagnosis"))], ["toListDynamic", () => toListDynamic(rows, {})]);
      } else {
        const repository = () => ctx.dataSource().getRepository(Patient);
        const builder = () => repository().createQueryBuilder("p");
        for (const [label, source] of [["repository", repository], ["query builder", builder]] as const) {
          attempts.push(
            [`toListAsync ${label}`, () => toListAsync(source(), {})],
            [`toListAsync summary ${label}`, () => toListAsync(source(), count({}, "diagnosis"))],
            [`toListAsync segment ${label}`, () => toListAsync(source(), { conditionSets: [{ sort: 1, conditionGroup: and(cond("id", "GreaterThan", [0])) }] })],
            [`toListAsyncDynamic ${label}`, () => toListAsyncDynamic(source(), {})],
            [`where ${label}`, () => where(source(), cond("id", "Equal", [1]))],
            [`order ${label}`, () => order(source(), { sort: 1, field: "id" })],
            [`page ${label}`, () => page(source(), { pageNumber: 1, pageSize: 5 })],
            [`select ${label}`, () => select(source(), ["id"])],
            [`selectDynamic ${label}`, () => selectDynamic(source(), ["id"])],
            [`filter ${label}`, () => filter(source(), {})],
            [`filterDynamic ${label}`, () => filterDynamic(source(), {})],
            [`summary ${label}`, () => summary(source(), count({}, "diagnosis") as never)],
            [`group ${label}`, () => group(source(), { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } as never)],
          );
        }
      }
      for (const [label, attempt] of attempts) {
        await expectPolicyError(async () => attempt(), PolicyErrorCode.PolicyRequired, "Patient").catch((error: Error) => {
          throw new Error(`${label}: ${error.message}`);
        });
      }
    });

    it("entities without requirePolicy keep the plain engine unguarded", async () => {
      const shape = { conditionGroup: and(cond("patientId", "LessThan", [4])), selects: ["id", "billingCode"] };
      const visits = ctx.target === "memory" ? toList(ctx.data().visits, shape) : await toListAsync(ctx.dataSource().getRepository(Visit), shape);
      assert.deepEqual(plain(visits.data), oracle.visits.filter((v) => v.patientId < 4).map((v) => ({ id: v.id, billingCode: v.billingCode })), "no policy unguarded: billingCode is read");
      assert.equal(visits.policy, null);
      const doctors = ctx.target === "memory" ? toList(ctx.data().doctors, {}) : await toListAsync(ctx.dataSource().getRepository(Doctor), {});
      assert.deepEqual(plain(doctors.data), oracle.doctors.map((d) => ({ id: d.id, name: d.name, secretCode: d.secretCode })));
    });

    it("a select through a reference into a collection (Bed → ward.beds.label) returns the collection", async () => {
      const c1 = await tenantContext(convenience);
      const result = await run(ctx, Bed, c1, { ...pinBeds(1, 2), selects: ["id", "ward.beds.label", "ward.beds.lockCode"] });
      assert.deepEqual(plain(result.data), bedsOf(1, 2).map((b) => ({ id: b.id, ward: { id: b.wardId, beds: bedsOf(b.wardId).map((o) => ({ label: o.label, id: o.id })) } })));
      expectEntry(result.policy, "ward.beds.lockCode", "Select", { action: PolicyAction.Dropped, source: "QpDenied on Bed.lockCode" });
      const dynamic = await run(ctx, Bed, c1, { ...pinBeds(2), selects: ["id", "ward.name", "ward.beds.tag"] }, { dynamic: true });
      assert.deepEqual(dynamic.data, bedsOf(2).map((b) => ({ id: b.id, ward: { name: "Ward 2", beds: bedsOf(2).map((o) => ({ tag: o.serialNo })) } })));
    });

    it("a select through a reference into Patient's collection (Visit → patient.visits.reason) is the scoped navigation: dropped / 2", async () => {
      const result = await run(ctx, Visit, await tenantContext(convenience), { ...pinVisits(2, 5), selects: ["id", "patient.visits.reason"] });
      assert.deepEqual(plain(result.data), visitsOf(2, 5).map((v) => ({ id: v.id })));
      expectEntry(result.policy, "patient.visits.reason", "Select", { action: PolicyAction.Dropped, level: 1, source: scopedNavigationTrace("patient.visits.reason"), enforced: true });
      const s1 = await tenantContext(strict);
      await expectPolicyError(() => run(ctx, Visit, s1, { ...pinVisits(2, 5), selects: ["id", "patient.visits.reason"] }), PolicyErrorCode.FieldDeniedForSelect, scopedNavigationSource);
    });

    it("an unprepared context → PolicyContextNotPrepared (18)", async () => {
      const prepared = await tenantContext(convenience);
      for (const context of [
        new QpPolicyContext(),
        new QpPolicyContext().withValue("tenantId", "t-1"),
        prepared.withValue("tenantId", "t-1"),
        prepared.withSubject("Role" as never, "admin"),
        new QpPolicyContext([], new Map([["tenantId", "t-1"]]), {}),
        undefined as unknown as QpPolicyContext,
        null as unknown as QpPolicyContext,
      ]) {
        await expectPolicyError(async () => run(ctx, Patient, context, {}), PolicyErrorCode.PolicyContextNotPrepared);
        await expectPolicyError(async () => run(ctx, Visit, context, pinVisits(1)), PolicyErrorCode.PolicyContextNotPrepared);
        await expectPolicyError(async () => run(ctx, Doctor, context, {}, { dynamic: true }), PolicyErrorCode.PolicyContextNotPrepared);
      }
      if (ctx.target === "memory") {
        await expectPolicyError(async () => applyPolicyToList(new QpPolicyContext()), PolicyErrorCode.PolicyContextNotPrepared);
      }
    });

    it("MaxPageSize: above → 9; no page → page 1 of MaxPageSize (trace Injected Page), in Filter, Segment and Summary", async () => {
      const context = await tenantContext(engineWith({ caps: { maxPageSize: 4 } }));
      await expectPolicyError(() => run(ctx, Patient, context, { page: { pageNumber: 1, pageSize: 5 } }), PolicyErrorCode.CapExceeded, "MaxPageSize 4");
      await expectPolicyError(() => run(ctx, Patient, context, { ...count({}, "diagnosis"), page: { pageNumber: 1, pageSize: 5 } }), PolicyErrorCode.CapExceeded);
      const atCap = await run(ctx, Patient, context, { page: { pageNumber: 2, pageSize: 4 }, selects: ["id"] });
      assert.deepEqual(ids(atCap), idsOf(t1).slice(4, 8));
      assert.deepEqual([atCap.pageNumber, atCap.pageSize, atCap.totalCount, atCap.pageCount], [2, 4, t1.length, Math.ceil(t1.length / 4)]);
      const noPage = await run(ctx, Patient, context, { selects: ["id"] });
      assert.deepEqual(ids(noPage), idsOf(t1).slice(0, 4));
      assert.deepEqual([noPage.pageNumber, noPage.pageSize, noPage.totalCount, noPage.pageCount], [1, 4, t1.length, Math.ceil(t1.length / 4)]);
      expectEntry(noPage.policy, "page", "Page", { action: PolicyAction.Injected, enforced: true });
      const segment = await run(ctx, Patient, context, { conditionSets: [{ sort: 1, conditionGroup: and(cond("id", "GreaterThan", [10])) }], selects: ["id"] });
      assert.deepEqual(ids(segment), t1.filter((p) => p.id > 10).slice(0, 4).map((p) => p.id));
      assert.deepEqual([segment.pageNumber, segment.pageSize, segment.totalCount], [1, 4, t1.filter((p) => p.id > 10).length]);
      const grouped = await run(ctx, Patient, context, count({}, "diagnosis"));
      assert.deepEqual([grouped.pageNumber, grouped.pageSize, grouped.totalCount, grouped.data.length], [1, 4, 3, 3]);
      const past = await run(ctx, Patient, context, { page: { pageNumber: 99, pageSize: 4 } });
      assert.deepEqual([past.data.length, past.totalCount], [0, t1.length]);
    });

    it("MaxConditions counts the caller's conditions in where, having and every set, not forced ones", async () => {
      const context = await tenantContext(engineWith({ caps: { maxConditions: 2 } }));
      const two = await run(ctx, Patient, context, whereShape(cond("id", "GreaterThan", [1], 1), cond("id", "LessThan", [4], 2)));
      assert.deepEqual(ids(two), [2, 3], "two caller conditions plus the forced one are within a cap of 2");
      await expectPolicyError(() => run(ctx, Patient, context, whereShape(cond("id", "GreaterThan", [1], 1), cond("id", "LessThan", [4], 2), cond("id", "NotEqual", [2], 3))), PolicyErrorCode.CapExceeded, "MaxConditions");
      await expectPolicyError(() => run(ctx, Patient, context, { conditionGroup: subGroup("And", [cond("id", "GreaterThan", [1])], [subGroup("Or", [cond("id", "LessThan", [4], 1), cond("id", "Equal", [9], 2)])]) }), PolicyErrorCode.CapExceeded);
      await expectPolicyError(() => run(ctx, Patient, context, { ...count(whereShape(cond("id", "GreaterThan", [0])), "diagnosis"), having: and(cond("n", "GreaterThan", [0], 1), cond("n", "LessThan", [100], 2)) }), PolicyErrorCode.CapExceeded);
      const summaryOk = await run(ctx, Patient, context, { ...count(whereShape(cond("id", "GreaterThan", [0])), "diagnosis"), having: and(cond("n", "GreaterThan", [0])) });
      assert.equal(summaryOk.totalCount, 3);
      const set = (sort: number, ...conditions: Shape[]) => ({ sort, conditionGroup: and(...conditions), ...(sort > 1 ? { intersection: "Union" } : {}) });
      await expectPolicyError(() => run(ctx, Patient, context, { conditionSets: [set(1, cond("id", "Equal", [1])), set(2, cond("id", "Equal", [2])), set(3, cond("id", "Equal", [3]))] }), PolicyErrorCode.CapExceeded);
      const sets = await run(ctx, Patient, context, { conditionSets: [set(1, cond("id", "Equal", [1])), set(2, cond("id", "Equal", [4]))], selects: ["id"] });
      assert.deepEqual(ids(sets), [1], "patient 4 is of tenant t-2");
    });

    it("MaxOrderFields and MaxNavigationDepth (relation hops, a path ending on a relation counts)", async () => {
      const context = await tenantContext(engineWith({ caps: { maxOrderFields: 1, maxNavigationDepth: 1 } }));
      await expectPolicyError(() => run(ctx, Patient, context, { orders: [{ sort: 1, field: "id" }, { sort: 2, field: "name" }] }), PolicyErrorCode.CapExceeded, "MaxOrderFields");
      const one = await run(ctx, Patient, context, { orders: [{ sort: 1, field: "doctor.name", direction: "Descending" }], selects: ["id", "doctor.name", "visits"] });
      assert.deepEqual(ids(one), [...t1.filter((p) => p.doctorId === 2), ...t1.filter((p) => p.doctorId === 1)].map((p) => p.id));
      // Paths of two hops on the unscoped Ward/Bed pair (navigation into Patient is denied outright).
      const oneHop = await run(ctx, Ward, context, { selects: ["id", "beds.label"] });
      assert.deepEqual(plain(oneHop.data), wardOracle.wards.map((w) => ({ id: w.id, beds: bedsOf(w.id).map((b) => ({ label: b.label, id: b.id })) })));
      const endsOnRelation = await run(ctx, Bed, context, { ...pinBeds(2), selects: ["id", "ward"] });
      assert.deepEqual(plain(endsOnRelation.data), bedsOf(2).map((b) => ({ id: b.id, ward: wardDefaultRow(wardOf(2)) })), "one hop ending on a relation is within a cap of 1");
      await expectPolicyError(() => run(ctx, Ward, context, whereShape(cond("beds.ward.name", "Equal", ["Ward 1"]))), PolicyErrorCode.CapExceeded, "MaxNavigationDepth");
      await expectPolicyError(() => run(ctx, Ward, context, { selects: ["id", "beds.ward"] }), PolicyErrorCode.CapExceeded, "MaxNavigationDepth");
      await expectPolicyError(() => run(ctx, Ward, context, { selects: ["id", "beds.ward.id"] }), PolicyErrorCode.CapExceeded);
      await expectPolicyError(() => run(ctx, Ward, context, { orders: [{ sort: 1, field: "beds.ward.id" }] }), PolicyErrorCode.CapExceeded);
      await expectPolicyError(() => run(ctx, Bed, context, { ...pinBeds(1), selects: ["ward.beds.label"] }), PolicyErrorCode.CapExceeded);
      await expectPolicyError(() => run(ctx, Ward, context, count({}, "beds.ward.name")), PolicyErrorCode.CapExceeded);
      await expectPolicyError(() => run(ctx, Bed, context, { ...pinBeds(1), groupBy: { fields: ["label"], aggregateBy: [{ alias: "m", field: "ward.beds.id", aggregator: "Maximum" }] } }), PolicyErrorCode.CapExceeded);
      // The default cap is 4.
      const plainContext = await tenantContext(convenience);
      const deep = await run(ctx, Bed, plainContext, { conditionGroup: and(cond("wardId", "In", [1, 2], 1), cond("ward.beds.ward.beds.label", "Equal", ["Bed 3"], 2)), selects: ["id"] });
      assert.deepEqual(ids(deep), idsOf(bedsOf(2)), "the beds whose ward holds Bed 3, four hops away");
      await expectPolicyError(() => run(ctx, Bed, plainContext, { conditionGroup: and(cond("wardId", "Equal", [1], 1), cond("ward.beds.ward.beds.ward.name", "Equal", ["x"], 2)) }), PolicyErrorCode.CapExceeded, "MaxNavigationDepth");
      await expectPolicyError(() => run(ctx, Ward, plainContext, { selects: ["id", "beds.ward.beds.ward.beds"] }), PolicyErrorCode.CapExceeded);
    });

    it("cost: end member weight plus navigation members crossed; default projection free; policy.cost reports the total", async () => {
      const c1 = await tenantContext(convenience);
      const full = await run(ctx, Patient, c1, {
        conditionGroup: and(cond("name", "StartsWith", ["Patient"])),
        orders: [{ sort: 1, field: "id" }],
        selects: ["notes", "doctor.name", "visits.reason"],
        page: { pageNumber: 1, pageSize: 3 },
      });
      assert.equal(full.policy.cost, 1 + 1 + 400 + 2 + 2);
      assert.equal((await run(ctx, Patient, c1, { selects: ["id"] })).policy.cost, 1);
      assert.equal((await run(ctx, Visit, c1, pinVisits(1))).policy.cost, 1, "the required condition costs, the default projection does not");
      assert.equal((await run(ctx, Patient, c1, { groupBy: { fields: ["doctor.name"], aggregateBy: [{ alias: "n", aggregator: "Count" }, { alias: "s", field: "age", aggregator: "Sumation" }] } })).policy.cost, 3);
      const free = await tenantContext(engineWith({ caps: { defaultFieldCost: 0 } }));
      assert.equal((await run(ctx, Patient, free, { conditionGroup: and(cond("name", "StartsWith", ["Patient"])), selects: ["notes", "doctor.name"] })).policy.cost, 400);
      const tight = await tenantContext(engineWith({ caps: { maxQueryCost: 400 } }));
      const atBudget = await run(ctx, Patient, tight, { selects: ["notes"] });
      assert.deepEqual(plain(atBudget.data), t1.map((p) => ({ notes: p.notes })));
      await expectPolicyError(() => run(ctx, Patient, tight, { selects: ["notes", "name"] }), PolicyErrorCode.QueryCostExceeded, "401");
      await expectPolicyError(() => run(ctx, Patient, tight, { ...whereShape(cond("id", "Equal", [1])), selects: ["notes"] }), PolicyErrorCode.QueryCostExceeded);
      await expectPolicyError(() => run(ctx, Patient, tight, { conditionSets: [{ sort: 1, conditionGroup: and(cond("notes", "IsNotNull")) }], selects: ["id"] }), PolicyErrorCode.QueryCostExceeded);
      await expectPolicyError(() => run(ctx, Patient, tight, { groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", field: "notes", aggregator: "CountDistinct" }] } }), PolicyErrorCode.QueryCostExceeded);
    });

    it("dry run decides and traces everything but refuses and drops nothing — except forced predicates", async () => {
      const dry = await tenantContext(new QpPolicyEngine({ dryRun: true, caps: { maxPageSize: 5, maxQueryCost: 300 } }));
      const dryStrict = await tenantContext(new QpPolicyEngine({ dryRun: true, tier: QpTier.Strict }));
      const where1 = await run(ctx, Patient, dry, { ...whereShape(cond("ssn", "Equal", ["SSN-1"])), selects: ["id", "ssn"] });
      assert.deepEqual(plain(where1.data), [{ id: 1, ssn: "SSN-1" }]);
      assert.equal(where1.policy.dryRun, true);
      expectEntry(where1.policy, "ssn", "Where", { action: PolicyAction.Denied, level: 1, source: "QpDenied on Patient.ssn", enforced: false });
      expectEntry(where1.policy, "ssn", "Select", { action: PolicyAction.Dropped, enforced: false });
      expectEntry(where1.policy, "tenantId", "Where", { action: PolicyAction.Injected, enforced: true });
      const otherTenant = await run(ctx, Patient, dry, whereShape(cond("ssn", "Equal", ["SSN-4"])));
      assert.deepEqual(otherTenant.data, [], "the forced predicate still applies: patient 4 is of tenant t-2");
      const strictSelect = await run(ctx, Patient, dryStrict, { selects: ["id", "ssn"], orders: [{ sort: 1, field: "diagnosis" }] });
      assert.deepEqual(plain(strictSelect.data), [...t1].sort((a, b) => (a.diagnosis < b.diagnosis ? -1 : a.diagnosis > b.diagnosis ? 1 : a.id - b.id)).map((p) => ({ id: p.id, ssn: p.ssn })), "not dropped: ordered by diagnosis, ssn selected");
      expectEntry(strictSelect.policy, "ssn", "Select", { action: PolicyAction.Denied, enforced: false });
      expectEntry(strictSelect.policy, "diagnosis", "Order", { action: PolicyAction.Denied, enforced: false });
      const projection = await run(ctx, Patient, dry, { page: { pageNumber: 1, pageSize: 5 } });
      assert.deepEqual(plain(projection.data), t1.slice(0, 5).map((p) => ({ ...patientDefaultRow(p), ssn: p.ssn, internalNote: p.internalNote })));
      expectEntry(projection.policy, "internalNote", "Select", { action: PolicyAction.Dropped, enforced: false });
      const operators = await run(ctx, Patient, dry, { ...whereShape(cond("mail", "Contains", ["@example"])), page: { pageNumber: 1, pageSize: 5 }, selects: ["id"] });
      assert.deepEqual(ids(operators), t1.filter((p) => p.email !== null).slice(0, 5).map((p) => p.id));
      assert.ok(entriesFor(operators.policy, "mail", "Where").some((e) => e.action === PolicyAction.Denied && !e.enforced && e.level === 1), JSON.stringify(operators.policy.entries));
      const over = await run(ctx, Patient, dry, { page: { pageNumber: 1, pageSize: 10 }, selects: ["notes", "name"] });
      assert.deepEqual(plain(over.data), t1.slice(0, 10).map((p) => ({ notes: p.notes, name: p.name })), "the page cap is not enforced");
      assert.equal(over.policy.cost, 401);
      assert.ok(over.policy.entries.some((e) => e.feature === "Page" && e.action === PolicyAction.Denied && !e.enforced));
      assert.ok(over.policy.entries.some((e) => e.feature === "Query" && e.action === PolicyAction.Denied && !e.enforced), "the cost refusal is traced");
      const aggregated = await run(ctx, Patient, dry, { groupBy: { fields: ["ward"], aggregateBy: [{ alias: "total", field: "salary", aggregator: "Sumation" }, { alias: "w", field: "ward", aggregator: "Count" }] } });
      assert.deepEqual(aggregated.data, ["A", "B"].map((w) => ({ ward: w, total: t1.filter((p) => p.ward === w).reduce((s, p) => s + p.salary, 0), w: t1.filter((p) => p.ward === w).length })));
      expectEntry(aggregated.policy, "ward", "Group", { action: PolicyAction.Denied, level: 1, source: "QpNoGroup on Patient.ward", enforced: false });
      expectEntry(aggregated.policy, "ward", "Aggregate", { action: PolicyAction.Denied, level: 6, source: "QpNoAggregate on Patient.ward", enforced: false });
      expectEntry(aggregated.policy, "salary", "Aggregate", { action: PolicyAction.Denied, level: 1, source: "QpDeny on Patient.salary", enforced: false });
      const required = await run(ctx, Visit, dry, { selects: ["id"], page: { pageNumber: 1, pageSize: 5 } });
      assert.deepEqual(ids(required), idsOf(oracle.visits).slice(0, 5));
      expectEntry(required.policy, "patientId", "Where", { action: PolicyAction.Denied, enforced: false });
      const allDenied = await run(ctx, Patient, dry, { selects: ["ssn"], page: { pageNumber: 1, pageSize: 2 } });
      assert.deepEqual(plain(allDenied.data), t1.slice(0, 2).map((p) => ({ ssn: p.ssn })));
      await expectPolicyError(() => run(ctx, Patient, dry.withValue("tenantId", "t-2"), {}), PolicyErrorCode.PolicyContextNotPrepared);
      const noTenant = await new QpPolicyEngine({ dryRun: true }).prepareAsync(new QpPolicyContext());
      await expectPolicyError(() => run(ctx, Patient, noTenant, {}), PolicyErrorCode.MissingContextValue);
    });
  });
});

async function applyPolicyToList(context: QpPolicyContext) {
  return applyPolicy(oracle.patients, context).toList({});
}
