// Sanitized shapes (lib/guard/sanitized-shapes.ts): a guarded Filter or Segment that differs
// from an earlier one only in its values and page reuses that request's policy decisions with its
// own values bound in. Reuse must be invisible: random requests (allowed and denied fields,
// nested Or/And, selects, orders, pages, values of the wrong format, a page above the cap) give
// exactly what a fresh engine gives — SQL, parameters, trace, rows, or the same error — and the
// reuse must be observable (counted), happen only for the same caller, and never for a Summary
// or a dry run.
import assert from "node:assert/strict";
import { LogicException, PolicyErrorCode, QpPolicyContext, QpSubjectKind } from "../../lib/index.js";
import { shapeKeyOf } from "../../lib/guard/sanitized-shapes.js";
import { Patient } from "./domain.js";
import { type Guarded, type Shape, guardedCaches, hitsDuring, assertTenant, byId, cond, engineWith, expectPolicyError, idsOf, t1, t2, tenantContext, whereShape } from "./helpers.js";
import { forEachPolicyTarget, type PolicyTargetContext } from "./policy-targets.js";

type Row = Record<string, unknown>;

/** A deterministic generator (the seed names a failing case). */
function random(seed: number) {
  let s = seed >>> 0;
  const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]! };
}
type Random = ReturnType<typeof random>;

/**
 * A Filter or Segment whose structure comes from `shape` and whose values and page numbers come
 * from `values`: the same `shape` seed with other `values` seeds gives requests of one shape.
 */
function randomRequest(shapeSeed: number, valueSeed: number): Shape {
  const s = random(shapeSeed);
  const v = random(valueSeed);
  const text = () => v.pick(["Patient 01", "Patient 1", "atient", "p1@example.com", "flu", "A", "", "%", "x'); --"]);
  const number = () => (v.next() < 0.05 ? "not a number" : v.int(45));
  const condition = (sort: number): Shape => {
    const field = s.pick(["name", "name", "mail", "diagnosis", "ward", "id", "doctorId", "age", "ssn", "notes"]);
    const numeric = field === "id" || field === "doctorId" || field === "age";
    const operator = numeric ? s.pick(["Equal", "GreaterThan", "LessThanOrEqual", "Between", "In", "NotEqual"])
      : field === "mail" ? s.pick(["Equal", "In", "In", "Contains"])
        : s.pick(["Equal", "IEqual", "Contains", "IContains", "StartsWith", "In", "NotIn", "IsNull"]);
    const value: () => unknown = numeric ? number : text;
    const values = operator === "IsNull" ? [] : operator === "Between" ? [value(), value()] : operator.endsWith("In") ? Array.from({ length: 1 + v.int(3) }, value) : [value()];
    return { sort, field, operator, values, dataType: numeric ? "Number" : "Text" };
  };
  const group = (depth: number, sort: number): Shape => ({
    sort,
    connector: s.pick(["And", "Or"]),
    conditions: Array.from({ length: 1 + s.int(3) }, (_, i) => condition(i + 1)),
    subConditionGroups: depth < 2 && s.next() < 0.4 ? [group(depth + 1, 1)] : [],
  });
  const common: Shape = {};
  if (s.next() < 0.5) common.selects = s.pick([["id", "name"], ["id", "mail", "diagnosis"], ["name", "ward"], ["id", "internalNote"]]);
  if (s.next() < 0.6) common.orders = s.pick([[{ sort: 1, field: "name", direction: "Ascending" }, { sort: 2, field: "id", direction: "Ascending" }], [{ sort: 1, field: "id", direction: "Descending" }], [{ sort: 1, field: "diagnosis", direction: "Ascending" }]]);
  if (s.next() < 0.7) common.page = { pageNumber: 1 + v.int(3), pageSize: v.next() < 0.05 ? 5000 : 1 + v.int(15) };
  if (s.next() < 0.3) {
    const sets = 2 + s.int(2);
    return { ...common, conditionSets: Array.from({ length: sets }, (_, i) => ({ sort: i + 1, intersection: i === 0 ? null : s.pick(["Union", "Intersect", "Except"]), conditionGroup: group(1, 1) })) };
  }
  return { ...common, conditionGroup: group(0, 1) };
}

type Outcome = { ok: Row } | { error: Row };

async function outcomeOf(action: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: JSON.parse(JSON.stringify(await action())) as Row };
  } catch (error) {
    if (!(error instanceof LogicException)) throw error;
    const e = error as LogicException & { errorCode?: number; path?: unknown };
    return { error: { name: e.name, code: e.code, errorCode: e.errorCode, message: e.message, path: e.path } };
  }
}

