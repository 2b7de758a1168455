// Bad request bodies against the sample app: every route answers them with the admin API's JSON
// error body ({ code, message, … }), never Express's or Nest's default body and never an
// unfiltered page. Requests go through node:http so the bytes and headers are exactly the test's.
import { expect } from "chai";
import { type SampleApp, startSampleApp } from "../../sample-app/main.js";
import { type Reply, assertNoStack, rawCall } from "./support.js";

const ben = { authorization: "Bearer dev-ben" };
const ada = { authorization: "Bearer dev-ada" };
const json = { "content-type": "application/json" };

/** A filter whose answer shows it was read: one row per page. */
const onePerPage = JSON.stringify({ page: { pageNumber: 1, pageSize: 1 } });

function expectError(reply: Reply, status: number, code: string, message?: RegExp): void {
  expect(reply.status, reply.text).to.equal(status);
  expect(reply.headers.get("content-type"), reply.text).to.match(/^application\/json/);
  expect(reply.body, reply.text).to.be.an("object");
  expect(reply.body.code, reply.text).to.equal(code);
  expect(reply.body.message, reply.text).to.be.a("string");
  expect(reply.body, reply.text).not.to.have.property("statusCode");
  if (message) expect(reply.body.message).to.match(message);
  assertNoStack(reply);
}

