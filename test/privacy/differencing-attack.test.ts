// The differencing attack as a statistical test (#45, "Proof"): Q1 = Sumation(score) over the
// retail accounts, Q2 = the same without one target account (a Where on id, which is not
// private); Q1 − Q2 estimates the target's score. Success: the estimate within ±25 of its score
// (scores range over 550). Each trial is a fresh caller, with a fresh budget. For a caller the
// field is not private for, every trial succeeds (the hole, documented); for one it is private for
// (ε 0.25 a Summary: the difference of two noises of scale 3,404 falls within ±25 about 0.4 % of
// the time), at most 5 % do: 1,000 trials in memory, 200 per database. The same for Average: the
// target's score is n·Q1 − (n − 1)·Q2 (n = 8 retail accounts); with privacy each average carries
// noise of scale about 2,204/n and the estimate multiplies it by n: about 1 % of trials land
// within ±25 (measured 0.8 % over 1,000), 5 % is over 6 standard deviations above at 200 trials.
// Both also check the bound: the Wilson 95 % upper bound of the success rate at most
// e^ε (ε 0.5 for the two answers) times the blind-guess rate 51/551 = 0.153 (at 200 trials the
// upper bound stays below it up to 20 successes, over 6 standard deviations above the expected ~2).
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { type GuardedQuery, QpInMemoryRuleStore, QpPolicyContext, QpPolicyEngine, QpSubjectKind, applyPolicy } from "../../lib/index.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { PaAccount, privacyCatalogue, privacyData, privacyDatabase, scoreBounds } from "./domain.js";

type Row = Record<string, unknown>;

/** The Wilson score interval's 95 % upper bound of a success rate. */
function wilsonUpper(successes: number, trials: number): number {
  const z = 1.959964;
  const p = successes / trials;
  const centre = p + (z * z) / (2 * trials);
  const spread = z * Math.sqrt((p * (1 - p)) / trials + (z * z) / (4 * trials * trials));
  return (centre + spread) / (1 + (z * z) / trials);
}
/** A blind guess uniform over the score's bounds lands within ±25 with probability 51/551; ε-DP bounds the attack by e^ε times it (two answers at 0.25: ε 0.5). */
const blindBound = Math.exp(0.5) * (51 / 551);

const and = (...conditions: object[]) => ({ sort: 1, connector: "And", conditions, subConditionGroups: [] });
const retail = { sort: 1, field: "segment", operator: "Equal", values: ["retail"] };
const sumOf = (...conditions: object[]) => ({ conditionGroup: and(...conditions), groupBy: { fields: ["segment"], aggregateBy: [{ field: "score", alias: "total", aggregator: "Sumation" }] } });
const averageOf = (...conditions: object[]) => ({ conditionGroup: and(...conditions), groupBy: { fields: ["segment"], aggregateBy: [{ field: "score", alias: "mean", aggregator: "Average" }] } });

describeOnTargets("Private aggregates: the differencing attack", targets, privacyDatabase, (target, dataSource) => {
  function guard<T extends ObjectLiteral>(context: QpPolicyContext): GuardedQuery<T> {
    if (target === "memory") return applyPolicy(privacyData().accounts as unknown as T[], context);
    return applyPolicy(dataSource().getRepository(PaAccount) as never, context);
  }
  const trials = target === "memory" ? 1000 : 200;
  const victim = privacyData().accounts.find((a) => a.segment === "retail" && a.id === 7)!;

  const retailSize = privacyData().accounts.filter((a) => a.segment === "retail").length;

  async function attack(role: string, engine: QpPolicyEngine, average = false): Promise<number> {
    let successes = 0;
    for (let i = 0; i < trials; i++) {
      const context = await engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, role).withSubject(QpSubjectKind.User, `${role}-${average ? "avg" : "sum"}-${i}`));
      // The retail row (declared keys release every segment, so the row is found by its key).
      const value = async (shape: object) => Number(((await guard<Row>(context).toListAsync(shape as never)) as unknown as { data: Row[] }).data.find((r) => r.segment === "retail")![average ? "mean" : "total"]);
      const without = { sort: 2, field: "id", operator: "NotEqual", values: [victim.id], dataType: "Number" };
      const q1 = await value((average ? averageOf : sumOf)(retail));
      const q2 = await value((average ? averageOf : sumOf)(retail, without));
      // Average: n·Q1 − (n − 1)·Q2 is the target's value.
      const estimate = average ? retailSize * q1 - (retailSize - 1) * q2 : q1 - q2;
      if (Math.abs(estimate - victim.score) <= 25) successes++;
    }
    if (process.env.QL_PRIVACY_VERBOSE) console.log(`[${target}] ${role} ${average ? "Average" : "Sumation"}: ${successes}/${trials}`);
    return successes;
  }

  it(`without privacy every trial recovers the score; with it at most 5 % of ${target === "memory" ? "1,000" : "200"} do`, async function () {
    this.timeout(300_000);
    const engine = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", caps: { minGroupSize: 1 } }, { ruleStore: new QpInMemoryRuleStore() });
    await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "accounts", field: "score", effect: "Private" as never, private: scoreBounds });
    assert.equal(await attack("clerk", engine), trials, "the hole: exact sums give the target's score every time");
    const successes = await attack("analyst", engine);
    assert.ok(successes <= 0.05 * trials, `${successes} of ${trials} trials recovered the score within ±25`);
    assert.ok(wilsonUpper(successes, trials) <= blindBound, `Wilson upper bound ${wilsonUpper(successes, trials)} above e^ε × the blind guess (${blindBound})`);
  });

  it(`Average: without privacy every trial recovers the score from n·Q1 − (n − 1)·Q2; with it at most 5 % of ${target === "memory" ? "1,000" : "200"} do`, async function () {
    this.timeout(300_000);
    const engine = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", caps: { minGroupSize: 1 } }, { ruleStore: new QpInMemoryRuleStore() });
    await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "accounts", field: "score", effect: "Private" as never, private: scoreBounds });
    assert.equal(await attack("clerk", engine, true), trials, "the hole: exact averages give the target's score every time");
    const successes = await attack("analyst", engine, true);
    assert.ok(successes <= 0.05 * trials, `${successes} of ${trials} trials recovered the score within ±25`);
    assert.ok(wilsonUpper(successes, trials) <= blindBound, `Wilson upper bound ${wilsonUpper(successes, trials)} above e^ε × the blind guess (${blindBound})`);
  });
});