async function run(ctx: PolicyTargetContext, context: QpPolicyContext, shape: unknown): Promise<Guarded<Row>> {
  return (await ctx.guard(Patient, context).toListAsync(shape)) as unknown as Guarded<Row>;
}

/** What a caller gets: statements and trace (database targets), then rows, totals and trace. */
async function everything(ctx: PolicyTargetContext, context: QpPolicyContext, shape: Shape): Promise<Outcome[]> {
  const statements = ctx.target === "memory" ? [] : [await outcomeOf(() => ctx.guard(Patient, context).toStatementsAsync(shape))];
  return [...statements, await outcomeOf(() => run(ctx, context, shape))];
}

/**
 * When a call should reuse a sanitized shape: the request has no cached plan of its own (a plan
 * is kept from its second successful build) and the shape was sanitized successfully twice
 * (a sanitized shape is kept from its second sighting).
 */
class ReuseModel {
  private sanitized = 0;
  private readonly plans = new Map<string, number>();

  call(request: Shape, ok: boolean): boolean {
    const key = JSON.stringify(request);
    const built = this.plans.get(key) ?? 0;
    if (built >= 2) return false;
    const reuse = this.sanitized >= 2;
    if (ok) {
      this.plans.set(key, built + 1);
      if (!reuse) this.sanitized++;
    }
    return reuse;
  }
}

