// The policy as a transform of the plan (lib/guard/plan-pass.ts): the plan is built once from
// the caller's parsed request, through what the policy resolved and decided at each of its places
// (placements.ts), and what the guard adds (forced predicates, the group floor, the page, the
// projection) is added to that plan. These tests pin the plan the transform makes, that the
// caller's predicate carries no forced condition, that a dropped use never enters the plan, and
// the few behaviours the move decided: a caller's alias that takes the floor's name, and a
// context value of the wrong type named as the forced condition's, not as a place in the
// caller's request.
import assert from "node:assert/strict";
import { Column, Entity, PrimaryColumn } from "typeorm";
import { Operator, QpEntity, QpForceWhere, QpPolicyContext, applyPolicy, inMemory } from "../../lib/index.js";
import { parseShape } from "../../lib/pipeline/stages.js";
import { planParsed } from "../../lib/pipeline/stages.js";
import type { ShapePlan } from "../../lib/plan/nodes.js";
import { modelOfClass } from "../../lib/model/entity-model.js";
import type { Comparison, HavingComparison, Predicate, SummaryPlan } from "../../lib/plan/nodes.js";
import { sanitize } from "../../lib/guard/sanitize.js";
import { forcedClause, groupFloorAlias, transformPlan } from "../../lib/guard/plan-pass.js";
import type { ShapeKind } from "../../lib/parse/parse-shapes.js";
import { Patient } from "./domain.js";
import { type Shape, and, cond, convenience, expectLogicError, tenantContext, whereShape } from "./helpers.js";

@QpEntity()
@Entity("tp_ledger")
class Ledger {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenantNo" })
  @Column({ type: "int" }) tenantNo!: number;
}

/** The policy's decisions and the request's plan, before and after the policy's transform. */
async function planned(kind: ShapeKind, shape: Shape) {
  const context = await tenantContext(convenience, "t-1");
  const model = modelOfClass(Patient);
  const parsed = parseShape(kind, shape, convenience.options.caps);
  const sanitized = sanitize(convenience, context, model, kind, parsed, false, await convenience.decisionsAsync(context));
  const before = planParsed(model, kind, parsed, convenience.options.caps, sanitized.placements);
  return { sanitized, before, after: transformPlan(before, sanitized.additions) };
}

/** `tenantId = 't-1'`, the forced predicate of Patient for tenant t-1. */
function assertForced(predicate: Predicate | null | undefined) {
  assert.ok(predicate && predicate.kind === "compare", `a forced comparison, got ${predicate?.kind}`);
  const compare = predicate as Comparison;
  assert.deepEqual([compare.left.column.propertyPath, compare.operator, compare.values], ["tenantId", Operator.Equal, ["t-1"]]);
}

const whereOf = (p: ShapePlan) => (p.kind === "segment" ? null : p.plan.where);

