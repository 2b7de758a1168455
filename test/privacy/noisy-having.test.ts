// Having, orders, pages and totals of a private Summary on the released noisy values (#45,
// item 2), on every target.
//
// The attack first: a Having on an exact sum is a bisection oracle. Grouped by segment with a
// Where on id = 7 (id is not private), the retail group holds account 7 alone, and
// `having s >= x` answers "is account 7's score at least x?": ten requests find it exactly. A
// clerk, for whom score is not private, does so every time. For an analyst (score private, ε 0.25
// a Summary: the sum's noise has scale (850 + 1)/0.25 = 3,404 against a range of 550) each answer
// is close to a coin flip and the bisection ends about anywhere in [300, 850]: within ±25 of the
// score about 9 % of the time (51 values of 551, a little more for the noise's pull toward the
// truth). Bound, no seed: at most 30 % of N trials (N = 400 in memory, 100 per database, each a
// fresh caller): over 5 standard deviations above an expected rate of 12 % at N = 100.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { type GuardedQuery, QpInMemoryRuleStore, QpPolicyContext, QpPolicyEngine, QpSubjectKind, applyPolicy } from "../../lib/index.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { PaAccount, privacyCatalogue, privacyData, privacyDatabase, scoreBounds } from "./domain.js";

type Row = Record<string, unknown>;
type Result = { data: Row[]; totalCount: number | null; pageCount: number | null; pageNumber: number; pageSize: number };
const and = (...conditions: object[]) => ({ sort: 1, connector: "And", conditions, subConditionGroups: [] });
const account7 = { sort: 1, field: "id", operator: "Equal", values: [7], dataType: "Number" };

describeOnTargets("Private aggregates: Having, orders and pages on the noisy values", targets, privacyDatabase, (target, dataSource) => {
  function guard<T extends ObjectLiteral>(context: QpPolicyContext): GuardedQuery<T> {
    if (target === "memory") return applyPolicy(privacyData().accounts as unknown as T[], context);
    return applyPolicy(dataSource().getRepository(PaAccount) as never, context);
  }
  const run = async (context: QpPolicyContext, shape: object) => (await guard<Row>(context).toListAsync(shape as never)) as unknown as Result;
  const trials = target === "memory" ? 400 : 100;
  const victim = privacyData().accounts.find((a) => a.id === 7)!;
  let engine: QpPolicyEngine;
  before(async () => {
    engine = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", caps: { minGroupSize: 1 }, privacyBudget: { limit: 1e6 } }, { ruleStore: new QpInMemoryRuleStore() });
    await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "accounts", field: "score", effect: "Private" as never, private: scoreBounds });
  });
  const caller = (role: string, user: string) => engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, role).withSubject(QpSubjectKind.User, user));

  /** Bisection on `having s >= x` over [lower, upper]: the largest x the Having admits. */
  async function bisect(context: QpPolicyContext): Promise<number> {
    let lo: number = scoreBounds.lower;
    let hi: number = scoreBounds.upper;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      const shape = { conditionGroup: and(account7), groupBy: { fields: ["segment"], aggregateBy: [{ field: "score", alias: "s", aggregator: "Sumation" }] }, having: and({ sort: 1, field: "s", operator: "GreaterThanOrEqual", values: [mid], dataType: "Number" }) };
      const { data } = await run(context, shape);
      if (data.some((r) => r.segment === victim.segment)) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  it("a Having bisection on an exact sum finds the score every time; on the noisy sum no better than chance", async function () {
    this.timeout(600_000);
    for (let i = 0; i < 3; i++) assert.equal(await bisect(await caller("clerk", `clerk-${i}`)), victim.score, "the hole without privacy");
    let successes = 0;
    for (let i = 0; i < trials; i++) if (Math.abs((await bisect(await caller("analyst", `analyst-${i}`))) - victim.score) <= 25) successes++;
    if (process.env.QL_PRIVACY_VERBOSE) console.log(`[${target}] ${successes}/${trials}`);
    assert.ok(successes <= 0.3 * trials, `${successes} of ${trials} bisections ended within ±25 of the score`);
  });

  it("orders, the page, totalCount and pageCount are those of the released noisy groups", async () => {
    const analyst = await caller("analyst", "page-reader");
    const shape = { groupBy: { fields: ["segment"], aggregateBy: [{ field: "score", alias: "s", aggregator: "Sumation" }] }, orders: [{ sort: 1, field: "s", direction: "Descending" }], page: { pageNumber: 1, pageSize: 2 } };
    for (let i = 0; i < 10; i++) {
      const first = await run(analyst, shape);
      assert.deepEqual([first.totalCount, first.pageCount, first.data.length], [3, 2, 2]);
      assert.ok(Number(first.data[0]!.s) >= Number(first.data[1]!.s), "ordered by the released values");
      const second = await run(analyst, { ...shape, page: { pageNumber: 2, pageSize: 2 } });
      assert.deepEqual([second.totalCount, second.pageCount, second.data.length], [3, 2, 1]);
    }
    // A Having no noisy sum can meet releases nothing, and counts nothing.
    const none = await run(analyst, { ...shape, having: and({ sort: 1, field: "s", operator: "GreaterThan", values: [1e12], dataType: "Number" }) });
    assert.deepEqual([none.data, none.totalCount], [[], 0]);
  });
});
