// 2.1.5 §4.1 under a guard: a typed Select of a reference's member returns the reference with
// its key, and a collection's elements with theirs, only where the caller may Select that key
// as stored. The attack: a caller denied ward.id (or beds.id) who selects ward.name (beds.label)
// must not receive the key through the automatic addition, on any target, memory included.
// Expectations come from wardData(), never from the engine.
import assert from "node:assert/strict";
import { MaskStrategy, PolicyEffect, PolicyFeature, QpEntityCatalogue, QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTier } from "../../lib/index.js";
import { Bed, Ward } from "./more-domain.js";
import { type Guarded, type Shape, bedsOf, cond, entriesFor, wardOracle, whereShape } from "./helpers.js";
import { type PolicyTargetContext, forEachPolicyTarget } from "./policy-targets.js";

type Row = Record<string, any>;

const catalogue = () => new QpEntityCatalogue().expose(Ward, "wards").expose(Bed, "beds");
const denyWardId = { subjectKind: QpSubjectKind.Role, subject: "nowardkey", entity: "wards", field: "id", features: PolicyFeature.Select, effect: PolicyEffect.Deny };
const denyBedId = { subjectKind: QpSubjectKind.Role, subject: "nobedkey", entity: "beds", field: "id", features: PolicyFeature.Select, effect: PolicyEffect.Deny };
const maskWardId = { subjectKind: QpSubjectKind.Role, subject: "maskedwardkey", entity: "wards", field: "id", effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Null } };

async function engineOf(tier: QpTier): Promise<QpPolicyEngine> {
  const engine = new QpPolicyEngine({ tier, entities: catalogue() });
  for (const rule of [denyWardId, denyBedId, maskWardId]) await engine.upsertRuleAsync(rule as never, "reference-keys-test");
  return engine;
}

const contextOf = (engine: QpPolicyEngine, roles: string[]) =>
  engine.prepareAsync(new QpPolicyContext(roles.map((value) => ({ kind: QpSubjectKind.Role, value })), new Map()));

async function run(ctx: PolicyTargetContext, entity: typeof Ward | typeof Bed, context: QpPolicyContext, shape: Shape, dynamic = false): Promise<Guarded<Row>> {
  const guarded = ctx.guard(entity as never, context);
  return (dynamic ? await guarded.toListAsyncDynamic(shape as never) : await guarded.toListAsync(shape as never)) as unknown as Guarded<Row>;
}

/** Bed carries QpRequireWhere on wardId. */
const beds12 = { ...whereShape(cond("wardId", "In", [1, 2])), orders: [{ sort: 1, field: "id" }] };
const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

