// The OpenAPI document of the entity routes (lib/openapi) against the JSON the server accepts:
// every request the fuzzer's arbitraries make that the engine accepts, written canonically (the
// parser's output as JSON), validates against its entity's schema with Ajv (JSON Schema 2020-12,
// OpenAPI 3.1's dialect); fields, operators and value types the document leaves out are ones the
// server refuses. On the shop domain (no policy: unguarded acceptance) and the policy domain
// (guarded: denied members, an alias, a forced tenant predicate). Under the Convenience tier the
// policy drops a denied selected field instead of refusing the request: such a request is not one
// the document need describe (naming the field has no effect), so it is skipped, and counted apart.
import { expect } from "chai";
import fc from "fast-check";
import { Ajv2020 } from "ajv/dist/2020.js";
import { type QpOpenApiDocument, type QpOpenApiRoute, openApiDocumentOf } from "../../lib/openapi/document.js";
import { capDefaults, parseFilter, parseSegment, parseSummary } from "../../lib/index.js";
import { Customer, Order, OrderItem } from "../domain/entities.js";
import { Doctor, Patient, Visit } from "../policy/domain.js";
import { RequestArbitraries, type Request } from "../fuzz/arbitraries.js";
import { guardedSample, patientSchema, runnerFor, shopArbitraries, shopSample, tenants } from "../fuzz/domains.js";

const routes = (entities: [Function, string][]): QpOpenApiRoute[] =>
  entities.map(([entity, publicName]) => ({ entity, publicName, path: publicName, shapes: ["filter", "segment", "summary"], sqlParameter: true }));

const shopRoutes = routes([[Customer, "customer"], [Order, "order"], [OrderItem, "orderItem"]]);
const policyRoutes = routes([[Patient, "patient"], [Visit, "visit"], [Doctor, "doctor"]]);

/** A validator of `{Prefix}{Shape}` in the document (its $refs resolved inside it). */
function validatorOf(document: QpOpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  ajv.addSchema({ $id: "qp", components: document.components });
  return (schema: string, value: unknown) => {
    const validate = ajv.getSchema(`qp#/components/schemas/${schema}`);
    if (!validate) throw new Error(`no schema ${schema}`);
    const ok = validate(value) as boolean;
    return { ok, errors: JSON.stringify(validate.errors?.slice(0, 3)) };
  };
}

const dropsSomething = (result: { policy: { entries: { action: string }[] } }) => result.policy.entries.some((e) => e.action === "Dropped");

const parsers = { filter: parseFilter, segment: parseSegment, summary: parseSummary } as const;
const shapeName = { filter: "Filter", segment: "Segment", summary: "Summary" } as const;
/** The canonical JSON of an accepted request: the parser's output, serialized. */
const canonical = (request: Request) => JSON.parse(JSON.stringify(parsers[request.kind](request.shape))) as unknown;

