// PrivacyBudgetExhausted over HTTP (#45, item 6), through QueryLibModule on every database: a
// private Summary is answered with its privacy block (200) until the caller's budget is spent;
// the next one (a rewritten Summary: the same one again is its stored answer, free) is 429 with
// code PrivacyBudgetExhausted, no stack, and no statement reaches the database.
import "reflect-metadata";
import { expect } from "chai";
import { type INestApplication, Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import type { DataSource, Logger } from "typeorm";
import { QpInMemoryBudgetLedger } from "../../lib/index.js";
import { QueryLibModule } from "../../nest-module/index.js";
import { describeOnTargets, dialects } from "../support/targets.js";
import { RecordingLogger } from "../support/query-logging.js";
import { PaAccount, privacyDatabase } from "../privacy/domain.js";
import { assertNoStack, call, testAuthentication } from "./support.js";

const summary = (marker: number) => ({
  conditionGroup: { sort: 1, connector: "And", conditions: [{ sort: 1, field: "id", dataType: "Number", operator: "NotEqual", values: [-marker] }], subConditionGroups: [] },
  groupBy: { fields: ["segment"], aggregateBy: [{ field: "balance", alias: "total", aggregator: "Sumation" }, { field: "balance", alias: "mean", aggregator: "Average" }] },
});

describeOnTargets("Nest: PrivacyBudgetExhausted is HTTP 429", dialects, privacyDatabase, (_target, dataSource) => {
  let app: INestApplication | undefined;
  let url = "";
  before(async () => {
    @Module({})
    class PrivacyAppModule {}
    const module = {
      module: PrivacyAppModule,
      imports: [
        QueryLibModule.forRoot({
          configure: (options) => {
            options.entities.expose(PaAccount, "accounts");
            options.caps = { ...options.caps, minGroupSize: 1 };
            // 2 ε a user a day: two Summaries of a Sumation and an Average of balance (0.5 each).
            options.privacyBudget = { ledger: new QpInMemoryBudgetLedger(), limit: 2, scope: "User", window: "Daily", delta: 1e-6 };
          },
          dataSource: dataSource(),
        }),
        QueryLibModule.forFeature([{ entity: PaAccount, path: "accounts", shapes: ["summary"] }]),
      ],
    };
    app = await NestFactory.create(module, { logger: false, abortOnError: false });
    app.use(testAuthentication);
    await app.listen(0, "127.0.0.1");
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });
  after(() => app?.close());

  const post = async (user: string, body: unknown) => {
    const reply = await call(url, "POST", "/accounts/summary", { body, claims: { sub: user, roles: ["analyst"] } });
    assertNoStack(reply);
    return reply;
  };

  it("answers until the budget is spent, then 429 PrivacyBudgetExhausted with no statement run", async () => {
    for (const marker of [1, 2]) {
      const reply = await post("ann", summary(marker));
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body.data.map((r: { segment: string }) => r.segment).sort()).to.deep.equal(["business", "private", "retail"]);
      expect(reply.body.privacy).to.include({ mechanism: "discrete Laplace", epsilonCharged: 1, cached: false });
    }
    const statements = async (work: () => Promise<unknown>) => {
      const ds = dataSource() as unknown as { logger: Logger };
      const original = ds.logger;
      const recording = new RecordingLogger();
      ds.logger = recording;
      try {
        return { result: await work(), count: recording.queries.length };
      } finally {
        ds.logger = original;
      }
    };
    const refused = await statements(() => post("ann", summary(3)));
    const reply = refused.result as Awaited<ReturnType<typeof post>>;
    expect(reply.status, reply.text).to.equal(429);
    expect(reply.body).to.include({ code: "PrivacyBudgetExhausted", errorCode: 32 });
    expect(refused.count, "no statement for a refused request").to.equal(0);
    // The count sees an answered request's statements.
    expect((await statements(() => post("carl", summary(3)))).count).to.be.greaterThan(0);
    // The first Summary again is its stored answer: free, still answered.
    const again = await post("ann", summary(1));
    expect([again.status, again.body.privacy.cached]).to.deep.equal([200, true]);
    // Another user has a budget of their own.
    expect((await post("bob", summary(3))).status).to.equal(200);
  });
});
