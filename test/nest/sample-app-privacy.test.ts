// The sample app's private balance (#45, item 7): for analysts a seeded Private rule makes
// customers.balance private (bounds -2,000..30,000, cents, ε 0.5), so "average balance per
// segment" works for Ben with noise (every declared segment released, each average inside the
// bounds, a 95 % half-width and the budget left in the result's privacy block), where inference
// protection refused it (403) before; Ada, an admin the rule does not reach, is still refused it
// (balance is shown to her as a range of 1,000: the spec's inference protection); Ben no longer
// selects balance (dropped, as a denied select), and his schema offers only Aggregate on it, at
// 0.5 ε with 20 ε a day.
import { expect } from "chai";
import { samplePrivacyBudget } from "../../sample-app/app.module.js";
import { CustomerSegment } from "../../sample-app/domain/entities.js";
import { type SampleApp, startSampleApp } from "../../sample-app/main.js";
import { assertNoStack, call } from "./support.js";

const averageBySegment = { groupBy: { fields: ["segment"], aggregateBy: [{ field: "balance", alias: "averageBalance", aggregator: "Average" }, { alias: "customers", aggregator: "Count" }] } };

describe("sample app: balance is private for analysts", () => {
  let s: SampleApp;
  before(async () => {
    s = await startSampleApp(0, { logger: false, devMode: true, database: { kind: "sqlite", url: ":memory:" } });
  });
  after(() => s?.close());

  const post = async (token: string, path: string, body: unknown) => {
    const reply = await call(s.url, "POST", path, { body, headers: { authorization: `Bearer ${token}` } });
    assertNoStack(reply);
    return reply;
  };

  it("Ben gets a noisy average balance per segment with its interval and budget; Ada is still refused it", async () => {
    const ben = await post("dev-ben", "/api/customers/summary", averageBySegment);
    expect(ben.status, ben.text).to.equal(200);
    expect(ben.body.data.map((r: { segment: string }) => r.segment).sort()).to.deep.equal(Object.values(CustomerSegment).sort());
    for (const row of ben.body.data) expect(row.averageBalance).to.be.within(-2000, 30000);
    const privacy = ben.body.privacy;
    expect(privacy).to.include({ mechanism: "discrete Laplace", cached: false, epsilonCharged: 1, epsilonRemaining: samplePrivacyBudget - 1 });
    expect(privacy.aggregates.averageBalance).to.include({ lower: -2000, upper: 30000, granularity: 0.01, epsilon: 0.5 });
    expect(privacy.aggregates.averageBalance.halfWidths95).to.have.length(ben.body.data.length);
    // Asked again: the stored answer, free.
    const again = await post("dev-ben", "/api/customers/summary", averageBySegment);
    expect([again.body.privacy.cached, JSON.stringify(again.body.data)]).to.deep.equal([true, JSON.stringify(ben.body.data)]);
    const ada = await post("dev-ada", "/api/customers/summary", averageBySegment);
    expect(ada.status, ada.text).to.equal(403);
    expect(ada.body.code).to.equal("FieldDeniedForAggregate");
  });

  it("Ben no longer selects balance, and his schema offers it for Aggregate only, at its cost", async () => {
    const rows = await post("dev-ben", "/api/customers/filter", { selects: ["id", "balance"], page: { pageNumber: 1, pageSize: 3 } });
    expect(rows.status, rows.text).to.equal(200);
    for (const row of rows.body.data) expect(row).to.not.have.property("balance");
    const schema = await post("dev-ben", "/qp-admin/schema", { entity: "customers" });
    const balance = schema.body.fields.find((f: { path: string }) => f.path === "balance");
    expect(balance.features).to.deep.equal(["Aggregate"]);
    expect(balance.private).to.deep.include({ lower: -2000, upper: 30000, epsilon: 0.5 });
    expect(balance.private.budget).to.include({ limit: samplePrivacyBudget, scope: "User", window: "Daily" });
  });
});