describe("OpenAPI: the document describes every request the server accepts", function () {
  const shopDocument = openApiDocumentOf(shopRoutes, capDefaults);
  const policyDocument = openApiDocumentOf(policyRoutes, capDefaults);
  const prefixOf = (entity: Function, list: QpOpenApiRoute[]) => {
    const name = list.find((r) => r.entity === entity)!.publicName;
    return name.charAt(0).toUpperCase() + name.slice(1);
  };

  it("is an OpenAPI 3.1 document with a path per route and shape, and schemas Ajv compiles", () => {
    expect(shopDocument.openapi).to.equal("3.1.0");
    expect(Object.keys(shopDocument.paths)).to.deep.equal(
      ["customer", "order", "orderItem"].flatMap((p) => [`/${p}/filter`, `/${p}/segment`, `/${p}/summary`]));
    expect(Object.keys(shopDocument.paths["/customer/filter"]!)).to.deep.equal(["post", "get"]);
    const validate = validatorOf(shopDocument);
    for (const name of ["CustomerFilter", "OrderSegment", "OrderItemSummary", "QpFilterResult", "QpError"]) expect(() => validate(name, {})).to.not.throw();
    expect(validate("CustomerFilter", {}).ok).to.equal(true);
    expect(validate("CustomerSummary", {}).ok, "a Summary needs groupBy").to.equal(false);
  });

  it("shop (unguarded acceptance): every accepted Filter, Segment and Summary validates; refused ones are counted", async () => {
    const runner = await runnerFor("memory", { unguarded: true, guarded: false });
    const arbitraries = shopArbitraries("memory");
    const sample = shopSample("memory");
    const validate = validatorOf(shopDocument);
    let accepted = 0;
    await fc.assert(fc.asyncProperty(fc.oneof(arbitraries.validArb(sample), arbitraries.almostValidArb(sample)), async (request) => {
      try {
        await runner.unguarded(request.root, request.shape, false);
      } catch {
        return; // refused by the server: the document need not accept it
      }
      accepted++;
      const result = validate(`${prefixOf(request.root, shopRoutes)}${shapeName[request.kind]}`, canonical(request));
      expect(result.ok, `${JSON.stringify(request.shape)}\n${result.errors}`).to.equal(true);
    }), { numRuns: 600, seed: 2026_11_27 });
    expect(accepted, "accepted requests checked").to.be.greaterThan(300);
  });

  it("policy domain (guarded acceptance, tenant t-1): every accepted request validates", async () => {
    const runner = await runnerFor("memory", { unguarded: false, guarded: true });
    const arbitraries = new RequestArbitraries(patientSchema());
    const sample = guardedSample("patient");
    const validate = validatorOf(policyDocument);
    let accepted = 0;
    // Most requests of this domain name a denied field (the fuzzer's point there): many runs, to check enough accepted ones.
    await fc.assert(fc.asyncProperty(arbitraries.validArb(sample), async (request) => {
      let answer: { policy: { entries: { action: string }[] } };
      try {
        answer = await runner.guarded("patient", request.root, request.shape, false, tenants[0]);
      } catch {
        return;
      }
      if (dropsSomething(answer)) return;
      accepted++;
      const result = validate(`${prefixOf(request.root, policyRoutes)}${shapeName[request.kind]}`, canonical(request));
      expect(result.ok, `${JSON.stringify(request.shape)}\n${result.errors}`).to.equal(true);
    }), { numRuns: 2500, seed: 2026_11_28 });
    expect(accepted, "accepted requests checked").to.be.greaterThan(40);
  });

  it("leaves out what no caller may use: a denied member, an alias's hidden name, an operator QpOperators removes, a value of the wrong type", async () => {
    const validate = validatorOf(policyDocument);
    const runner = await runnerFor("memory", { unguarded: false, guarded: true });
    const condition = (field: string, dataType: string, operator: string, values: unknown[]) =>
      ({ conditionGroup: { connector: "And", conditions: [{ sort: 1, field, dataType, operator, values }] } });
    /** The document refuses it, and the server refuses it or drops what it names (Convenience tier). */
    const refusedBoth = async (body: Record<string, unknown>) => {
      expect(validate("PatientFilter", body).ok, JSON.stringify(body)).to.equal(false);
      let outcome = "accepted";
      try {
        if (dropsSomething(await runner.guarded("patient", Patient, body, false, tenants[0]))) outcome = "dropped";
      } catch {
        outcome = "refused";
      }
      expect(outcome, `the server accepts ${JSON.stringify(body)}`).to.not.equal("accepted");
    };
    await refusedBoth(condition("ssn", "Text", "Equal", ["x"]));
    await refusedBoth(condition("email", "Text", "Equal", ["a@b.example"])); // hidden behind its alias "mail"
    await refusedBoth(condition("nope", "Text", "Equal", ["x"]));
    await refusedBoth(condition("id", "Number", "Equal", ["not a number"]));
    await refusedBoth(condition("id", "Number", "Contains", ["1"]));
    await refusedBoth(condition("id", "Number", "Between", [1]));
    await refusedBoth({ selects: ["ssn"] });
    // And the alias itself is described.
    expect(validate("PatientFilter", condition("mail", "Text", "Equal", ["a@b.example"])).ok).to.equal(true);
  });
});
