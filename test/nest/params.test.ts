// The parameter decorators of querylib/nest (nest-module/params.ts) in a real Nest application:
// a handler that is only `(@QpFilter() filter, @QpContext() context)` answers the caller's rows,
// refuses a bad body with the parsers' code and path (400, the module's error body, with no
// exception filter on the controller), and a principal the claims mapping refuses with 401.
import { expect } from "chai";
import { Controller, HttpCode, Post } from "@nestjs/common";
import { DataSource } from "typeorm";
import type { Filter, QpPolicyContext, Segment, Summary } from "../../lib/index.js";
import { QpContext, QpFilter, QpSegment, QpSummary, QueryLibService } from "../../nest-module/index.js";
import { Account, type TestApp, call, callers, closeDatabases, expectedIds, startTestApp } from "./support.js";

/** No @UseFilters: what the decorators refuse is answered by themselves. */
@Controller("decorated")
class DecoratedController {
  constructor(private readonly querylib: QueryLibService, private readonly dataSource: DataSource) {}

  @Post("filter") @HttpCode(200)
  filter(@QpFilter() filter: Filter, @QpContext() context: QpPolicyContext) {
    return this.querylib.applyPolicy(this.dataSource.getRepository(Account), context).toListAsync(filter);
  }

  @Post("segment") @HttpCode(200)
  segment(@QpSegment() segment: Segment, @QpContext() context: QpPolicyContext) {
    return this.querylib.applyPolicy(this.dataSource.getRepository(Account), context).toListAsync(segment);
  }

  @Post("summary") @HttpCode(200)
  summary(@QpSummary() summary: Summary, @QpContext() context: QpPolicyContext) {
    return this.querylib.applyPolicy(this.dataSource.getRepository(Account), context).toListAsync(summary);
  }
}

describe("querylib/nest parameter decorators: @QpFilter, @QpSegment, @QpSummary, @QpContext", function () {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ controllers: [DecoratedController] });
  });
  after(async () => {
    await t.close();
    await closeDatabases();
  });

  const post = (path: string, body: unknown, claims: Record<string, unknown> | undefined = callers.tenant("t-2")) => call(t.url, "POST", path, { claims, body });

  it("@QpFilter and @QpContext: the caller's tenant only, the body parsed into a Filter", async () => {
    const reply = await post("/decorated/filter", { orders: [{ sort: 1, field: "id", direction: "Ascending" }], page: { pageNumber: 1, pageSize: 50 } });
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.body.data.map((r: { id: number }) => r.id)).to.deep.equal(expectedIds("t-2"));
    expect(reply.body.policy.entries.some((e: { action: string; field: string }) => e.action === "Injected" && e.field === "tenantId")).to.equal(true);
  });

  it("cursor pages over HTTP: a walk by nextCursor gives the tenant's rows once each; another tenant's replay is 400", async () => {
    const ids: number[] = [];
    let after = "";
    for (let pages = 0; pages < 100; pages++) {
      const reply = await post("/decorated/filter", { orders: [{ sort: 1, field: "id", direction: "Descending" }], page: { pageSize: 2, after, count: "none" } });
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body.totalCount).to.equal(null);
      ids.push(...reply.body.data.map((r: { id: number }) => r.id));
      if (!reply.body.hasNextPage) break;
      after = reply.body.nextCursor;
    }
    expect(ids).to.deep.equal([...expectedIds("t-2")].sort((a, b) => b - a));
    const first = await post("/decorated/filter", { orders: [{ sort: 1, field: "id", direction: "Descending" }], page: { pageSize: 2, after: "" } });
    const replay = await post("/decorated/filter", { orders: [{ sort: 1, field: "id", direction: "Descending" }], page: { pageSize: 2, after: first.body.nextCursor } }, callers.tenant("t-3"));
    expect(replay.status, replay.text).to.equal(400);
    expect(replay.body.code).to.equal("CursorDoesNotMatchRequest");
    expect(replay.body.path).to.equal("page.after");
  });

  it("a bad body is 400 with the parsers' code and path, without an exception filter on the controller", async () => {
    const badOperator = await post("/decorated/filter", { conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "name", operator: "Like", values: ["x"] }] } });
    expect(badOperator.status, badOperator.text).to.equal(400);
    expect(badOperator.body.code).to.be.a("string").and.not.equal("InternalError");
    expect(badOperator.body.path).to.equal("conditionGroup.conditions[0].operator");
    // (A JSON string never reaches the decorator: Express's strict JSON parser refuses it first, 400.)
    expect((await call(t.url, "POST", "/decorated/filter", { claims: callers.tenant("t-2"), raw: JSON.stringify("a string") })).status).to.equal(400);
    for (const body of [undefined, [1, 2]]) {
      const reply = await call(t.url, "POST", "/decorated/filter", { claims: callers.tenant("t-2"), ...(body === undefined ? {} : { raw: JSON.stringify(body) }) });
      expect(reply.status, `${JSON.stringify(body)}: ${reply.text}`).to.equal(400);
      expect(reply.body.code, `${JSON.stringify(body)}: ${reply.text}`).to.equal("InvalidRequestBody");
    }
  });

  it("@QpSummary and @QpSegment parse their shapes; a Filter's members on the Summary route are refused", async () => {
    const summary = await post("/decorated/summary", { groupBy: { fields: ["status"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });
    expect(summary.status, summary.text).to.equal(200);
    const total = summary.body.data.reduce((sum: number, row: { n: number }) => sum + Number(row.n), 0);
    expect(total).to.equal(expectedIds("t-2").length);
    const segment = await post("/decorated/segment", { conditionSets: [{ sort: 1, conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "id", operator: "LessThan", dataType: "Number", values: [10] }] } }] });
    expect(segment.status, segment.text).to.equal(200);
    expect(segment.body.data.map((r: { id: number }) => r.id)).to.deep.equal(expectedIds("t-2").filter((id) => id < 10));
    const wrong = await post("/decorated/summary", { selects: ["id"] });
    expect(wrong.status, wrong.text).to.equal(400);
  });

  it("@QpContext: no principal is 401 AnonymousPrincipal, answered by the decorator", async () => {
    const reply = await call(t.url, "POST", "/decorated/filter", { body: {} });
    expect(reply.status, reply.text).to.equal(401);
    expect(reply.body.code).to.equal("AnonymousPrincipal");
  });
});