forEachPolicyTarget("Policy: the key a typed Select adds to a reference (2.1.5 §4.1)", (ctx) => {
  for (const tier of [QpTier.Convenience, QpTier.Strict]) {
    describe(`${QpTier[tier]}`, () => {
      let engine: QpPolicyEngine;
      before(async () => {
        engine = await engineOf(tier);
      });

      it("a caller who may select ward.id gets ward.name with the ward's key; the trace names only what was asked", async () => {
        const result = await run(ctx, Bed, await contextOf(engine, []), { ...beds12, selects: ["id", "ward.name"] });
        assert.deepEqual(plain(result.data), bedsOf(1, 2).map((b) => ({ id: b.id, ward: { name: b.ward.name, id: b.ward.id } })));
        assert.equal(entriesFor(result.policy, "ward.id", "Select").length, 0, "the added key is no decision of the caller's request");
      });

      it("attack: a caller denied ward.id who selects ward.name never receives the ward's key", async () => {
        const context = await contextOf(engine, ["nowardkey"]);
        const result = await run(ctx, Bed, context, { ...beds12, selects: ["id", "ward.name"] });
        assert.deepEqual(plain(result.data), bedsOf(1, 2).map((b) => ({ id: b.id, ward: { name: b.ward.name } })));
        for (const row of result.data) assert.ok(!("id" in row.ward), `ward.id leaked: ${JSON.stringify(row)}`);
        // Through a second member, and through the Segment pipeline (always typed).
        const two = await run(ctx, Bed, context, { ...beds12, selects: ["label", "ward.name", "ward.phone"] });
        assert.deepEqual(plain(two.data), bedsOf(1, 2).map((b) => ({ label: b.label, ward: { name: b.ward.name, phone: b.ward.phoneNumber } })));
        const segment = await run(ctx, Bed, context, { conditionSets: [{ sort: 1, conditionGroup: { conditions: [cond("wardId", "Equal", [2])] } }], selects: ["ward.name"] });
        assert.deepEqual(plain(segment.data), bedsOf(2).map((b) => ({ ward: { name: b.ward.name } })));
      });

      it("attack: a caller denied beds.id who selects beds.label gets the elements without their key", async () => {
        const allowed = await run(ctx, Ward, await contextOf(engine, []), { selects: ["name", "beds.label"] });
        assert.deepEqual(plain(allowed.data), wardOracle.wards.map((w) => ({ name: w.name, beds: w.beds.map((b) => ({ label: b.label, id: b.id })) })));
        const denied = await run(ctx, Ward, await contextOf(engine, ["nobedkey"]), { selects: ["name", "beds.label"] });
        assert.deepEqual(plain(denied.data), wardOracle.wards.map((w) => ({ name: w.name, beds: w.beds.map((b) => ({ label: b.label })) })));
        // A reference inside the elements: the ward's key is decided on its own.
        const nested = await run(ctx, Ward, await contextOf(engine, ["nobedkey"]), { selects: ["name", "beds.ward.name"] });
        assert.deepEqual(plain(nested.data), wardOracle.wards.map((w) => ({ name: w.name, beds: w.beds.map(() => ({ ward: { name: w.name, id: w.id } })) })));
      });

      it("attack: a whole ward (and the wards of whole beds) selected by a caller denied ward.id comes without the ward's key", async () => {
        const context = await contextOf(engine, ["nowardkey"]);
        const whole = await run(ctx, Bed, context, { ...beds12, selects: ["id", "ward"] });
        assert.deepEqual(whole.data.map((row) => row.id), bedsOf(1, 2).map((b) => b.id));
        for (const row of whole.data) {
          assert.equal(row.ward?.name, bedsOf(1, 2).find((b) => b.id === row.id)!.ward.name, "the ward's other members are there");
          assert.ok(!("id" in row.ward), `ward.id leaked: ${JSON.stringify(row)}`);
        }
        const nested = await run(ctx, Ward, context, { selects: ["name", "beds.ward"] });
        for (const ward of nested.data) for (const bed of ward.beds) assert.ok(!("id" in bed.ward), `beds.ward.id leaked: ${JSON.stringify(ward)}`);
        // The collection's elements, denied beds.id, whole.
        const beds = await run(ctx, Ward, await contextOf(engine, ["nobedkey"]), { selects: ["name", "beds"] });
        for (const ward of beds.data) for (const bed of ward.beds) assert.ok(!("id" in bed) && typeof bed.label === "string", `beds.id leaked: ${JSON.stringify(ward)}`);
      });

      it("a dry run adds no key the caller may not select either (it never widens what a caller sees unasked)", async () => {
        const dry = new QpPolicyEngine({ tier, dryRun: true, entities: catalogue() });
        await dry.upsertRuleAsync(denyWardId as never, "reference-keys-test");
        const result = await run(ctx, Bed, await contextOf(dry, ["nowardkey"]), { ...beds12, selects: ["id", "ward.name"] });
        assert.deepEqual(plain(result.data), bedsOf(1, 2).map((b) => ({ id: b.id, ward: { name: b.ward.name } })));
      });

      it("a key the caller sees only transformed is not added (it would identify nothing)", async () => {
        const result = await run(ctx, Bed, await contextOf(engine, ["maskedwardkey"]), { ...beds12, selects: ["id", "ward.name"] });
        assert.deepEqual(plain(result.data), bedsOf(1, 2).map((b) => ({ id: b.id, ward: { name: b.ward.name } })));
      });

      it("dynamic rows get no key they did not ask for, allowed or not", async () => {
        for (const roles of [[], ["nowardkey"]]) {
          const result = await run(ctx, Bed, await contextOf(engine, roles), { ...beds12, selects: ["id", "ward.name"] }, true);
          assert.deepEqual(result.data, bedsOf(1, 2).map((b) => ({ id: b.id, ward: { name: b.ward.name } })));
        }
      });
    });
  }
});
