// The differencing attack as a statistical test (#45, "Proof"): Q1 = Sumation(score) over the
// retail accounts, Q2 = the same without one target account (a Where on id, which is not
// private); Q1 − Q2 estimates the target's score. Success: the estimate within ±25 of its score
// (scores range over 550). Each trial is a fresh caller, with a fresh budget. For a caller the
// field is not private for, every trial succeeds (the hole, documented); for one it is private for
// (ε 0.25 a Summary: the difference of two noises of scale 3,404 falls within ±25 about 0.4 % of
// the time), at most 5 % do: 1,000 trials in memory, 200 per database.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { type GuardedQuery, QpInMemoryRuleStore, QpPolicyContext, QpPolicyEngine, QpSubjectKind, applyPolicy } from "../../lib/index.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { PaAccount, privacyCatalogue, privacyData, privacyDatabase, scoreBounds } from "./domain.js";

type Row = Record<string, unknown>;

const and = (...conditions: object[]) => ({ sort: 1, connector: "And", conditions, subConditionGroups: [] });
const retail = { sort: 1, field: "segment", operator: "Equal", values: ["retail"] };
const sumOf = (...conditions: object[]) => ({ conditionGroup: and(...conditions), groupBy: { fields: ["segment"], aggregateBy: [{ field: "score", alias: "total", aggregator: "Sumation" }] } });

describeOnTargets("Private aggregates: the differencing attack", targets, privacyDatabase, (target, dataSource) => {
  function guard<T extends ObjectLiteral>(context: QpPolicyContext): GuardedQuery<T> {
    if (target === "memory") return applyPolicy(privacyData().accounts as unknown as T[], context);
    return applyPolicy(dataSource().getRepository(PaAccount) as never, context);
  }
  const trials = target === "memory" ? 1000 : 200;
  const victim = privacyData().accounts.find((a) => a.segment === "retail" && a.id === 7)!;

  async function attack(role: string, engine: QpPolicyEngine): Promise<number> {
    let successes = 0;
    for (let i = 0; i < trials; i++) {
      const context = await engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, role).withSubject(QpSubjectKind.User, `${role}-${i}`));
      const total = async (shape: object) => Number(((await guard<Row>(context).toListAsync(shape as never)) as unknown as { data: Row[] }).data[0]!.total);
      const q1 = await total(sumOf(retail));
      const q2 = await total(sumOf(retail, { sort: 2, field: "id", operator: "NotEqual", values: [victim.id], dataType: "Number" }));
      if (Math.abs(q1 - q2 - victim.score) <= 25) successes++;
    }
    return successes;
  }

  it(`without privacy every trial recovers the score; with it at most 5 % of ${target === "memory" ? "1,000" : "200"} do`, async function () {
    this.timeout(300_000);
    const engine = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", caps: { minGroupSize: 1 } }, { ruleStore: new QpInMemoryRuleStore() });
    await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "accounts", field: "score", effect: "Private" as never, private: scoreBounds });
    assert.equal(await attack("clerk", engine), trials, "the hole: exact sums give the target's score every time");
    const successes = await attack("analyst", engine);
    assert.ok(successes <= 0.05 * trials, `${successes} of ${trials} trials recovered the score within ±25`);
  });
});
