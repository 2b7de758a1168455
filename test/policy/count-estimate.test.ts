// count "estimated" (issue #44), on every target. The planner's statistics cover every tenant's
// rows: an estimate of one tenant's rows would be computed from the others' (a tenant could watch
// another's table grow, or a rare value appear). So a caller under forced predicates never gets
// the planner's estimate: up to MaxExactEstimate rows the total is counted exactly, above it there
// is none. A caller whose scope is the whole table (no forced predicate) may get the estimate: it
// tells no more than the exact count the caller may ask for. SQLite has no estimate (exact or
// none); an array counts exactly.
import assert from "node:assert/strict";
import { LogicException, PolicyException, QpConfigurationError, QpEntityCatalogue, QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTier, toList, toListAsync } from "../../lib/index.js";
import { Doctor, Patient } from "./domain.js";
import { patientsOf } from "./helpers.js";
import { forEachPolicyTarget } from "./policy-targets.js";

type Page = { data: { id: number }[]; totalCount: number | null; pageCount: number | null; count?: string; hasNextPage?: boolean };

const entities = () => new QpEntityCatalogue().expose(Patient, "patients").expose(Doctor, "doctors");

forEachPolicyTarget("Policy: count estimated", (ctx) => {
  const engineWith = (maxExactEstimate: number) => new QpPolicyEngine({ tier: QpTier.Convenience, entities: entities(), caps: { maxExactEstimate } });
  const tenant = (engine: QpPolicyEngine, id: string) => engine.prepareAsync(new QpPolicyContext([{ kind: QpSubjectKind.Tenant, value: id }], new Map([["tenantId", id]])));
  const run = async (entity: typeof Patient | typeof Doctor, context: QpPolicyContext, shape: object) => (await ctx.guard(entity as never, context).toListAsync(shape as never)) as unknown as Page;

  it("under a tenant's forced predicate: exact up to MaxExactEstimate, no total above it, never the planner's estimate", async () => {
    const t1 = patientsOf("t-1").length;
    const t2 = patientsOf("t-2").length;
    assert.ok(t2 <= 10 && t1 > 10, "the fixture: t-2 holds at most 10 patients, t-1 more");
    const engine = engineWith(10);
    const small = await run(Patient, await tenant(engine, "t-2"), { page: { pageNumber: 1, pageSize: 4, count: "estimated" } });
    assert.equal(small.count, "exact");
    assert.equal(small.totalCount, t2);
    assert.equal(small.pageCount, Math.ceil(t2 / 4));
    assert.equal(small.hasNextPage, true);
    const large = await run(Patient, await tenant(engine, "t-1"), { page: { pageNumber: 1, pageSize: 4, count: "estimated" } });
    assert.equal(large.count, "none", "a scoped caller is never given the planner's estimate");
    assert.equal(large.totalCount, null);
    assert.equal(large.pageCount, null);
    assert.equal(large.hasNextPage, true);
    assert.equal(large.data.length, 4);
    // With a cap above the tenant's rows the count is exact again.
    const wide = await run(Patient, await tenant(engineWith(1000), "t-1"), { page: { pageNumber: 1, pageSize: 4, count: "estimated" } });
    assert.equal(wide.count, "exact");
    assert.equal(wide.totalCount, t1);
  });

  it("a caller whose scope is the whole table gets the planner's estimate above the cap (SQLite: none; an array: exact)", async () => {
    const engine = engineWith(1);
    const page = await run(Doctor, await engine.prepareAsync(new QpPolicyContext()), { page: { pageNumber: 1, pageSize: 1, count: "estimated" } });
    assert.equal(page.data.length, 1);
    assert.equal(page.hasNextPage, true);
    if (ctx.target === "postgres" || ctx.target === "mariadb") {
      assert.equal(page.count, "estimated");
      assert.equal(typeof page.totalCount, "number");
      assert.ok(page.totalCount! > 1);
    } else if (ctx.target === "sqlite") {
      assert.equal(page.count, "none");
      assert.equal(page.totalCount, null);
    } else {
      assert.equal(page.count, "exact");
      assert.equal(page.totalCount, 2);
    }
  });

  it("an entity's counting (QpPolicyOptions.counts): its default for a page without a count, its max refused above (CapExceeded), also after a cached shape", async () => {
    const engine = new QpPolicyEngine({ tier: QpTier.Convenience, entities: entities(), caps: { maxExactEstimate: 10 }, counts: { patients: { default: "none", max: "estimated" }, "*": { default: "estimated" } } });
    const t1 = await tenant(engine, "t-1");
    const plainPage = await run(Patient, t1, { orders: [{ sort: 1, field: "id" }], page: { pageNumber: 1, pageSize: 5 } }) as Page & { policy: { entries: { field: string; action: string }[] } };
    assert.equal(plainPage.totalCount, null);
    assert.equal(plainPage.count, "none");
    assert.equal(plainPage.hasNextPage, true);
    assert.ok(plainPage.policy.entries.some((e) => e.field === "page.count" && e.action === "Defaulted"), JSON.stringify(plainPage.policy.entries));
    // The same shape again (the sanitized shape is cached), now asking for more than the max.
    for (let i = 0; i < 2; i++) {
      await assert.rejects(async () => run(Patient, t1, { orders: [{ sort: 1, field: "id" }], page: { pageNumber: 1, pageSize: 5, count: "exact" } }),
        (error: unknown) => error instanceof PolicyException && error.code === "CapExceeded" && error.path === "page.count");
    }
    const estimated = await run(Patient, t1, { orders: [{ sort: 1, field: "id" }], page: { pageNumber: 1, pageSize: 5, count: "estimated" } });
    assert.equal(estimated.count, "none", "scoped: bounded, above the cap of 10");
    // Without a page: the injected page gets the default too.
    assert.equal((await run(Patient, t1, {})).totalCount, null);
    // "*" for the other entities: doctors default to estimated (2 rows; a planner that never saw the table may guess above the cap).
    const doctors = await run(Doctor, await engine.prepareAsync(new QpPolicyContext()), { page: { pageNumber: 1, pageSize: 1 } });
    if (doctors.count === "exact") assert.equal(doctors.totalCount, 2);
    else assert.equal(doctors.count, "estimated");
    assert.equal(doctors.hasNextPage, true);
  });

  it("counts are checked at startup: a public name not exposed, a default above the max, a mode that is none of the three", () => {
    assert.throws(() => new QpPolicyEngine({ entities: entities(), counts: { nurses: { default: "none" } } }), (e: unknown) => e instanceof QpConfigurationError && /nurses/.test(e.message));
    assert.throws(() => new QpPolicyEngine({ entities: entities(), counts: { patients: { default: "exact", max: "none" } } }), (e: unknown) => e instanceof QpConfigurationError && /asks more than the max/.test(e.message));
    assert.throws(() => new QpPolicyEngine({ entities: entities(), counts: { patients: { default: "some" as never } } }), QpConfigurationError);
  });

  it("a Summary counts its groups exactly or not at all: estimated is refused", async () => {
    const engine = engineWith(10);
    await assert.rejects(async () => run(Patient, await tenant(engine, "t-1"), { groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, page: { pageNumber: 1, pageSize: 5, count: "estimated" } }),
      (error: unknown) => error instanceof LogicException && error.code === "CountModeIsNotSupported");
    const none = await run(Patient, await tenant(engine, "t-1"), { groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, page: { pageNumber: 1, pageSize: 1, count: "none" } });
    assert.equal(none.totalCount, null);
    assert.equal(none.hasNextPage, true);
  });
});

describe("count estimated, unguarded", () => {
  it("a result under MaxExactEstimate is counted exactly, on an array as on a database", () => {
    const rows = [1, 2, 3].map((id) => Object.assign(new Doctor(), { id, name: `Dr ${id}`, secretCode: "x", patients: [] }));
    const page = toList(rows, { page: { pageNumber: 1, pageSize: 2, count: "estimated" } });
    assert.equal(page.count, "exact");
    assert.equal(page.totalCount, 3);
    assert.equal(page.hasNextPage, true);
    void toListAsync;
  });
});
