// forFeature's `agGrid` option (#46): POST {path}/ag-grid takes AG Grid's own server-side request
// and answers { rowData, rowCount }, translated on the server with the client adapter's core,
// under the caller's policy; bounded like every input; listed in the OpenAPI document. Over HTTP
// on every database, on the feature app's fixture (36 patients, 12 per tenant, groups of two or
// more, pages of at most 20). Expectations are computed here from the fixture rows.
import { expect } from "chai";
import { type INestApplication, Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import type { DataSource } from "typeorm";
import { QpConfigurationError } from "../../lib/index.js";
import { QpInMemoryAuditSink, QueryLibModule, queryLibOpenApiDocument } from "../../nest-module/index.js";
import { describeOnTargets, dialects } from "../support/targets.js";
import { StaffGuard, featureDatabase, featureRootOptions } from "./feature-app/app.js";
import { Patient, PatientStatus, patientsOf } from "./feature-app/entities.js";
import { type Reply, assertNoStack, call, testAuthentication } from "./support.js";

type Row = ReturnType<typeof patientsOf>[number];
const staff = (tenant: string) => ({ sub: `staff-${tenant}`, roles: ["staff"], tenant });
const block = (parts: Record<string, unknown>) => ({ startRow: 0, endRow: 20, rowGroupCols: [], valueCols: [], pivotCols: [], pivotMode: false, groupKeys: [], filterModel: null, sortModel: [], ...parts });

async function startApp(dataSource: DataSource): Promise<{ app: INestApplication; url: string }> {
  @Module({})
  class AgGridAppModule {}
  const app = await NestFactory.create({
    module: AgGridAppModule,
    imports: [QueryLibModule.forRoot(featureRootOptions(dataSource, new QpInMemoryAuditSink())), QueryLibModule.forFeature([{ entity: Patient, path: "patients", agGrid: { timeZone: "Europe/Oslo" } }], { guards: [StaffGuard] })],
  }, { logger: false, abortOnError: false });
  app.use(testAuthentication);
  await app.listen(0, "127.0.0.1");
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${port}` };
}

describe("forFeature agGrid: configuration", () => {
  for (const [title, agGrid] of [["not a boolean or object", "yes"], ["an unknown option", { zone: "UTC" }], ["a time zone that is none", { timeZone: "Mars/Olympus" }]] as const) {
    it(`refuses ${title} at startup`, () => {
      expect(() => QueryLibModule.forFeature([{ entity: Patient, path: "patients", agGrid: agGrid as never }])).to.throw(QpConfigurationError, /agGrid/);
    });
  }
});

describeOnTargets("forFeature agGrid: POST {path}/ag-grid", dialects, featureDatabase, (_target, dataSource: () => DataSource) => {
  let app: INestApplication;
  let url: string;
  before(async () => ({ app, url } = await startApp(dataSource())));
  after(async () => app?.close());

  const post = async (body: unknown, claims: object | null = staff("t-2")): Promise<Reply> => {
    const reply = await call(url, "POST", "/patients/ag-grid", { body, ...(claims ? { claims: claims as Record<string, unknown> } : {}) });
    assertNoStack(reply);
    return reply;
  };
  const mine = () => patientsOf("t-2");
  const byScoreDesc = (rows: readonly Row[]) => [...rows].sort((a, b) => b.score - a.score || a.id - b.id);

  it("column filters, a sort and a block: the caller's rows as AG Grid's filters define them (text case-insensitive)", async () => {
    const reply = await post(block({ filterModel: { name: { filterType: "text", type: "contains", filter: "A" }, score: { filterType: "number", type: "inRange", filter: 10, filterTo: 80 } }, sortModel: [{ colId: "score", sort: "desc" }], startRow: 0, endRow: 5 }));
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    const expected = byScoreDesc(mine().filter((p) => p.name.toLowerCase().includes("a") && p.score > 10 && p.score < 80));
    expect(reply.body.rowData.map((r: Row) => r.id)).to.deep.equal(expected.slice(0, 5).map((p) => p.id));
    expect(reply.body.rowCount).to.equal(expected.length);
    // Only what the caller may see: the denied national id is not selected (Strict would refuse it), the masked e-mail is masked.
    expect(reply.body.rowData.every((r: Record<string, unknown>) => !("nationalId" in r) && !("ssn" in r) && (r["email"] === null || /^p\*+@/.test(String(r["email"]))))).to.equal(true);
  });

  it("a block off its edges (rows 2 to 8) and the Advanced Filter's nested tree", async () => {
    const filterModel = { filterType: "join", type: "OR", conditions: [
      { filterType: "boolean", colId: "insured", type: "false" },
      { filterType: "join", type: "AND", conditions: [{ filterType: "number", colId: "score", type: "greaterThanOrEqual", filter: 50 }, { filterType: "set", colId: "status", type: "isAnyOf", values: ["Active", "Transferred"] }] },
    ] };
    const reply = await post(block({ filterModel, sortModel: [{ colId: "score", sort: "desc" }], startRow: 2, endRow: 8 }));
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    const expected = byScoreDesc(mine().filter((p) => !p.insured || (p.score >= 50 && p.status !== PatientStatus.Discharged)));
    expect(reply.body.rowData.map((r: Row) => r.id)).to.deep.equal(expected.slice(2, 8).map((p) => p.id));
  });

  it("row groups with aggregates (groups below the floor withheld), then a group's leaf rows", async () => {
    const rowGroupCols = [{ id: "status", displayName: "Status", field: "status" }];
    const valueCols = [{ id: "score", displayName: "Score", field: "score", aggFunc: "sum" }, { id: "id", displayName: "Rows", field: "id", aggFunc: "count" }];
    const reply = await post(block({ rowGroupCols, valueCols }));
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    const groups = new Map<string, Row[]>();
    for (const p of mine()) groups.set(p.status, [...(groups.get(p.status) ?? []), p]);
    const expected = [...groups].filter(([, m]) => m.length >= 2).map(([status, m]) => ({ status, score: m.reduce((s, p) => s + p.score, 0), id: m.length })).sort((a, b) => a.status.localeCompare(b.status));
    expect([...reply.body.rowData].sort((a: { status: string }, b: { status: string }) => a.status.localeCompare(b.status))).to.deep.equal(expected);
    const leaves = await post(block({ rowGroupCols, valueCols, groupKeys: ["Active"], sortModel: [{ colId: "score", sort: "desc" }] }));
    expect(leaves.body.rowData.map((r: Row) => r.id)).to.deep.equal(byScoreDesc(mine().filter((p) => p.status === PatientStatus.Active)).map((p) => p.id));
  });

  it("refusals answer the module's error with the grid column (else the body's member) as its path: a column the caller cannot use, too many conditions (MaxConditions 5), a block past MaxPageSize", async () => {
    const denied = await post(block({ filterModel: { nationalId: { filterType: "text", type: "equals", filter: "SSN-1002" } } }));
    expect([denied.status, denied.body.code, denied.body.path]).to.deep.equal([400, "GridColumnUnknown", "nationalId"]);
    const many = await post(block({ filterModel: { score: { filterType: "number", operator: "OR", conditions: [1, 2, 3, 4, 5, 6].map((n) => ({ filterType: "number", type: "equals", filter: n })) } } }));
    expect([many.status, many.body.code, many.body.errorCode, many.body.path], JSON.stringify(many.body)).to.deep.equal([400, "CapExceeded", 9, "filterModel"]);
    const page = await post(block({ startRow: 0, endRow: 50 }));
    expect([page.status, page.body.code]).to.deep.equal([400, "GridInvalidRequest"]);
  });

  it("bounds the body before reading it: CapExceeded with the body's own path; unknown members and non-objects refused; no caller 401", async () => {
    const sorts = await post(block({ sortModel: Array.from({ length: 11 }, () => ({ colId: "score", sort: "asc" })) }));
    expect([sorts.status, sorts.body.code, sorts.body.path]).to.deep.equal([400, "CapExceeded", "sortModel"]);
    const long = await post(block({ filterModel: { name: { filterType: "text", type: "contains", filter: "x".repeat(10_001) } } }));
    expect([long.status, long.body.code, long.body.path]).to.deep.equal([400, "CapExceeded", "filterModel.name.filter"]);
    const deep = await post(block({ filterModel: Array.from({ length: 40 }).reduce<object>((inner) => ({ filterType: "join", type: "AND", conditions: [inner] }), { filterType: "number", colId: "score", type: "equals", filter: 1 }) }));
    expect([deep.status, deep.body.code]).to.deep.equal([400, "CapExceeded"]);
    const unknown = await post({ ...block({}), rowModelType: "serverSide" });
    expect([unknown.status, unknown.body.code, unknown.body.path]).to.deep.equal([400, "InvalidAgGridRequest", "rowModelType"]);
    expect((await post([])).status).to.equal(400);
    expect((await post(block({}), null)).status).to.equal(401);
  });

  it("a date filter on a Date field compares calendar dates (inRange without its bounds); a body's timeZone must be one", async () => {
    const reply = await post(block({ filterModel: { admittedOn: { filterType: "date", type: "inRange", dateFrom: "2024-03-01 00:00:00", dateTo: "2024-08-15 00:00:00" } }, timeZone: "America/Lima" }));
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    const expected = mine().filter((p) => p.admittedOn > "2024-03-01" && p.admittedOn < "2024-08-15").map((p) => p.id).sort((a, b) => a - b);
    expect(expected.length).to.be.greaterThan(0);
    expect(reply.body.rowData.map((r: Row) => r.id)).to.deep.equal(expected);
    const zone = await post(block({ timeZone: "Mars/Olympus" }));
    expect([zone.status, zone.body.code]).to.deep.equal([400, "GridInvalidRequest"]);
  });

  it("a malformed body is a 400 with a code, never a 500", async () => {
    const bodies = [
      block({ rowGroupCols: [1] }), block({ rowGroupCols: [{ id: "status" }], valueCols: [null] }), block({ rowGroupCols: [{ id: "status" }], valueCols: [{ id: "score", aggFunc: "constructor" }] }),
      block({ rowGroupCols: [{ id: "score" }], groupKeys: [{}] }), block({ filterModel: { name: 5 } }), block({ filterModel: { name: { filterType: "text", type: "equals", filter: { a: 1 } } } }),
      block({ sortModel: [null] }), block({ startRow: "x" }), block({ filterModel: { filterType: "join", type: "AND", conditions: [{ filterType: "text", type: "equals" }] } }),
      block({ filterModel: { score: { filterType: "set", values: "1" } } }), block({ groupKeys: ["a"] }), block({ pivotMode: true }),
    ];
    for (const body of bodies) {
      const reply = await post(body);
      expect(reply.status, JSON.stringify(body)).to.equal(400);
      expect(reply.body.code, JSON.stringify(body)).to.be.a("string");
    }
  });

  it("is listed in the OpenAPI document with the entity's other routes", () => {
    const document = queryLibOpenApiDocument(app);
    expect(document.paths).to.have.property("/patients/ag-grid");
    expect((document.paths["/patients/ag-grid"] as { post: { operationId: string } }).post.operationId).to.equal("patients_agGrid");
  });
});
