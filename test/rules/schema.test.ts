// schema(entity, paths?, depth?, context) on a domain with cycles (Employee.manager → Employee,
// Employee.reports → Employee[], Employee.department → Department.employees → Employee[]): the
// eight schema request rules of SPEC.md "Admin API" and the flat adjacency response. The
// expected fields and nodes come from a walk written here over a hand-made description of the
// domain (public names, relations, the features each attribute leaves), not from the engine.
import assert from "node:assert/strict";
import {
  DataType, MaskStrategy, PolicyEffect, PolicyFeature, QpSubjectKind, ValidationCodes, applyPolicy, type QpCaps, type QpPolicyContext,
  type QpPolicyEngine, type SchemaResponse,
} from "../../lib/index.js";
import { DEPARTMENTS, STAFF, oracleData, ruleData } from "./domain.js";
import { engine, expectLogicError, prepare, role } from "./support.js";

// ---- the oracle -----------------------------------------------------------------------------

const ALL = ["Where", "Select", "Order", "Group", "Aggregate", "Segment"];
const without = (...denied: string[]) => ALL.filter((f) => !denied.includes(f));
/** A masked member without allowAggregate: its stored values are neither grouped nor aggregated (TransformRequiresMaterialization). */
const transformed = without("Group", "Aggregate");

interface EntitySpec {
  columns: [string, string[]][];
  relations: [string, string][];
}

/** The domain as a filter UI sees it without rules: public column names with their features, and navigations. */
const graph: Record<string, EntitySpec> = {
  [STAFF]: {
    columns: [
      ["id", ALL], ["name", ALL], ["title", ALL], ["email", ALL], ["city", ALL], ["team", ALL], ["grade", ALL], ["salary", ALL], ["active", ALL],
      ["birthDate", ALL], ["ssn", []], ["secret", without("Where", "Order")], ["badge", transformed], ["bonus", without("Select")], ["phone", transformed],
      ["hobby", without("Where", "Order")], ["nickname", ALL], ["audited", ALL], ["managerId", ALL], ["departmentId", ALL],
    ],
    relations: [["manager", STAFF], ["reports", STAFF], ["department", DEPARTMENTS]],
  },
  [DEPARTMENTS]: {
    columns: [["id", ALL], ["name", ALL], ["budget", ALL]],
    relations: [["employees", STAFF]],
  },
};

interface OracleField { path: string; parent: string; features: string[] }
interface OracleNode { path: string; parent: string; entity: string; depth: number; expanded: boolean; remainingDepth: number }
interface Oracle { fields: OracleField[]; nodes: OracleNode[] }

interface Walk {
  depth: number;
  caps: Pick<QpCaps, "maxNavigationDepth" | "schemaCycleLimit">;
  /** Features per public column name (after rules), default the graph's. */
  features?: (entity: string, column: string) => string[];
}

/** Rule by rule from SPEC.md: levels below `depth`, a type at most schemaCycleLimit times per path, no hop past maxNavigationDepth. */
function expectedSchema(root: string, walk: Walk, roots: { path: string; entity: string; hops: number }[] = [{ path: "", entity: root, hops: 0 }]): Oracle {
  const out: Oracle = { fields: [], nodes: [] };
  const visit = (entity: string, prefix: string, level: number, hops: number, counts: Map<string, number>) => {
    const spec = graph[entity]!;
    for (const [column, base] of spec.columns) {
      const features = walk.features ? walk.features(entity, column) : base;
      if (features.length === 0) continue;
      out.fields.push({ path: prefix ? `${prefix}.${column}` : column, parent: prefix, features });
    }
    for (const [relation, target] of spec.relations) {
      const path = prefix ? `${prefix}.${relation}` : relation;
      const nodeHops = hops + 1;
      const seen = counts.get(target) ?? 0;
      const expanded = level < walk.depth && seen + 1 <= walk.caps.schemaCycleLimit && nodeHops <= walk.caps.maxNavigationDepth;
      out.nodes.push({ path, parent: prefix, entity: target, depth: level + 1, expanded, remainingDepth: Math.max(0, walk.caps.maxNavigationDepth - nodeHops + 1) });
      if (expanded) visit(target, path, level + 1, nodeHops, new Map(counts).set(target, seen + 1));
    }
  };
  for (const r of roots) visit(r.entity, r.path, 1, r.hops, new Map([[r.entity, 1]]));
  return out;
}

