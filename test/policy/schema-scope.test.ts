// Schema rule 8 for tenant scopes: a navigation into a QpForceWhere-scoped entity is refused by
// every query (its rows would escape the scope), so the schema never offers it: no node, no
// fields under it, no subtree when asked for by `paths`. The root entity itself stays described.
import assert from "node:assert/strict";
import { PolicyErrorCode, QpEntityCatalogue, QpPolicyEngine, applyPolicy, inMemory } from "../../lib/index.js";
import { Doctor, Patient, Visit, policyData } from "./domain.js";
import { expectPolicyError, tenantContext } from "./helpers.js";

const catalogue = () => new QpEntityCatalogue().expose(Patient, "patients").expose(Visit, "visits").expose(Doctor, "doctors");

describe("Policy: the schema never offers a navigation into a tenant-scoped entity (rule 8)", () => {
  const engine = new QpPolicyEngine({ entities: catalogue(), caps: { maxNavigationDepth: 3, schemaDepth: 3 } });

  it("a scoped entity as the root is described (its own fields, its unscoped navigations)", async () => {
    const schema = await engine.schemaAsync("patients", {}, await tenantContext(engine));
    const paths = schema.fields.map((f) => f.path);
    assert.ok(paths.includes("tenantId") && paths.includes("name") && paths.includes("mail"), paths.join(", "));
    assert.ok(schema.nodes.some((n) => n.path === "visits"), JSON.stringify(schema.nodes));
  });

  it("Visit → patient: no node, and no field under it, at any depth", async () => {
    const schema = await engine.schemaAsync("visits", { depth: 3 }, await tenantContext(engine));
    assert.deepEqual(schema.nodes.filter((n) => /(^|\.)patient(s)?($|\.)/.test(n.path)), []);
    assert.deepEqual(schema.fields.filter((f) => f.path.startsWith("patient.")), []);
    assert.ok(schema.fields.some((f) => f.path === "patientId"), "the visit's own foreign key stays");
  });

  it("Doctor → patients (a collection) is absent too", async () => {
    const schema = await engine.schemaAsync("doctors", { depth: 3 }, await tenantContext(engine));
    assert.deepEqual(schema.nodes.map((n) => n.path), []);
    assert.deepEqual(schema.fields.map((f) => f.path).sort(), ["id", "name"]);
  });

  it("Patient → visits → patient (back into the scope) is not offered either", async () => {
    const schema = await engine.schemaAsync("patients", { depth: 3 }, await tenantContext(engine));
    assert.ok(schema.nodes.some((n) => n.path === "visits"));
    assert.deepEqual(schema.nodes.filter((n) => n.path.startsWith("visits.patient")), []);
    assert.deepEqual(schema.fields.filter((f) => f.path.startsWith("visits.patient.")), []);
  });

  it("a `paths` subtree through a scoped entity describes nothing, in any spelling", async () => {
    const context = await tenantContext(engine);
    for (const [entity, path] of [["visits", "patient"], ["visits", "PATIENT"], ["doctors", "patients"], ["patients", "visits.patient"], ["patients", "Visits.Patient"]]) {
      const schema = await engine.schemaAsync(entity!, { paths: [path!] }, context);
      assert.deepEqual({ roots: schema.roots, fields: schema.fields, nodes: schema.nodes }, { roots: [], fields: [], nodes: [] }, `${entity} ${path}`);
    }
  });

  it("what the schema leaves out, a query refuses", async () => {
    const context = await tenantContext(engine);
    const visits = inMemory(Visit, policyData().visits);
    const byPatient = (field: string) => ({ conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "patientId", operator: "Equal", values: [1], dataType: "Number" }, { sort: 2, field, operator: "Equal", values: ["x"], dataType: "Text" }] } });
    await expectPolicyError(() => applyPolicy(visits, context).toListAsync(byPatient("patient.name")), PolicyErrorCode.FieldDeniedForWhere);
    await expectPolicyError(() => applyPolicy(visits, context).toListAsync(byPatient("Patient.Name")), PolicyErrorCode.FieldDeniedForWhere);
  });
});
