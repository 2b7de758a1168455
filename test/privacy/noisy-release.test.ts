// Private aggregates released with noise and paid from a budget (#45, step 4): a Summary's
// Count, CountDistinct, Sumation and Average of a private field come back noised (the noise of a
// Sumation in memory over 5,000 answers has the mean |noise| of its scale, and a scale 10 % off
// is told apart), the hidden row count the Average's noise reads never reaches a row; the ε of
// every answer is charged to the caller's budget before anything runs, per user: with 1 ε and
// 0.25 a Summary, four answers are given and the fifth is refused (PrivacyBudgetExhausted), on
// every target, with no statement run for it, while another user still gets answers; an anonymous caller, and a guarded
// builder (which the host would run past the noise), are refused before any charge.
import assert from "node:assert/strict";
import type { Logger, ObjectLiteral } from "typeorm";
import { CountingLedger } from "./domain.js";
import { RecordingLogger } from "../support/query-logging.js";
import {
  type GuardedQuery, type IQpBudgetLedger, PolicyErrorCode, QpConfigurationError, type QpBudgetCharge, QpInMemoryBudgetLedger, QpInMemoryRuleStore, QpPolicyContext, QpPolicyEngine,
  QpSubjectKind, applyPolicy,
} from "../../lib/index.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { expectPolicyError } from "../policy/helpers.js";
import { PaAccount, privacyCatalogue, privacyData, privacyDatabase, scoreBounds } from "./domain.js";

type Row = Record<string, unknown>;

const sumBySegment = { groupBy: { fields: ["segment"], aggregateBy: [{ field: "score", alias: "total", aggregator: "Sumation" }] }, orders: [{ sort: 1, field: "segment", direction: "Ascending" }] };
/** The same Summary rewritten with a condition that changes nothing (id ≠ −i): a new answer each time, paid (the averaging attack's move). */
const rewritten = (i: number) => ({ ...sumBySegment, conditionGroup: { sort: 1, connector: "And", conditions: [{ sort: 1, field: "id", operator: "NotEqual", values: [-1 - i], dataType: "Number" }], subConditionGroups: [] } });
const everyAggregate = { groupBy: { fields: ["segment"], aggregateBy: ["Count", "CountDistinct", "Sumation", "Average"].map((aggregator) => ({ field: "score", alias: aggregator.toLowerCase(), aggregator })) } };

/** Exact per-segment sums of score (every score lies inside scoreBounds: the clamp changes nothing). */
function exactSums(): Map<string, number> {
  const sums = new Map<string, number>();
  for (const a of privacyData().accounts) sums.set(a.segment, (sums.get(a.segment) ?? 0) + a.score);
  return sums;
}


async function engineWith(budget: { limit: number; ledger?: IQpBudgetLedger }): Promise<QpPolicyEngine> {
  const engine = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", caps: { minGroupSize: 1 }, privacyBudget: budget }, { ruleStore: new QpInMemoryRuleStore() });
  await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "accounts", field: "score", effect: "Private" as never, private: scoreBounds });
  return engine;
}
const analyst = (engine: QpPolicyEngine, user: string) => engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, "analyst").withSubject(QpSubjectKind.User, user));