forEachPolicyTarget("Policy: sanitized shapes reused for other values", (ctx) => {
  const cached = ctx.target !== "memory";

  it("120 random Filters and Segments, each with two more value draws, give what a fresh engine gives (SQL, parameters, trace, rows or error)", async () => {
    let reused = 0;
    let expected = 0;
    for (let shapeSeed = 1; shapeSeed <= 120; shapeSeed++) {
      const engine = engineWith({});
      const context = await tenantContext(engine);
      let model = new ReuseModel();
      let table = await engine.decisionsAsync(context);
      const first = randomRequest(shapeSeed, 1000 + shapeSeed);
      for (let i = 0; i < 2; i++) model.call(first, "ok" in (await outcomeOf(() => run(ctx, context, first))));
      for (const valueSeed of [2000 + shapeSeed, 3000 + shapeSeed]) {
        const request = randomRequest(shapeSeed, valueSeed);
        let got!: Outcome[];
        reused += await hitsDuring(guardedCaches(context).shapes, async () => (got = await everything(ctx, context, request)));
        for (const outcome of got) expected += model.call(request, "ok" in outcome) ? 1 : 0;
        const fresh = engineWith({});
        assert.deepEqual(got, await everything(ctx, await tenantContext(fresh), request), `shape ${shapeSeed}, values ${valueSeed}: ${JSON.stringify(request)}`);
        // The fresh engines fill the bounded cache of decision tables; when it is cleared, this
        // engine's next table is a new one, and nothing cached under the old one is reachable.
        const now = await engine.decisionsAsync(context);
        if (now !== table) [table, model] = [now, new ReuseModel()];
      }
    }
    assert.equal(reused, cached ? expected : 0, "reused exactly when an earlier request of the shape was sanitized twice and the request itself has no plan");
    if (cached) assert.ok(expected > 120, `${expected} reuses expected`);
  });

  it("a value of the wrong format or count on a reused shape is the same LogicException, named where the caller put it", async () => {
    const engine = engineWith({});
    const context = await tenantContext(engine);
    const shape = (values: unknown[]) => ({
      conditionGroup: { connector: "Or", conditions: [cond("name", "Equal", ["Patient 01"], 1)], subConditionGroups: [{ sort: 1, connector: "And", conditions: [cond("ward", "Equal", ["A"], 1), cond("doctorId", "Between", values, 2, "Number")] }] },
    });
    for (let i = 0; i < 2; i++) await run(ctx, context, shape([1, 2]));
    for (const values of [["one", 2], [1, "2024-13-45"], [1], [1, 2, 3], []]) {
      const before = guardedCaches(context).shapes.stats.hits;
      const reusedError = await outcomeOf(() => run(ctx, context, shape(values)));
      assert.equal(guardedCaches(context).shapes.stats.hits - before, cached ? 1 : 0, "the values were checked on the reused shape");
      const freshError = await outcomeOf(async () => run(ctx, await tenantContext(engineWith({})), shape(values)));
      assert.ok("error" in reusedError, JSON.stringify(reusedError));
      assert.deepEqual(reusedError, freshError);
      assert.match(String((reusedError as { error: Row }).error.path), /^conditionGroup\.subConditionGroups\[0\]\.conditions\[1\]/);
    }
    const hits = await hitsDuring(guardedCaches(context).shapes, () => run(ctx, context, shape([3, 4])));
    assert.equal(hits, cached ? 1 : 0, "the shape is still reused after the refused values");
  });

  it("a page above MaxPageSize on a reused shape is refused (CapExceeded); a page below it is bound as given", async () => {
    const engine = engineWith({ caps: { maxPageSize: 10 } });
    const context = await tenantContext(engine);
    const request = (pageSize: number, pageNumber = 1) => ({ ...whereShape(cond("name", "IsNotNull")), page: { pageNumber, pageSize } });
    for (let i = 0; i < 2; i++) await run(ctx, context, request(10));
    await expectPolicyError(() => run(ctx, context, request(11)), PolicyErrorCode.CapExceeded, "MaxPageSize");
    let page!: Guarded<Row>;
    assert.equal(await hitsDuring(guardedCaches(context).shapes, async () => (page = await run(ctx, context, request(3, 2)))), cached ? 1 : 0);
    assert.deepEqual(idsOf(page.data as { id: number }[]), idsOf(byId(t1)).slice(3, 6));
    assert.equal(page.pageSize, 3);
  });

  it("a request without a page is another shape than one with a page: each keeps its own trace", async () => {
    const context = await tenantContext(engineWith({}));
    const paged = { ...whereShape(cond("ward", "Equal", ["A"])), page: { pageNumber: 1, pageSize: 5 } };
    for (let i = 0; i < 2; i++) await run(ctx, context, paged);
    const unpaged = await run(ctx, context, whereShape(cond("ward", "Equal", ["B"])));
    assert.ok(unpaged.policy.entries.some((e) => e.field === "page" && e.feature === "Page"), "the injected page is traced");
    const repaged = await run(ctx, context, { ...paged, page: { pageNumber: 2, pageSize: 5 } });
    assert.ok(!repaged.policy.entries.some((e) => e.field === "page"), JSON.stringify(repaged.policy.entries));
  });

  it("the same shape for another tenant (value or subject) binds that caller's forced predicate, never the first one's", async () => {
    const engine = engineWith({});
    const forTenant = (tenant: string) => engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, "nurse").withValue("tenantId", tenant));
    const request = (ward: string) => ({ ...whereShape(cond("ward", "In", [ward, "C"])), page: { pageNumber: 1, pageSize: 40 } });
    for (let i = 0; i < 2; i++) await run(ctx, await forTenant("t-1"), request("A"));
    for (const [tenant, rows, context] of [["t-2", t2, await forTenant("t-2")], ["t-2", t2, await tenantContext(engine, "t-2")], ["t-1", t1, await forTenant("t-1")]] as const) {
      for (const ward of ["B", "A"]) {
        const result = await run(ctx, context, request(ward));
        assert.deepEqual(idsOf(result.data as { id: number }[]), idsOf(byId(rows.filter((p) => p.ward === ward))), `${tenant} ward ${ward}`);
        assertTenant(result.data, tenant);
      }
    }
  });

  it("the default projection is worked out once per caller: other shapes without selects get a fresh engine's columns, trace and rows; a caller changing a trace changes no other", async () => {
    const engine = engineWith({});
    const context = await tenantContext(engine);
    const shapes = [whereShape(cond("ward", "Equal", ["A"])), whereShape(cond("name", "StartsWith", ["Patient 1"])), { orders: [{ sort: 1, field: "id", direction: "Descending" }], page: { pageNumber: 2, pageSize: 4 } }];
    for (const [i, shape] of [...shapes, ...shapes].entries()) {
      const got = await run(ctx, context, shape);
      const fresh = await run(ctx, await tenantContext(engineWith({})), shape);
      assert.deepEqual(JSON.parse(JSON.stringify(got)), JSON.parse(JSON.stringify(fresh)), `request ${i}`);
      assert.ok(got.policy.entries.some((e) => e.field === "mail" && e.feature === "Select"), JSON.stringify(got.policy.entries));
      assert.ok(got.policy.entries.some((e) => e.field === "internalNote" && e.action === "Dropped"), "the unselectable column is traced as dropped");
      for (const entry of got.policy.entries) Object.assign(entry, { field: "tampered", action: "Allowed" });
      got.policy.entries.push({ ...got.policy.entries[0]!, field: "extra" });
    }
  });

  it("a Summary and a dry run are never reused (their checks read values)", async () => {
    const engine = engineWith({});
    const context = await tenantContext(engine);
    const summary = (minimum: number) => ({ conditionGroup: { connector: "And", conditions: [cond("id", "GreaterThan", [minimum])] }, groupBy: { fields: ["diagnosis"], aggregateBy: [{ aggregator: "Count", alias: "patients" }] } });
    for (let i = 0; i < 3; i++) assert.equal(await hitsDuring(guardedCaches(context).shapes, () => run(ctx, context, summary(i))), 0);
    const dry = engineWith({ dryRun: true });
    const dryContext = await tenantContext(dry);
    for (let i = 0; i < 3; i++) assert.equal(await hitsDuring(guardedCaches(dryContext).shapes, () => run(ctx, dryContext, { ...whereShape(cond("id", "GreaterThan", [i])), page: { pageNumber: 1, pageSize: 5 } })), 0);
  });
});

