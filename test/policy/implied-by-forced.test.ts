// A caller's comparison that a forced Equal already makes true is left out of the plan
// (lib/guard/implied-by-forced.ts). The plan tests pin what is removed and, above all, what is
// not: anything but Equal/In listing the forced value itself (===), another DataType family, a
// negated or case-insensitive operator, and the forced predicate, which is never touched. The
// target tests run caller groups on the forced column itself on every target (memory, SQLite,
// PostgreSQL, MariaDB) and compare the rows with what the caller's group selects among tenant
// t-1's patients, computed here in plain JavaScript: a removal that changed the rows, or let a
// row of t-2 through, fails them.
import assert from "node:assert/strict";
import { Column, Entity, PrimaryColumn } from "typeorm";
import { Operator, QpEntity, QpForceWhere, QpPolicyContext, type QpPolicyEngine } from "../../lib/index.js";
import { parseShape } from "../../lib/pipeline/stages.js";
import { planParsed } from "../../lib/pipeline/stages.js";
import type { ShapePlan } from "../../lib/plan/nodes.js";
import { modelOfClass } from "../../lib/model/entity-model.js";
import type { Comparison, Predicate } from "../../lib/plan/nodes.js";
import { sanitize } from "../../lib/guard/sanitize.js";
import { transformPlan } from "../../lib/guard/plan-pass.js";
import { Patient } from "./domain.js";
import { type Shape, and, assertTenant, cond, convenience, group, idsOf, or, t1, tenantContext, whereShape } from "./helpers.js";
import { forEachPolicyTarget } from "./policy-targets.js";

@QpEntity()
@Entity("ibf_ledger")
class Ledger {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenantNo" })
  @Column({ type: "int" }) tenantNo!: number;
  @Column({ type: "varchar", length: 20 }) label!: string;
}

async function whereAfter(entity: Function, context: QpPolicyContext, shape: Shape, engine: QpPolicyEngine = convenience): Promise<Predicate | null> {
  const model = modelOfClass(entity);
  const parsed = parseShape("filter", shape, engine.options.caps);
  const sanitized = sanitize(engine, context, model, "filter", parsed, false, await engine.decisionsAsync(context));
  const after: ShapePlan = transformPlan(planParsed(model, "filter", parsed, engine.options.caps, sanitized.placements), sanitized.additions);
  return after.kind === "segment" ? null : after.plan.where;
}

/** The plan's WHERE as text: `field op values`, and(…), or(…); the forced comparison first. */
function show(p: Predicate | null): string {
  if (!p) return "none";
  switch (p.kind) {
    case "compare":
      return `${(p as Comparison).left.column.propertyPath} ${p.operator} ${JSON.stringify(p.values)}`;
    case "exists":
      return "exists(…)";
    default:
      return `${p.kind}(${p.items.map(show).join(", ")})`;
  }
}

const forced = 'tenantId Equal ["t-1"]';
const patientWhere = async (shape: Shape) => show(await whereAfter(Patient, await tenantContext(convenience, "t-1"), shape));

describe("Comparisons a forced Equal makes true are left out of the plan", () => {
  it("the caller's Equal or In that lists the forced value itself is removed; the forced comparison stays", async () => {
    assert.equal(await patientWhere(whereShape(cond("tenantId", "Equal", ["t-1"]))), forced);
    assert.equal(await patientWhere(whereShape(cond("tenantId", "In", ["t-2", "t-1"]))), forced);
    assert.equal(
      await patientWhere(whereShape(cond("tenantId", "In", ["t-1", "t-3"]), cond("name", "Equal", ["Patient 01"], 2))),
      `and(${forced}, name Equal ["Patient 01"])`,
    );
    // Text and Enum compile alike: the caller may say either.
    assert.equal(await patientWhere(whereShape(cond("tenantId", "Equal", ["t-1"], 1, "Enum"))), forced);
  });

  it("an Or with one branch made true is true as a whole; an Or whose branches all stay is kept whole", async () => {
    assert.equal(await patientWhere({ conditionGroup: or(cond("tenantId", "Equal", ["t-1"]), cond("name", "Equal", ["x"], 2)) }), forced);
    assert.equal(
      await patientWhere({ conditionGroup: or(cond("tenantId", "Equal", ["t-2"]), cond("name", "Equal", ["x"], 2)) }),
      `and(${forced}, or(tenantId Equal ["t-2"], name Equal ["x"]))`,
    );
    assert.equal(
      await patientWhere({ conditionGroup: group("And", [cond("name", "StartsWith", ["Patient"])], [group("Or", [cond("tenantId", "In", ["t-1"]), cond("id", "Equal", [3], 2)])]) }),
      `and(${forced}, name StartsWith ["Patient"])`,
    );
  });

  it("anything that is not the forced value itself stays for the database: case, look-alikes, other values", async () => {
    for (const values of [["T-1"], ["t-2"], ["t\u20111"], ["t-1-"], ["t-01"]]) {
      assert.equal(await patientWhere(whereShape(cond("tenantId", "In", values))), `and(${forced}, tenantId In ${JSON.stringify(values)})`);
      assert.equal(await patientWhere(whereShape(cond("tenantId", "Equal", values))), `and(${forced}, tenantId Equal ${JSON.stringify(values)})`);
    }
    // Values are trimmed when parsed (2.1.5), before the plan: " t-1 " is the tenant's value for the database too.
    assert.equal(await patientWhere(whereShape(cond("tenantId", "In", [" t-1 "]))), forced);
  });

  it("negated, case-insensitive and ordered operators stay, even with the forced value", async () => {
    for (const operator of ["NotEqual", "NotIn", "IEqual", "IIn", "StartsWith", "Contains", "EndsWith", "IsNotNull"]) {
      const values = operator === "IsNotNull" ? [] : ["t-1"];
      const where = await patientWhere(whereShape(cond("tenantId", operator, values)));
      assert.notEqual(where, forced, `${operator} was removed`);
      assert.ok(where.startsWith(`and(${forced}, tenantId ${operator}`), where);
    }
  });

  it("a Number pin: the same number is removed, another DataType family or another number stays", async () => {
    const context = await convenience.prepareAsync(new QpPolicyContext().withValue("tenantNo", 7));
    const ledger = async (shape: Shape) => show(await whereAfter(Ledger, context, shape));
    assert.equal(await ledger(whereShape(cond("tenantNo", "In", [3, 7]))), 'tenantNo Equal [7]');
    assert.equal(await ledger(whereShape(cond("tenantNo", "In", [3, 8]))), 'and(tenantNo Equal [7], tenantNo In [3,8])');
    // The pinned value on another column, and an ordered test of the pinned column, stay.
    assert.equal(await ledger(whereShape(cond("label", "Equal", ["7"]), cond("tenantNo", "GreaterThan", [6], 2))), 'and(tenantNo Equal [7], and(label Equal ["7"], tenantNo GreaterThan [6]))');
  });

  it("a Segment's sets are each folded on their own", async () => {
    const model = modelOfClass(Patient);
    const context = await tenantContext(convenience, "t-1");
    const shape = { conditionSets: [{ sort: 1, conditionGroup: and(cond("tenantId", "Equal", ["t-1"])) }, { sort: 2, intersection: "Union", conditionGroup: and(cond("tenantId", "Equal", ["t-2"])) }] };
    const parsed = parseShape("segment", shape, convenience.options.caps);
    const sanitized = sanitize(convenience, context, model, "segment", parsed, false, await convenience.decisionsAsync(context));
    const after = transformPlan(planParsed(model, "segment", parsed, convenience.options.caps, sanitized.placements), sanitized.additions);
    assert.equal(after.kind, "segment");
    assert.deepEqual(after.kind === "segment" && after.plan.sets.map((s) => show(s.where)), [forced, `and(${forced}, tenantId Equal ["t-2"])`]);
  });
});

