// A Summary's orders under a guard are field references like any other: only public names (the
// real name behind an alias is unknown, as in a Filter), and an order on an aggregate alias is an
// Order use of the aggregated field (Count excepted: COUNT(*) reads no field). Attacks that
// ordered by the internal name of an aliased key, or ranked groups by an aggregate of a field
// denied for Order, must fail or be dropped on every target under both tiers.
import assert from "node:assert/strict";
import { PolicyAction, PolicyErrorCode, QpTier, type QpPolicyContext } from "../../lib/index.js";
import { Patient } from "./domain.js";
import { Bed } from "./more-domain.js";
import { type Guarded, type Shape, cond, engineWith, entriesFor, expectEntry, expectLogicError, expectPolicyError, plain, t1, tenantContext, whereShape } from "./helpers.js";
import { type PolicyTargetContext, forEachPolicyTarget } from "./policy-targets.js";

type Row = Record<string, unknown>;

async function run(ctx: PolicyTargetContext, entity: new () => object, context: QpPolicyContext, shape: Shape): Promise<Guarded<Row>> {
  return (await ctx.guard(entity as new () => Row, context).toListAsync(shape)) as unknown as Guarded<Row>;
}

/** Group floor 1, so that groups of one row are returned and orders among them are visible. */
const tiers = [
  { tier: "Convenience", engine: engineWith({ caps: { minGroupSize: 1 } }) },
  { tier: "Strict", engine: engineWith({ tier: QpTier.Strict, caps: { minGroupSize: 1 } }) },
] as const;

const pinBeds = (...wardIds: number[]) => whereShape(cond("wardId", wardIds.length === 1 ? "Equal" : "In", wardIds));
const unknownOrder = (field: string) => `SummaryOrderField[${field}]MustExistInGroupByFieldsOrAggregateByAliases`;
const descending = (field: string) => [{ sort: 1, field, direction: "Descending" }];

forEachPolicyTarget("Policy: Summary orders are field references", (ctx) => {
  for (const { tier, engine } of tiers) {
    describe(tier, () => {
      let context: QpPolicyContext;
      before(async () => {
        context = await tenantContext(engine);
      });

      it("the real name behind an aliased group key is an unknown order (as in a Filter), under every spelling", async () => {
        const byMail = { groupBy: { fields: ["mail"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } };
        for (const name of ["email", "EMAIL", " Email "]) {
          await expectLogicError(() => run(ctx, Patient, context, { ...byMail, orders: descending(name) }), unknownOrder(name));
        }
        const byTag = { ...pinBeds(1, 2), groupBy: { fields: ["tag"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } };
        for (const name of ["serialNo", "SERIALNO"]) await expectLogicError(() => run(ctx, Bed, context, { ...byTag, orders: descending(name) }), unknownOrder(name));
        // Through a navigation: the real path, its dotless form and its key name are all internal.
        const byPhone = { ...pinBeds(1, 2), groupBy: { fields: ["ward.phone"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } };
        for (const name of ["ward.phoneNumber", "wardphoneNumber", "wardPhoneNumber", "WARD.PHONENUMBER"]) {
          await expectLogicError(() => run(ctx, Bed, context, { ...byPhone, orders: descending(name) }), unknownOrder(name));
        }
        // The public names order as asked.
        const tags = await run(ctx, Bed, context, { ...byTag, orders: descending("TAG") });
        assert.deepEqual(plain(tags.data), [8, 7, 6, 5, 4, 3, 2, 1].map((id) => ({ tag: `SN-${id}`, n: 1 })));
        for (const name of ["ward.phone", "wardPhone", "WARDPHONE"]) {
          const phones = await run(ctx, Bed, context, { ...byPhone, orders: descending(name) });
          assert.equal(phones.data.length, 2, name);
          expectEntry(phones.policy, "ward.phone", "Order", { action: PolicyAction.Allowed });
        }
      });

      it("an order on an aggregate alias is an Order use of its field: denied for Order, it is dropped (Convenience) or refused (Strict)", async () => {
        // Grouped by name, each group is one patient: ranked by Maximum(diagnosis) descending, the flu patients would come first.
        for (const aggregator of ["Maximum", "Minimum", "FirstOrDefault", "LastOrDefault", "CountDistinct"]) {
          const shape = { groupBy: { fields: ["name"], aggregateBy: [{ field: "diagnosis", alias: "topDiagnosis", aggregator }] }, orders: descending("TopDiagnosis") };
          if (tier === "Strict") {
            await expectPolicyError(() => run(ctx, Patient, context, shape), PolicyErrorCode.FieldDeniedForOrder, "QpNoOrder on Patient.diagnosis");
            continue;
          }
          const result = await run(ctx, Patient, context, shape);
          assert.deepEqual(result.data.map((row) => row.name), t1.map((p) => p.name), `${aggregator}: the dropped order leaves the keys ascending`);
          expectEntry(result.policy, "diagnosis", "Order", { action: PolicyAction.Dropped, source: "QpNoOrder on Patient.diagnosis", enforced: true });
        }
        // The attack has teeth: the same ranking on an orderable field does reorder the groups.
        const byAge = await run(ctx, Patient, context, { groupBy: { fields: ["name"], aggregateBy: [{ field: "age", alias: "oldest", aggregator: "Maximum" }] }, orders: descending("oldest") });
        assert.deepEqual(byAge.data.map((row) => row.name), [...t1].sort((a, b) => b.age - a.age || (a.name < b.name ? -1 : 1)).map((p) => p.name));
        expectEntry(byAge.policy, "age", "Order", { action: PolicyAction.Allowed });
      });

      it("a Count alias orders whatever field it names: COUNT(*) reads none", async () => {
        const shape = { groupBy: { fields: ["doctorId"], aggregateBy: [{ field: "diagnosis", alias: "n", aggregator: "Count" }] }, orders: descending("n") };
        const result = await run(ctx, Patient, context, shape);
        const counts = [1, 2].map((doctorId) => ({ doctorId, n: t1.filter((p) => p.doctorId === doctorId).length })).sort((a, b) => b.n - a.n || a.doctorId - b.doctorId);
        assert.deepEqual(plain(result.data), counts);
        assert.equal(entriesFor(result.policy, "diagnosis", "Order").length, 0);
      });

      it("an order naming neither a public key nor an alias is refused before anything runs", async () => {
        const shape = { groupBy: { fields: ["doctorId"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } };
        await expectLogicError(() => run(ctx, Patient, context, { ...shape, orders: descending("nope") }), unknownOrder("nope"));
        // Where the caller put it, whatever its sort.
        const error = await expectLogicError(() => run(ctx, Patient, context, { ...shape, orders: [{ sort: 2, field: "n" }, { sort: 1, field: "email" }] }), unknownOrder("email"));
        assert.equal(error.path, "orders[1].field");
      });
    });
  }
});