const defaults = { maxNavigationDepth: 4, schemaCycleLimit: 2 };
const byPath = <T extends { path: string }>(rows: readonly T[]) => [...rows].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

function assertMatches(response: SchemaResponse, expected: Oracle, roots: string[] = []): void {
  const fields = byPath(response.fields.map((f) => ({ path: f.path, parent: f.parent, features: f.features })));
  assert.deepEqual(fields, byPath(expected.fields), "fields (path, parent, features)");
  const nodes = byPath(response.nodes.filter((n) => !roots.includes(n.path)).map((n) => ({ path: n.path, parent: n.parent, entity: n.entity, depth: n.depth, expanded: n.expanded, remainingDepth: n.remainingDepth })));
  assert.deepEqual(nodes, byPath(expected.nodes), "nodes");
}

async function schema(e: QpPolicyEngine, request: { paths?: string[]; depth?: unknown } = {}, context?: QpPolicyContext, entity = STAFF): Promise<SchemaResponse> {
  return e.schemaAsync(entity, request, context ?? (await prepare(e)));
}

// ---- the tests ------------------------------------------------------------------------------

describe("Rules: schema", () => {
  describe("depth (rules 2-4)", () => {
    it("without depth the walk goes SchemaDepth (2) levels: the entity, then one navigation", async () => {
      const response = await schema(engine());
      assert.equal(response.entity, STAFF);
      assert.deepEqual(response.roots, [""]);
      assert.equal(response.depth, 2);
      assert.equal(response.maxDepth, 4);
      assert.equal(response.truncated, false);
      assertMatches(response, expectedSchema(STAFF, { depth: 2, caps: defaults }));
      // Concretely: manager's fields are there, manager.manager is a closed node.
      assert.ok(response.fields.some((f) => f.path === "manager.email" && f.parent === "manager"));
      assert.ok(!response.fields.some((f) => f.path.startsWith("manager.manager.")));
      assert.deepEqual(response.nodes.find((n) => n.path === "manager.manager"), { path: "manager.manager", parent: "manager", entity: STAFF, depth: 3, expanded: false, remainingDepth: 3 });
    });

    it("caps.schemaDepth sets the default depth", async () => {
      const response = await schema(engine({ caps: { schemaDepth: 3 } }));
      assert.equal(response.depth, 3);
      assertMatches(response, expectedSchema(STAFF, { depth: 3, caps: defaults }));
    });

    it("depth 1 returns the entity's own fields; its navigations are listed, closed", async () => {
      const response = await schema(engine(), { depth: 1 });
      assert.equal(response.depth, 1);
      assert.ok(response.fields.every((f) => f.parent === "" && !f.path.includes(".")));
      assert.deepEqual(byPath(response.nodes), [
        { path: "department", parent: "", entity: DEPARTMENTS, depth: 2, expanded: false, remainingDepth: 4 },
        { path: "manager", parent: "", entity: STAFF, depth: 2, expanded: false, remainingDepth: 4 },
        { path: "reports", parent: "", entity: STAFF, depth: 2, expanded: false, remainingDepth: 4 },
      ]);
      assertMatches(response, expectedSchema(STAFF, { depth: 1, caps: defaults }));
    });

    for (const depth of [0, -1, 1.5, "2", Number.NaN, Number.POSITIVE_INFINITY, true, {}]) {
      it(`depth ${typeof depth === "number" ? String(depth) : JSON.stringify(depth)} is refused with InvalidSchemaDepth`, async () => {
        const e = engine();
        await expectLogicError(() => schema(e, { depth }), "InvalidSchemaDepth");
      });
    }

    it("a depth above MaxNavigationDepth is clamped, not refused", async () => {
      const response = await schema(engine(), { depth: 10 });
      assert.equal(response.depth, 4);
      assert.equal(response.maxDepth, 4);
      assertMatches(response, expectedSchema(STAFF, { depth: 4, caps: defaults }));
      const capped = await schema(engine({ caps: { maxNavigationDepth: 3 } }), { depth: 4 });
      assert.equal(capped.depth, 3);
      assert.equal(capped.maxDepth, 3);
      assertMatches(capped, expectedSchema(STAFF, { depth: 3, caps: { maxNavigationDepth: 3, schemaCycleLimit: 2 } }));
      // A default depth above the cap is clamped too.
      const byDefault = await schema(engine({ caps: { maxNavigationDepth: 2, schemaDepth: 4 } }));
      assert.equal(byDefault.depth, 2);
    });
  });

  describe("cycles and subtrees (rules 5-6)", () => {
    it("a type repeats at most SchemaCycleLimit times on one path; the walk stops there, deeper ones only as closed nodes", async () => {
      const response = await schema(engine(), { depth: 4 });
      const expected = expectedSchema(STAFF, { depth: 4, caps: defaults });
      assertMatches(response, expected);
      const node = (path: string) => response.nodes.find((n) => n.path === path);
      assert.equal(node("manager")!.expanded, true);
      assert.equal(node("manager.manager")!.expanded, false, "staff would appear a third time");
      assert.equal(node("reports.manager")!.expanded, false);
      assert.equal(node("department.employees")!.expanded, true, "staff appears a second time");
      assert.equal(node("department.employees.manager")!.expanded, false);
      assert.equal(node("department.employees.department")!.expanded, true, "departments appears a second time");
      assert.equal(node("department.employees.department.employees")!.expanded, false, "depth 4 ends there: a closed node");
      assert.ok(response.fields.some((f) => f.path === "department.employees.department.budget"));
      assert.ok(!response.fields.some((f) => f.path.startsWith("manager.manager.")));
    });

    it("SchemaCycleLimit 1 and 3", async () => {
      const one = await schema(engine({ caps: { schemaCycleLimit: 1 } }), { depth: 4 });
      assertMatches(one, expectedSchema(STAFF, { depth: 4, caps: { maxNavigationDepth: 4, schemaCycleLimit: 1 } }));
      assert.equal(one.nodes.find((n) => n.path === "manager")!.expanded, false);
      assert.equal(one.nodes.find((n) => n.path === "department")!.expanded, true);
      const three = await schema(engine({ caps: { schemaCycleLimit: 3 } }), { depth: 4 });
      assertMatches(three, expectedSchema(STAFF, { depth: 4, caps: { maxNavigationDepth: 4, schemaCycleLimit: 3 } }));
      assert.equal(three.nodes.find((n) => n.path === "manager.manager")!.expanded, true);
      assert.equal(three.nodes.find((n) => n.path === "manager.manager.manager")!.expanded, false);
    });

    it("paths roots the walk at a navigation and resets the cycle count: manager.manager opens as a subtree", async () => {
      const response = await schema(engine(), { paths: ["manager.manager"] });
      assert.deepEqual(response.roots, ["manager.manager"]);
      assert.equal(response.depth, 2);
      const expected = expectedSchema(STAFF, { depth: 2, caps: defaults }, [{ path: "manager.manager", entity: STAFF, hops: 2 }]);
      assertMatches(response, expected, ["manager.manager"]);
      assert.ok(response.fields.some((f) => f.path === "manager.manager.name" && f.parent === "manager.manager"));
      const next = response.nodes.find((n) => n.path === "manager.manager.manager")!;
      assert.deepEqual(next, { path: "manager.manager.manager", parent: "manager.manager", entity: STAFF, depth: 2, expanded: true, remainingDepth: 2 });
      assert.ok(response.fields.some((f) => f.path === "manager.manager.manager.email"));
    });

    it("a subtree stops at MaxNavigationDepth: nodes past it are closed with remainingDepth 0", async () => {
      const response = await schema(engine(), { paths: ["manager.manager.manager"], depth: 4 });
      const expected = expectedSchema(STAFF, { depth: 4, caps: defaults }, [{ path: "manager.manager.manager", entity: STAFF, hops: 3 }]);
      assertMatches(response, expected, ["manager.manager.manager"]);
      const last = response.nodes.find((n) => n.path === "manager.manager.manager.manager")!;
      assert.equal(last.expanded, true);
      assert.equal(last.remainingDepth, 1);
      const beyond = response.nodes.find((n) => n.path === "manager.manager.manager.manager.manager")!;
      assert.equal(beyond.expanded, false);
      assert.equal(beyond.remainingDepth, 0);
    });

    it("several roots at once, in any case; each roots its own walk", async () => {
      const response = await schema(engine(), { paths: ["Manager", "department.EMPLOYEES"], depth: 1 });
      assert.deepEqual(response.roots, ["manager", "department.employees"]);
      const expected = expectedSchema(STAFF, { depth: 1, caps: defaults }, [
        { path: "manager", entity: STAFF, hops: 1 },
        { path: "department.employees", entity: STAFF, hops: 2 },
      ]);
      assertMatches(response, expected, ["manager", "department.employees"]);
    });

    it("paths that are not navigations, unknown, or deeper than MaxNavigationDepth are refused", async () => {
      const e = engine();
      for (const path of ["name", "manager.name", "nope", "manager.manager.manager.manager.manager"]) {
        await expectLogicError(() => schema(e, { paths: [path] }), ValidationCodes.InvalidField);
      }
    });

    it("fields beyond the cycle limit remain queryable", async () => {
      const context = await prepare(engine());
      const result = (await applyPolicy(ruleData().employees, context).toListAsyncDynamic({
        conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "manager.manager.name", operator: "Equal", values: ["Emp 02"] }] }, selects: ["id"],
      } as never)) as unknown as { data: { id: number }[] };
      const expected = oracleData.employees.filter((x) => x.manager?.manager?.name === "Emp 02").map((x) => x.id);
      assert.ok(expected.length > 0);
      assert.deepEqual(result.data.map((r) => r.id), expected);
    });
  });

  describe("denied fields (rules 7-8)", () => {
    it("a field sealed for every feature never appears; one sealed for some lists only the others", async () => {
      const response = await schema(engine(), { depth: 3 });
      assert.ok(!response.fields.some((f) => f.path === "ssn" || f.path.endsWith(".ssn")));
      for (const f of response.fields.filter((x) => x.path === "secret" || x.path.endsWith(".secret"))) assert.deepEqual(f.features, ["Select", "Group", "Aggregate", "Segment"]);
      assert.deepEqual(response.fields.find((f) => f.path === "hobby")!.features, without("Where", "Order"));
      assert.deepEqual(response.fields.find((f) => f.path === "bonus")!.features, without("Select"));
    });

    it("a rule lifts an overridable feature back into the schema, never a sealed one", async () => {
      const e = engine();
      await e.upsertRuleAsync({ subjectKind: QpSubjectKind.Global, entity: STAFF, field: "*", effect: PolicyEffect.Allow });
      const response = await schema(e, { depth: 1 });
      assert.deepEqual(response.fields.find((f) => f.path === "secret")!.features, without("Where"));
      assert.deepEqual(response.fields.find((f) => f.path === "hobby")!.features, ALL);
      assert.deepEqual(response.fields.find((f) => f.path === "bonus")!.features, ALL);
      assert.equal(response.fields.find((f) => f.path === "ssn"), undefined);
    });

    it("a field a rule denies for every feature disappears, everywhere, for the callers the rule applies to, and comes back when it is deleted", async () => {
      const e = engine();
      const deny = await e.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "x", entity: STAFF, field: "email", effect: PolicyEffect.Deny });
      const x = await prepare(e, role("x"));
      const features = (entity: string, column: string) => (entity === STAFF && column === "email" ? [] : graph[entity]!.columns.find(([c]) => c === column)![1]);
      assertMatches(await schema(e, { depth: 3 }, x), expectedSchema(STAFF, { depth: 3, caps: defaults, features }));
      assert.ok(!(await schema(e, { depth: 3 }, x)).fields.some((f) => f.path.endsWith("email")));
      // Another caller still sees it.
      assertMatches(await schema(e, { depth: 3 }, await prepare(e, role("y"))), expectedSchema(STAFF, { depth: 3, caps: defaults }));
      // From the other entity too.
      assert.ok(!(await schema(e, { depth: 2 }, x, DEPARTMENTS)).fields.some((f) => f.path === "employees.email"));
      await e.deleteRuleAsync(deny.id);
      assertMatches(await schema(e, { depth: 3 }, x), expectedSchema(STAFF, { depth: 3, caps: defaults }));
    });

    it("a rule denying some features removes them; sealed + denied-by-rule for all features removes the field", async () => {
      const e = engine();
      await e.upsertRuleAsync({ subjectKind: QpSubjectKind.Global, entity: STAFF, field: "email", features: PolicyFeature.Where | PolicyFeature.Group, effect: PolicyEffect.Deny });
      await e.upsertRuleAsync({ subjectKind: QpSubjectKind.Global, entity: STAFF, field: "secret", features: PolicyFeature.Select | PolicyFeature.Order | PolicyFeature.Group | PolicyFeature.Aggregate | PolicyFeature.Segment, effect: PolicyEffect.Deny });
      const response = await schema(e, { depth: 1 });
      assert.deepEqual(response.fields.find((f) => f.path === "email")!.features, without("Where", "Group"));
      assert.equal(response.fields.find((f) => f.path === "secret"), undefined);
      // Where is gone from email: its operators are gone with it.
      assert.deepEqual(response.fields.find((f) => f.path === "email")!.operators, []);
    });
  });

  describe("field metadata and truncation", () => {
    it("label, description, group, order, data type, allowed values, cost, masked", async () => {
      const e = engine({ caps: { defaultFieldCost: 2 } });
      await e.upsertRuleAsync({ subjectKind: QpSubjectKind.Global, entity: STAFF, field: "city", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Fixed, text: "c" } });
      const response = await schema(e, { depth: 2 });
      const field = (path: string) => {
        const found = response.fields.find((f) => f.path === path);
        assert.ok(found, path);
        return found;
      };
      assert.equal(field("name").label, "Full name");
      assert.equal(field("name").description, "Given and family name");
      assert.equal(field("name").group, "Identity");
      assert.equal(field("name").order, 1);
      assert.equal(field("manager.name").label, "Full name");
      assert.equal(field("title").label, "title");
      assert.equal(field("title").group, null);
      assert.equal(field("nickname").label, "nickname");
      assert.deepEqual(field("grade").allowedValues, ["junior", "senior", "lead"]);
      assert.equal(field("title").allowedValues, null);
      assert.equal(field("salary").cost, 7);
      assert.equal(field("title").cost, 2);
      assert.equal(field("salary").dataType, DataType.Number);
      assert.equal(field("active").dataType, DataType.Boolean);
      assert.equal(field("birthDate").dataType, DataType.Date);
      assert.equal(field("name").dataType, DataType.Text);
      assert.equal(field("department.budget").dataType, DataType.Number);
      assert.ok(field("name").operators.includes("Contains" as never));
      assert.ok(!field("salary").operators.includes("Contains" as never));
      assert.deepEqual(field("hobby").operators, []);
      assert.equal(field("badge").masked, true);
      assert.equal(field("phone").masked, true);
      assert.equal(field("city").masked, true);
      assert.equal(field("manager.city").masked, true);
      assert.equal(field("name").masked, false);
    });

    it("MaxSchemaFields truncates the field list and says so; a list that fits exactly is not truncated", async () => {
      const full = expectedSchema(STAFF, { depth: 1, caps: defaults }).fields;
      const exact = await schema(engine({ caps: { maxSchemaFields: full.length } }), { depth: 1 });
      assert.equal(exact.truncated, false);
      assert.equal(exact.fields.length, full.length);
      const short = await schema(engine({ caps: { maxSchemaFields: full.length - 1 } }), { depth: 1 });
      assert.equal(short.truncated, true);
      assert.equal(short.fields.length, full.length - 1);
      const five = await schema(engine({ caps: { maxSchemaFields: 5 } }), { depth: 3 });
      assert.equal(five.truncated, true);
      assert.equal(five.fields.length, 5);
      const all = new Set(expectedSchema(STAFF, { depth: 3, caps: defaults }).fields.map((f) => f.path));
      for (const f of five.fields) assert.ok(all.has(f.path), f.path);
    });
  });

  describe("entities", () => {
    it("only exposed public names are found", async () => {
      const e = engine();
      const context = await prepare(e);
      await expectLogicError(() => e.schemaAsync("Employee", {}, context), "UnknownEntity");
      await expectLogicError(() => e.schemaAsync("nobody", {}, context), "UnknownEntity");
      await expectLogicError(() => e.schemaAsync("", {}, context), "UnknownEntity");
    });

    it("the other entity, with its own cycle through staff", async () => {
      const response = await schema(engine(), { depth: 3 }, undefined, DEPARTMENTS);
      assert.equal(response.entity, DEPARTMENTS);
      assertMatches(response, expectedSchema(DEPARTMENTS, { depth: 3, caps: defaults }));
    });
  });
});