/** Caller groups on the forced column, each with the patients of t-1 it selects. */
const cases: { name: string; shape: Shape; selects: (p: (typeof t1)[number]) => boolean }[] = [
  { name: "Equal the tenant", shape: whereShape(cond("tenantId", "Equal", ["t-1"])), selects: () => true },
  { name: "In with the tenant and another", shape: whereShape(cond("tenantId", "In", ["t-1", "t-2"])), selects: () => true },
  { name: "In without the tenant", shape: whereShape(cond("tenantId", "In", ["t-2", "t-3"])), selects: () => false },
  { name: "In a case variant", shape: whereShape(cond("tenantId", "In", ["T-1"])), selects: () => false },
  { name: "Equal a case variant", shape: whereShape(cond("tenantId", "Equal", ["T-1"])), selects: () => false },
  { name: "IEqual a case variant", shape: whereShape(cond("tenantId", "IEqual", ["T-1"])), selects: () => true },
  { name: "NotIn the tenant", shape: whereShape(cond("tenantId", "NotIn", ["t-1"])), selects: () => false },
  { name: "NotEqual another", shape: whereShape(cond("tenantId", "NotEqual", ["t-2"])), selects: () => true },
  { name: "Or(tenant, a name)", shape: { conditionGroup: or(cond("tenantId", "Equal", ["t-1"]), cond("name", "Equal", ["Patient 01"], 2)) }, selects: () => true },
  { name: "Or(other tenant, a name)", shape: { conditionGroup: or(cond("tenantId", "Equal", ["t-2"]), cond("name", "Equal", ["Patient 01"], 2)) }, selects: (p) => p.name === "Patient 01" },
  { name: "Or reaching for t-2", shape: { conditionGroup: or(cond("tenantId", "In", ["t-1"]), cond("tenantId", "Equal", ["t-2"], 2)) }, selects: () => true },
  {
    name: "And(In with the tenant, a name prefix) in a nested group",
    shape: { conditionGroup: group("And", [cond("tenantId", "In", ["t-2", "t-1"])], [group("Or", [cond("name", "StartsWith", ["Patient 0"]), cond("id", "GreaterThan", [30], 2)])]) },
    selects: (p) => p.name.startsWith("Patient 0") || p.id > 30,
  },
];

forEachPolicyTarget("A caller's groups on the forced column return the rows they select among the tenant's", (ctx) => {
  for (const c of cases) {
    it(c.name, async function () {
      const context = await tenantContext(convenience, "t-1");
      const result = await ctx.guard(Patient, context).toListAsync({ ...c.shape, orders: [{ sort: 1, field: "id", direction: "Ascending" }], page: { pageNumber: 1, pageSize: 100 } });
      const rows = result.data as unknown as Record<string, unknown>[];
      assertTenant(rows, "t-1");
      const expected = idsOf(t1.filter(c.selects)).sort((a, b) => a - b);
      assert.deepEqual(idsOf(rows as { id: number }[]), expected);
      assert.equal(result.totalCount, expected.length);
    });
  }
});