describe("Sanitized shapes: the shape key", () => {
  // The key decides which sanitized request a new one is bound into: two shapes that differ in
  // anything but values and page numbers must never share one. The reference is the plain JSON
  // of the same stripped shape (slower, obviously unambiguous); field texts hold the key's own
  // punctuation, brackets and digits.
  const fields = ["a", "b", "1:a", "a]", "[", "null;", "", "0;", "a1:b"];
  const reference = (filter: Record<string, unknown>) => {
    const strip = (g: { sort: number; connector: string; conditions: { sort: number; field: string; dataType: string; operator: string }[]; subConditionGroups: unknown[] }): unknown => [
      g.sort, g.connector, g.conditions.map((c) => [c.sort, c.field, c.dataType, c.operator]), (g.subConditionGroups as never[]).map(strip),
    ];
    const orders = filter.orders as { sort: number; field: string; direction: string }[] | null;
    return JSON.stringify(["f", filter.conditionGroup ? strip(filter.conditionGroup as never) : null, orders ? orders.map((o) => [o.sort, o.field, o.direction]) : null, filter.selects ?? null, filter.page ? 1 : 0]);
  };

  it("differs exactly when the stripped shapes differ; values and page numbers never count", () => {
    const filters: Record<string, unknown>[] = [];
    const condition = (field: string, operator = "Equal", sort = 1) => ({ sort, field, dataType: "Text", operator, values: [field] });
    const group = (conditions: unknown[], subConditionGroups: unknown[] = [], connector = "And", sort = 0) => ({ sort, connector, conditions, subConditionGroups });
    for (const f of fields) {
      for (const g of fields) {
        filters.push({ conditionGroup: group([condition(f), condition(g, "Equal", 2)]), orders: null, selects: null, page: null });
        filters.push({ conditionGroup: group([condition(f)], [group([condition(g)])]), orders: null, selects: null, page: null });
        for (const page of [{ pageNumber: 2, pageSize: 5 }, null]) filters.push({ conditionGroup: group([condition(f)], [], "Or"), orders: [{ sort: 1, field: g, direction: "Ascending" }], selects: [f, g], page });
        filters.push({ conditionGroup: null, orders: null, selects: [`${f}${g}`], page: null });
        filters.push({ conditionGroup: null, orders: null, selects: [f, g], page: null });
      }
      filters.push({ conditionGroup: group([condition(f, "NotEqual")]), orders: null, selects: [], page: null });
      filters.push({ conditionGroup: group([condition(f)], [], "And", 3), orders: [], selects: null, page: { pageNumber: 1, pageSize: 1 } });
    }
    const byKey = new Map<string, string>();
    const byReference = new Map<string, string>();
    for (const filter of filters) {
      const key = shapeKeyOf("filter", filter)!;
      const expected = reference(filter);
      if (byKey.has(key)) assert.equal(byKey.get(key), expected, `one key for two shapes: ${byKey.get(key)} and ${expected}`);
      if (byReference.has(expected)) assert.equal(byReference.get(expected), key, `two keys for one shape: ${expected}`);
      byKey.set(key, expected);
      byReference.set(expected, key);
      const otherValues = JSON.parse(JSON.stringify(filter)) as Record<string, unknown>;
      for (const c of ((otherValues.conditionGroup as { conditions?: { values: unknown[] }[] } | null)?.conditions ?? [])) c.values = ["other", 1];
      if (otherValues.page) otherValues.page = { pageNumber: 9, pageSize: 99 };
      assert.equal(shapeKeyOf("filter", otherValues), key, "values and page numbers are not part of the shape");
    }
    assert.ok(byKey.size > 300, String(byKey.size));
  });
});