describe("The policy as a transform of the plan", () => {
  it("Filter: the caller's predicate holds the caller's conditions only; the plan gets and(forced, caller), the caller's as one item", async () => {
    const { sanitized, before, after } = await planned("filter", whereShape(cond("mail", "Equal", ["a@b.c"]), cond("id", "GreaterThan", [3], 2)));
    assert.deepEqual(["conditionGroup.conditions[0].field", "conditionGroup.conditions[1].field"].map((at) => sanitized.placements.canonical(at)), ["email", "id"]);
    const callerItems = (whereOf(before) as { kind: string; items: readonly Comparison[] });
    assert.equal(callerItems.kind, "and");
    assert.deepEqual(callerItems.items.map((c) => c.left.column.propertyPath), ["email", "id"], "no forced condition in the caller's predicate");
    assert.deepEqual(sanitized.additions.forced.map((c) => [c.field, c.operator, c.values]), [["tenantId", Operator.Equal, ["t-1"]]]);
    const callers = whereOf(before)!;
    const where = whereOf(after)!;
    assert.equal(where.kind, "and");
    const items = (where as { items: readonly Predicate[] }).items;
    assert.equal(items.length, 2);
    assertForced(items[0]);
    assert.equal(items[1], callers, "the caller's predicate, untouched, as one item");
  });

  it("Filter without a condition: the forced predicate alone", async () => {
    const { before, after } = await planned("filter", {});
    assert.equal(whereOf(before), null);
    assertForced(whereOf(after));
  });

  it("Segment: every set gets the forced predicate; a Segment without sets gets one set of it", async () => {
    const { after } = await planned("segment", {
      conditionSets: [{ sort: 1, conditionGroup: and(cond("id", "LessThan", [10])) }, { sort: 2, intersection: "Union", conditionGroup: and(cond("id", "GreaterThan", [30])) }],
    });
    assert.equal(after.kind, "segment");
    const sets = after.kind === "segment" ? after.plan.sets : [];
    assert.equal(sets.length, 2);
    for (const set of sets) {
      assert.equal(set.where?.kind, "and");
      assertForced((set.where as { items: readonly Predicate[] }).items[0]);
    }
    const empty = await planned("segment", { conditionSets: [] });
    const emptySets = empty.after.kind === "segment" ? empty.after.plan.sets : [];
    assert.equal(emptySets.length, 1);
    assert.equal(emptySets[0]!.intersection, null);
    assertForced(emptySets[0]!.where);
  });

  it("Summary: the group floor is a hidden COUNT(*) and and(count >= floor, the caller's having)", async () => {
    const { sanitized, before, after } = await planned("summary", {
      groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }] },
      having: and(cond("n", "GreaterThanOrEqual", [6])),
    });
    assert.equal(sanitized.additions.floor, convenience.options.caps.minGroupSize);
    assert.equal((before.plan as SummaryPlan).having?.kind, "compare-aggregate", "the caller's having alone before the transform");
    const plan = after.plan as SummaryPlan;
    assert.deepEqual(plan.aggregates.map((a) => [a.alias, a.aggregator, a.value]), [["n", "Count", null], [groupFloorAlias, "Count", null]]);
    assert.equal(plan.having?.kind, "and");
    const [floor, callers] = (plan.having as { items: readonly unknown[] }).items as [HavingComparison, unknown];
    assert.deepEqual([floor.aggregate.alias, floor.operator, floor.values], [groupFloorAlias, Operator.GreaterThanOrEqual, [convenience.options.caps.minGroupSize]]);
    assert.equal(callers, (before.plan as SummaryPlan).having);
    assertForced(plan.where);
  });

  it("Filter: a dropped order and a dropped select never enter the plan; a request without a page gets the injected one", async () => {
    const { sanitized, before, after } = await planned("filter", {
      orders: [{ sort: 1, field: "diagnosis", direction: "Ascending" }, { sort: 2, field: "mail", direction: "Descending" }],
      selects: ["id", "internalNote", "mail"],
    });
    assert.equal(sanitized.placements.dropped("orders[0].field"), true);
    const plan = after.plan as { orders: readonly { value: { column: { propertyPath: string } } }[]; selects: readonly { path: string }[]; page: unknown };
    assert.deepEqual(plan.orders.map((o) => o.value.column.propertyPath), ["email"], "diagnosis (QpNoOrder) dropped before the plan");
    assert.deepEqual(plan.selects.map((p) => p.path), ["id", "email"], "internalNote (QpNoSelect) not projected");
    assert.deepEqual(plan.page, { pageNumber: 1, pageSize: convenience.options.caps.maxPageSize });
    assert.equal((before.plan as { page: unknown }).page, null, "the request named no page");
  });

  it("Summary: an order by a group key's public name finds the key; a dropped one is not in the plan", async () => {
    const { after } = await planned("summary", {
      groupBy: { fields: ["MAIL", "diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }] },
      orders: [{ sort: 1, field: "mail", direction: "Descending" }, { sort: 2, field: "diagnosis", direction: "Ascending" }],
    });
    const plan = after.plan as SummaryPlan;
    assert.deepEqual(plan.keys.map((k) => k.name), ["email", "diagnosis"]);
    assert.deepEqual(plan.orders.map((o) => ["name" in o.target ? o.target.name : o.target.alias, o.direction]), [["email", "Descending"]]);
  });

  it("Summary: a caller's aggregate that takes the floor's alias is refused where the caller declared it", async () => {
    const error = await expectLogicError(() => planned("summary", {
      groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }, { alias: groupFloorAlias.toUpperCase(), aggregator: "Count" }] },
    }), "AggregationAliasesMustBeUnique");
    assert.equal(error.path, "groupBy.aggregateBy[1].alias");
  });

  it("a guarded run returns the same rows as a hand-written (forced AND caller) filter, and hides the floor's key", async () => {
    const context = await tenantContext(convenience, "t-1");
    const rows = [1, 2, 3, 4, 5, 6, 7].map((id) => Object.assign(new Patient(), { id, tenantId: id % 2 ? "t-1" : "t-2", name: `P${id}`, diagnosis: "flu", age: 30, salary: 1, ward: "A", doctorId: 1 }));
    const guarded = applyPolicy(inMemory(Patient, rows), context);
    const filtered = await guarded.toListAsync(whereShape(cond("id", "GreaterThan", [2])));
    assert.deepEqual(filtered.data.map((r) => (r as Patient).id), [3, 5, 7]);
    const summary = await guarded.toListAsync({ groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });
    assert.deepEqual(summary.data, [], "4 rows of t-1 are under the floor of 5");
    rows.push(...[9, 11].map((id) => Object.assign(new Patient(), { ...rows[0], id })));
    const grouped = await applyPolicy(inMemory(Patient, rows), context).toListAsync({ groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });
    assert.deepEqual(grouped.data, [{ diagnosis: "flu", n: 6 }], "no hidden key in a row");
  });

  it("a context value of the wrong type for its forced column is named as the forced condition's, not as a place in the request", async () => {
    const context = await convenience.prepareAsync(new QpPolicyContext().withValue("tenantNo", "not a number"));
    const error = await expectLogicError(() => applyPolicy(inMemory(Ledger, [Object.assign(new Ledger(), { id: 1, tenantNo: 4 })]), context).toListAsync(whereShape(cond("id", "Equal", [1]))), "InvalidFormat");
    assert.equal(error.path, "forced[0].values[0]");
  });

  it("Simulate's clause shows the forced conditions around the caller's group (forcedClause)", () => {
    const caller = { sort: 1, connector: "And", conditions: [{ sort: 1, field: "id", dataType: "Number", operator: "Equal", values: [1] }], subConditionGroups: [] } as never;
    const forced = [{ sort: 1, field: "tenantId", dataType: "Text", operator: "Equal", values: ["t-1"] }] as never;
    const clause = forcedClause(caller, forced)!;
    assert.deepEqual(clause.conditions, forced);
    assert.deepEqual(clause.subConditionGroups, [{ ...(caller as object), sort: 0 }]);
    assert.equal(forcedClause(caller, []), caller);
  });
});
