// The sample app's OpenAPI document (/docs-json, shown by Swagger UI at /docs) against its routes:
// every operation it lists is a route the app answers, every route of the app's API is listed
// (the fallback that only answers UnknownEntity is left out on purpose), QueryLib's entity routes
// carry QueryLib's schemas, and GET /qp-admin/openapi is that same part.
import { expect } from "chai";
import { Ajv2020 } from "ajv/dist/2020.js";
import { type SampleApp, startSampleApp } from "../../sample-app/main.js";
import { publicNames } from "../../sample-app/domain/entities.js";

interface Document {
  openapi: string;
  paths: Record<string, Record<string, { requestBody?: { content: { "application/json": { schema: { $ref?: string } } } } }>>;
  components: { schemas: Record<string, unknown> };
}

describe("sample app: the OpenAPI document and Swagger UI", function () {
  let app: SampleApp;
  let document: Document;
  before(async () => {
    app = await startSampleApp(0, { logger: false, devMode: true, database: { kind: "sqlite", url: ":memory:" } });
    document = (await (await fetch(`${app.url}/docs-json`, { headers: { authorization: "Bearer dev-ada" } })).json()) as Document;
  });
  after(() => app?.close());

  const ada = { authorization: "Bearer dev-ada" };

  it("serves Swagger UI at /docs", async () => {
    const page = await fetch(`${app.url}/docs`, { headers: ada });
    expect(page.status).to.equal(200);
    expect(await page.text()).to.match(/swagger-ui/i);
  });

  it("lists every route of the app's API, and each operation it lists is answered (not 404)", async () => {
    const express = app.app.getHttpAdapter().getInstance() as { router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] } };
    const routes = express.router.stack.flatMap((layer) => layer.route ? Object.keys(layer.route.methods).map((m) => `${m.toUpperCase()} ${layer.route!.path}`) : [])
      .filter((r) => / \/(api|qp-admin)/.test(r) && !r.includes(":entity/:shape"));
    const listed = Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`));
    expect([...listed].sort()).to.deep.equal([...new Set(routes)].sort());
    for (const operation of listed) {
      const [method, path] = operation.split(" ") as [string, string];
      const response = await fetch(`${app.url}${path.replace(":id", "no-such-rule")}`, {
        method, headers: { ...ada, ...(method === "POST" ? { "content-type": "application/json" } : {}) }, ...(method === "POST" ? { body: "{}" } : {}),
      });
      const body = response.status === 204 ? null : (await response.json().catch(() => null)) as { code?: string } | null;
      // Routed: a 404 here may only be the route's own answer (a rule that is not there), never Nest's NotFound.
      expect(body?.code, `${operation}: ${response.status}`).to.not.equal("NotFound");
    }
  });

  it("describes each entity route with QueryLib's schemas, valid JSON Schema 2020-12 that accept the README's example", () => {
    for (const [, name] of publicNames) {
      expect(document.paths[`/api/${name}/filter`]?.post?.requestBody?.content["application/json"].schema.$ref).to.match(/Filter$/);
      expect(document.paths[`/api/${name}/filter`]).to.have.property("get");
      expect(document.paths[`/api/${name}/summary`]).to.have.property("post");
    }
    expect(document.openapi).to.equal("3.1.0");
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema({ $id: "doc", components: document.components });
    const validate = ajv.getSchema("doc#/components/schemas/CustomersFilter")!;
    const example = {
      conditionGroup: { sort: 0, connector: "And", conditions: [{ sort: 1, field: "segment", dataType: "Enum", operator: "Equal", values: ["Enterprise"] }], subConditionGroups: [] },
      selects: ["id", "name", "nationalId", "birthDate", "balance", "contact.email"], page: { pageNumber: 1, pageSize: 2 },
    };
    expect(validate(example), JSON.stringify(validate.errors)).to.equal(true);
    // A field the entity does not have, or an operator its field does not allow, is not.
    expect(validate({ ...example, selects: ["nope"] })).to.equal(false);
    expect(validate({ conditionGroup: { ...example.conditionGroup, conditions: [{ sort: 1, field: "balance", dataType: "Number", operator: "Contains", values: [1] }] } })).to.equal(false);
  });

  it("GET /qp-admin/openapi is QueryLib's part of it (read policy: 401 without a caller)", async () => {
    const response = await fetch(`${app.url}/qp-admin/openapi`, { headers: ada });
    expect(response.status).to.equal(200);
    const ours = (await response.json()) as Document;
    for (const [path, operations] of Object.entries(ours.paths)) expect(document.paths[path], path).to.deep.equal(operations);
    expect(Object.keys(ours.paths)).to.have.length(publicNames.length * 3);
    expect((await fetch(`${app.url}/qp-admin/openapi`)).status).to.equal(401);
  });
});