describe("Private aggregates: the privacy budget's options", () => {
  it("defaults to 20 ε per field per user per day; a bad limit, scope, window or member stops the engine", () => {
    const engine = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off" });
    const { limit, scope, window, ledger } = engine.options.privacyBudget;
    assert.deepEqual([limit, scope, window, ledger instanceof QpInMemoryBudgetLedger], [20, "User", "Daily", true]);
    for (const [bad, mentions] of [[{ limit: 0 }, /limit/], [{ limit: 0.0000001 }, /six decimals/], [{ scope: "Planet" }, /scope/], [{ window: "Hourly" }, /window/], [{ limits: 3 }, /unknown member/]] as const) {
      assert.throws(() => new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", privacyBudget: bad as never }), (error: unknown) => error instanceof QpConfigurationError && mentions.test(error.message));
    }
  });
});

describe("Private aggregates: the noise of a released Sumation (memory, 5,000 answers)", function () {
  this.timeout(120_000);
  it("has the mean |noise| of scale (850 + 1)/0.25 steps, and a scale 10 % larger is told apart", async () => {
    const engine = await engineWith({ limit: 1e6 });
    const exact = exactSums();
    const noise: number[] = [];
    for (let i = 0; i < 5000; i++) {
      // A caller each: the same Summary from one caller would be its stored (sticky) answer.
      const context = await analyst(engine, `ann-${i}`);
      const result = (await applyPolicy(privacyData().accounts as unknown as Row[], context).toListAsync(sumBySegment)) as unknown as { data: Row[] };
      for (const row of result.data) noise.push(Number(row.total) - exact.get(String(row.segment))!);
    }
    const meanAbs = (b: number) => {
      const q = Math.exp(-1 / b);
      return (2 * q) / (1 - q * q);
    };
    const b = (850 + 1) / 0.25;
    const observed = noise.reduce((s, z) => s + Math.abs(z), 0) / noise.length;
    // 15,000 draws: the relative standard error of the mean |noise| is about 0.8 %; ±7 % is over eight.
    assert.ok(Math.abs(observed / meanAbs(b) - 1) < 0.07, `mean |noise| ${observed} against ${meanAbs(b)}`);
    assert.ok(Math.abs(observed / meanAbs(b * 1.1) - 1) > 0.07, "a scale 10 % larger would fail the same check");
    assert.ok(noise.every((z) => Number.isInteger(z)), "whole granularity steps");
  });
});

describeOnTargets("Private aggregates: released with noise, paid from the budget", targets, privacyDatabase, (target, dataSource) => {
  function guard<T extends ObjectLiteral>(context: QpPolicyContext): GuardedQuery<T> {
    if (target === "memory") return applyPolicy(privacyData().accounts as unknown as T[], context);
    return applyPolicy(dataSource().getRepository(PaAccount) as never, context);
  }
  const run = async (context: QpPolicyContext, shape: object) => (await guard<Row>(context).toListAsync(shape as never)) as unknown as { data: Row[] };
  /** The statements the database runs during `work` (none counted on memory). */
  async function counted(work: () => Promise<unknown>): Promise<number> {
    if (target === "memory") return (await work(), 0);
    const ds = dataSource() as unknown as { logger: Logger };
    const original = ds.logger;
    const recording = new RecordingLogger();
    ds.logger = recording;
    try {
      await work();
    } finally {
      ds.logger = original;
    }
    return recording.queries.length;
  }

  it("every private aggregate comes back noised, each as a number, and no hidden column reaches a row", async () => {
    const engine = await engineWith({ limit: 1000 });
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const { data } = await run(await analyst(engine, `ann-${i}`), everyAggregate);
      assert.equal(data.length, 3);
      for (const row of data) {
        assert.deepEqual(Object.keys(row).sort(), ["average", "count", "countdistinct", "segment", "sumation"]);
        for (const key of ["average", "count", "countdistinct", "sumation"]) assert.equal(typeof row[key], "number", key);
        assert.ok((row.average as number) >= scoreBounds.lower && (row.average as number) <= scoreBounds.upper, "the average stays inside the bounds");
        seen.add(JSON.stringify(row));
      }
    }
    // Twenty answers of three groups, all different: the noise is there (exact answers would repeat).
    assert.ok(seen.size > 50, `${seen.size} distinct rows`);
  });

  it("the averaging attack: 1 ε buys four rewritten Summaries at 0.25; the fifth is PrivacyBudgetExhausted with no statement run; another user still pays from their own", async () => {
    const ledger = new CountingLedger();
    const engine = await engineWith({ limit: 1, ledger });
    const ann = await analyst(engine, "ann");
    for (let i = 0; i < 3; i++) await run(ann, rewritten(i));
    // The fourth, and the refused fifth, with the database's statements counted (the ledger is in memory here).
    const statements = await counted(() => run(ann, rewritten(3)));
    const refused = await counted(() => expectPolicyError(() => run(ann, rewritten(4)), PolicyErrorCode.PrivacyBudgetExhausted, "are left until"));
    if (target !== "memory") {
      assert.ok(statements > 0, "an answered Summary runs its statements (the count sees them)");
      assert.equal(refused, 0, "no statement runs for a refused request");
    }
    assert.deepEqual(ledger.charges.map((c) => [c.kind, c.scopeKind, c.scopeId, c.entity, c.field, c.cost, c.limit]), Array(5).fill(["privacy", "User", "ann", "accounts", "score", 0.25, 1]));
    await run(await analyst(engine, "bob"), sumBySegment);
    // Four aggregates of one field cost 4 × 0.25 = 1 ε in one charge.
    const full = await analyst(engine, "cy");
    await run(full, everyAggregate);
    assert.deepEqual(ledger.charges.at(-1)!.cost, 1);
    await expectPolicyError(() => run(full, sumBySegment), PolicyErrorCode.PrivacyBudgetExhausted);
    // The same Summary again is its stored answer (sticky): free, even with nothing left.
    const again = (await run(full, everyAggregate)) as unknown as { privacy: { cached: boolean; epsilonCharged: number } };
    assert.deepEqual([again.privacy.cached, again.privacy.epsilonCharged], [true, 0]);
  });

  it("a refused channel, an anonymous caller and a guarded builder are refused before any charge", async () => {
    const ledger = new CountingLedger();
    const engine = await engineWith({ limit: 10, ledger });
    const ann = await analyst(engine, "ann");
    await expectPolicyError(() => run(ann, { groupBy: { fields: ["segment"], aggregateBy: [{ field: "score", alias: "m", aggregator: "Maximum" }, { field: "score", alias: "s", aggregator: "Sumation" }] } }), PolicyErrorCode.PrivateFieldDeniedForAggregate);
    const anonymous = await engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, "analyst"));
    await expectPolicyError(() => run(anonymous, sumBySegment), PolicyErrorCode.MissingContextValue, "no User subject");
    if (target !== "memory") await expectPolicyError(() => guard<Row>(ann).summary(sumBySegment as never), PolicyErrorCode.PrivateFieldDeniedForAggregate, "a builder would return it exact");
    assert.equal(ledger.charges.length, 0);
  });
});
