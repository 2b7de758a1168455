// Guarded plan cache: a Filter seen before is served from its cached plan only for the very same
// caller (decision table and context values). Attempts to get another caller's plan — the same
// subjects with another tenant value, another tenant subject, a string request that reads like
// a cached object — must return the caller's own rows; a hit must be observable (it is counted)
// and give the same rows, totals and trace as the first run.
import assert from "node:assert/strict";
import { QpPolicyContext, QpSubjectKind, parseFilter, parseSegment, parseSummary } from "../../lib/index.js";
import { Patient } from "./domain.js";
import { type Guarded, type Shape, engineWith, guardedCaches, hitsDuring, assertTenant, convenience, cond, idsOf, t1, t2, tenantContext, whereShape } from "./helpers.js";
import { forEachPolicyTarget, type PolicyTargetContext } from "./policy-targets.js";

type Row = Record<string, unknown>;

const request = (): Shape => ({ ...whereShape(cond("name", "IsNotNull")), page: { pageNumber: 1, pageSize: 50 } });
const byId = (rows: readonly { id: number }[]) => [...rows].sort((a, b) => a.id - b.id);

async function run(ctx: PolicyTargetContext, context: QpPolicyContext, shape: unknown): Promise<Guarded<Row>> {
  return (await ctx.guard(Patient, context).toListAsync(shape)) as unknown as Guarded<Row>;
}