describe("sample app: request bodies", function () {
  let s: SampleApp;
  const send = (method: string, path: string, headers: Record<string, string>, body?: string | Buffer, chunked = false) =>
    rawCall(s.url, method, path, { headers, body, chunked });

  before(async () => {
    s = await startSampleApp(0, { logger: false, devMode: true, database: { kind: "sqlite", url: ":memory:" }, seed: { customersPerTenant: 60, employeesPerTenant: 12 } });
  });
  after(() => s?.close());

  const queryRoutes = ["/api/customers/filter", "/api/customers/segment", "/api/customers/summary"];
  const postRoutes = [...queryRoutes, "/qp-admin/schema", "/qp-admin/explain", "/qp-admin/simulate", "/qp-admin/rules"];

  it("answers malformed JSON with 400 InvalidJson on every POST route, without echoing the input", async () => {
    for (const path of postRoutes) {
      const reply = await send("POST", path, { ...ada, ...json }, '{"selects": ["secret-marker"');
      expectError(reply, 400, "InvalidJson");
      expect(reply.text).not.to.include("secret-marker");
    }
  });

  it("answers a body of another content type with 415 UnsupportedMediaType, never an unfiltered page", async () => {
    for (const path of postRoutes) {
      for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "application/jsonx"]) {
        expectError(await send("POST", path, { ...ada, "content-type": type }, onePerPage), 415, "UnsupportedMediaType", /application\/json/);
      }
      expectError(await send("POST", path, ada, onePerPage), 415, "UnsupportedMediaType");
    }
  });

  it("reads application/json with a utf-8 charset, and with a byte order mark", async () => {
    for (const type of ["application/json; charset=utf-8", "application/json;charset=UTF-8", "Application/JSON"]) {
      const reply = await send("POST", "/api/customers/filter", { ...ben, "content-type": type }, onePerPage);
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body.data).to.have.length(1);
    }
    const bom = await send("POST", "/api/customers/filter", { ...ben, ...json }, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(onePerPage)]));
    expect(bom.status, bom.text).to.equal(200);
    expect(bom.body.data).to.have.length(1);
  });

  it("answers a charset it cannot read with 415 and the JSON error body", async () => {
    expectError(await send("POST", "/api/customers/filter", { ...ben, "content-type": "application/json; charset=latin1" }, onePerPage), 415, "UnsupportedMediaType");
  });

  it("answers a body over the size limit with 413 PayloadTooLarge", async () => {
    const big = JSON.stringify({ selects: ["id"], page: { pageNumber: 1, pageSize: 1 }, padding: "x".repeat(1024 * 1024) });
    for (const path of postRoutes) expectError(await send("POST", path, { ...ada, ...json }, big), 413, "PayloadTooLarge");
  });

  it("answers a top-level array, string, number, boolean or null with 400 InvalidRequestBody", async () => {
    for (const path of postRoutes) {
      for (const body of ["[]", `[${onePerPage}]`, '"{}"', JSON.stringify(onePerPage), "3", "true", "null"]) {
        expectError(await send("POST", path, { ...ada, ...json }, body), 400, "InvalidRequestBody", /JSON object/);
      }
    }
  });

  it("answers a POST without a body, or with an empty one, with 400 InvalidRequestBody, never an unfiltered page", async () => {
    for (const path of postRoutes) {
      expectError(await send("POST", path, ada), 400, "InvalidRequestBody", /JSON object/);
      expectError(await send("POST", path, { ...ada, ...json }, ""), 400, "InvalidRequestBody", /JSON object/);
      expectError(await send("POST", path, { ...ada, ...json }, "", true), 400, "InvalidRequestBody", /JSON object/);
      expectError(await send("POST", path, { ...ada, ...json }, "  \n"), 400, "InvalidJson");
    }
    // An explicit empty filter is a query (the policy still scopes it to the caller's tenant).
    const all = await send("POST", "/api/customers/filter", { ...ben, ...json }, "{}");
    expect(all.status, all.text).to.equal(200);
    expect(new Set(all.body.data.map((r: { tenantId: string }) => r.tenantId))).to.deep.equal(new Set(["acme"]));
  });

  it("answers a body sent to a GET or DELETE route with 400 InvalidRequestBody (the route reads none)", async () => {
    for (const [method, path] of [["GET", "/api/me"], ["GET", "/api/audit"], ["GET", "/api"], ["GET", "/qp-admin/rules"], ["GET", "/qp-admin/health"], ["DELETE", "/qp-admin/rules/x"]]) {
      expectError(await send(method!, path!, { ...ada, ...json }, '{"requestId":"r-1"}'), 400, "InvalidRequestBody", /takes no request body/);
      expectError(await send(method!, path!, { ...ada, "content-type": "text/plain" }, "hello"), 400, "InvalidRequestBody", /takes no request body/);
    }
    // A body-less GET (or one with an empty body) is what it always was.
    expect((await send("GET", "/api/me", ben)).status).to.equal(200);
    expect((await send("GET", "/api/me", { ...ben, "content-length": "0" })).status).to.equal(200);
  });

  it("answers an unknown route or method with 404 and the JSON error body", async () => {
    expectError(await send("GET", "/api/nowhere", ben), 404, "NotFound");
    expectError(await send("PUT", "/api/customers/filter", { ...ben, ...json }, "{}"), 404, "NotFound");
    expectError(await send("POST", "/nowhere", { ...ben, ...json }, "{}"), 404, "NotFound");
  });

  it("answers a repeated or nested query parameter with 400 and the JSON error body, not a driver error", async () => {
    // Express 5's simple query parser makes an array of a repeated parameter (`a[x]=1` is just another name).
    for (const query of ["requestId=a&requestId=b", "limit=1&limit=2", "requestId=a&limit=1&requestId=a"]) {
      expectError(await send("GET", `/api/audit?${query}`, ada), 400, "InvalidRequest", /once, as a plain value/);
    }
    for (const query of ["sql=true&sql=true", "sql=false&sql=true"]) {
      expectError(await send("POST", `/api/customers/filter?${query}`, { ...ben, ...json }, "{}"), 400, "InvalidRequest", /once, as a plain value/);
    }
    expect((await send("GET", "/api/audit?requestId=none&limit=2", ada)).body).to.deep.equal([]);
  });

  it("answers a body it cannot decode (a broken gzip stream) with 400 and the JSON error body", async () => {
    expectError(await send("POST", "/api/customers/filter", { ...ben, ...json, "content-encoding": "gzip" }, onePerPage), 400, "BadRequest");
    expectError(await send("POST", "/api/customers/filter", { ...ben, ...json, "content-encoding": "br2" }, onePerPage), 415, "UnsupportedMediaType");
  });
});