forEachPolicyTarget("Policy: the guarded plan cache", (ctx) => {
  const cached = ctx.target !== "memory";

  it("the same request again is a hit (kept from its second sighting) with the same rows, totals and trace; each trace is the result's own", async () => {
    const context = await tenantContext(convenience, "t-1");
    const first = await run(ctx, context, request());
    assert.equal(await hitsDuring(guardedCaches(context).plans, () => run(ctx, context, request())), 0, "a request seen once is not kept");
    let second!: Guarded<Row>;
    assert.equal(await hitsDuring(guardedCaches(context).plans, async () => (second = await run(ctx, context, request()))), cached ? 1 : 0);
    assert.deepEqual(idsOf(second.data as { id: number }[]), idsOf(byId(t1)));
    assert.equal(second.totalCount, t1.length);
    assert.deepEqual(second.policy, first.policy);
    first.policy.entries.length = 0;
    const third = await run(ctx, context, request());
    assert.deepEqual(third.policy, second.policy);
    assert.ok(third.policy.entries.length > 0);
  });

  it("the same subjects with another tenant value get their own rows, never the cached tenant's", async () => {
    const forTenant = (tenant: string) => convenience.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, "nurse").withValue("tenantId", tenant));
    for (const [tenant, rows] of [["t-1", t1], ["t-2", t2], ["t-1", t1], ["t-2", t2]] as const) {
      const result = await run(ctx, await forTenant(tenant), request());
      assert.deepEqual(idsOf(result.data as { id: number }[]), idsOf(byId(rows)), tenant);
      assert.equal(result.totalCount, rows.length);
      assertTenant(result.data, tenant);
    }
  });

  it("a tenant subject and value of t-2 after t-1's cached plan gets t-2's rows; the request as JSON text too", async () => {
    const t1Context = await tenantContext(convenience, "t-1");
    for (let i = 0; i < 2; i++) await run(ctx, t1Context, request());
    const t2Context = await tenantContext(convenience, "t-2");
    for (const shape of [request(), JSON.stringify(request())]) {
      const result = await run(ctx, t2Context, shape);
      assert.deepEqual(idsOf(result.data as { id: number }[]), idsOf(byId(t2)));
      assertTenant(result.data, "t-2");
    }
  });

  it("a request that differs only in a value is a miss and is checked afresh (a denied operator is still refused)", async () => {
    const context = await tenantContext(convenience, "t-1");
    const allowed = whereShape(cond("mail", "Equal", [t1[0]!.email]));
    for (let i = 0; i < 2; i++) await run(ctx, context, allowed);
    const hits = await hitsDuring(guardedCaches(context).plans, () => run(ctx, context, whereShape(cond("mail", "Equal", [t1[1]!.email]))));
    assert.equal(hits, 0);
    await assert.rejects(() => run(ctx, context, whereShape(cond("mail", "Contains", ["a"]))), (error: Error & { errorCode?: number }) => error.name === "PolicyException");
  });

  it("a context value JSON cannot state exactly (a function) is never cached", async () => {
    const context = await convenience.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Tenant, "t-1").withValue("tenantId", "t-1").withValue("probe", () => "x"));
    for (let i = 0; i < 2; i++) await run(ctx, context, request());
    assert.equal(await hitsDuring(guardedCaches(context).plans, () => run(ctx, context, request())), 0);
  });

  it("a cached Segment or Summary is never served to another tenant", async () => {
    const segment = { conditionSets: [{ sort: 1, conditionGroup: request().conditionGroup }, { sort: 2, intersection: "Except", conditionGroup: whereShape(cond("name", "IsNull")).conditionGroup }] };
    const summary = { ...whereShape(cond("name", "IsNotNull")), groupBy: { fields: ["tenantId"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } };
    const forTenant = (tenant: string) => convenience.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, "nurse").withValue("tenantId", tenant));
    for (const [tenant, rows] of [["t-1", t1], ["t-1", t1], ["t-2", t2], ["t-1", t1], ["t-2", t2]] as const) {
      const context = await forTenant(tenant);
      const segmentRows = await run(ctx, context, segment);
      assert.deepEqual(idsOf(segmentRows.data as { id: number }[]), idsOf(byId(rows)), `segment for ${tenant}`);
      const groups = await run(ctx, context, summary);
      const expected = rows.length >= 5 ? [{ tenantId: tenant, n: rows.length }] : [];
      assert.deepEqual(groups.data, expected, `summary for ${tenant}`);
    }
  });

  it("toListAsyncOf reads JSON as the kind it is told: toListAsync's rows, totals and trace, a hit on repeat, and another shape refused as that kind's parser refuses it", async () => {
    const context = await tenantContext(convenience, "t-1");
    const guard = () => ctx.guard(Patient, context);
    const told = async (kind: "filter" | "segment" | "summary", json: unknown) => (await guard().toListAsyncOf(kind, json)) as unknown as Guarded<Row>;
    const expected = await run(ctx, context, request());
    await told("filter", request());
    let again!: Guarded<Row>;
    assert.equal(await hitsDuring(guardedCaches(context).plans, async () => (again = await told("filter", request()))), cached ? 1 : 0);
    assert.deepEqual(again.data, expected.data);
    assert.equal(again.totalCount, expected.totalCount);
    assert.deepEqual(again.policy, expected.policy);
    // A Segment and a Summary sent to a Filter route, and the other way round: each kind's own parser decides, whatever the members say.
    const segment = { conditionSets: [{ sort: 1, conditionGroup: request().conditionGroup }] };
    const summary = { groupBy: { fields: ["tenantId"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } };
    for (const [kind, json, parser] of [["filter", segment, parseFilter], ["filter", summary, parseFilter], ["segment", request(), parseSegment], ["summary", segment, parseSummary]] as const) {
      const refusal = (() => {
        try {
          parser(json);
        } catch (error) {
          return error as Error & { code?: string; path?: string };
        }
        return assert.fail(`${kind}: the parser accepts ${JSON.stringify(json)}`);
      })();
      for (let i = 0; i < 3; i++) {
        await assert.rejects(() => told(kind, json), (error: Error & { code?: string; path?: string }) => error.name === refusal.name && error.code === refusal.code && error.path === refusal.path, `${kind} ${i}`);
      }
    }
    // A kind that is none of the three is refused as such, before any parser or cache sees it.
    for (const kind of ["Filter", "filter ", "", "__proto__", undefined]) {
      await assert.rejects(() => told(kind as never, request()), (error: Error & { code?: string; path?: string }) => error.name === "LogicException" && error.code === "InvalidEnumValue" && error.path === "kind", String(kind));
    }
    // The same JSON under two kinds is two requests: a Filter's cached plan never answers the Summary route, which refuses it.
    const both = whereShape(cond("name", "IsNotNull"));
    for (let i = 0; i < 2; i++) await told("filter", both);
    for (let i = 0; i < 2; i++) {
      await assert.rejects(() => told("summary", both), (error: Error & { code?: string }) => error.code === "SummaryMustHasGroupBy", `summary ${i}`);
    }
  });

  it("the caches are the engine's: another engine never hits them, clearCaches() empties one engine's and not another's", async () => {
    const [a, b] = [engineWith({}), engineWith({})];
    const [contextA, contextB] = [await tenantContext(a, "t-1"), await tenantContext(b, "t-1")];
    for (let i = 0; i < 2; i++) await run(ctx, contextA, request());
    assert.equal(await hitsDuring(b.caches.plans, () => run(ctx, contextB, request())), 0, "engine b does not see engine a's plan");
    await run(ctx, contextB, request()); // b's second sighting: kept by b
    assert.equal(await hitsDuring(a.caches.plans, () => run(ctx, contextA, request())), cached ? 1 : 0);
    a.clearCaches();
    assert.equal(a.caches.plans.bytes(), 0);
    assert.equal(await hitsDuring(a.caches.plans, () => run(ctx, contextA, request())), 0, "cleared: built afresh");
    const third = await run(ctx, contextB, request());
    assert.equal(b.caches.plans.stats.hits > 0, cached, "engine b kept its plan");
    assert.deepEqual(idsOf(third.data as { id: number }[]), idsOf(byId(t1)));
  });
});
