// A private Summary's group release (#45, item 1), on every target.
//
// The attack first: an exact group floor is a membership oracle. With a floor of 12 and branch 1
// holding 12 accounts, a Summary grouped by branchId returns branch 1 if and only if account 1 (of
// branch 1) is among the rows: "is account 1 in the table?" is answered by whether the group
// appears (D: every account; D′: the same query without account 1, a Where on id, which is not
// private). A non-private Summary (a Count alone) still works this way (the spec's behaviour), and
// the test shows the oracle answers right every time. A private Summary (a Sumation of balance)
// does not use the exact floor: a free-form group is released when its count plus discrete Laplace
// noise (scale 1/ε, ε 0.5) reaches τ. δ is set so that τ is 12 too (⌈1 + ln(1/(2δ))/0.5⌉ = 12),
// the strongest case for the attacker. Then P(group appears | D) = P(Z ≥ 0) = 1/(1+q) ≈ 0.6225 and
// P(… | D′) = P(Z ≥ 1) = q/(1+q) ≈ 0.3775 (q = e^−0.5): the difference is at most 0.245 (the
// ε-DP bound e^ε for the ratio). Bounds, no seed: over N trials of each, the observed difference
// of the appearance rates must stay below 0.45 (its standard deviation is at most 0.022 at N =
// 1,000 and 0.05 at N = 200: over 9 and 4 standard deviations above 0.245 respectively; with the
// exact floor it is 1); D's rate within (0.4, 0.8) and D′'s within (0.2, 0.55): the group is
// released, and the threshold acts (each bound over 5 standard deviations from its expectation
// at N = 200, over 8 at N = 1,000).
//
// Declared keys: a Summary grouped by segment (QpAllowedValues) returns all three segments, the
// empty ones too, whatever the Where selects; free-form keys with no row return nothing.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { type GuardedQuery, QpInMemoryRuleStore, QpPolicyContext, QpPolicyEngine, QpSubjectKind, applyPolicy } from "../../lib/index.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { PaAccount, privacyCatalogue, privacyData, privacyDatabase } from "./domain.js";

type Row = Record<string, unknown>;
const and = (...conditions: object[]) => ({ sort: 1, connector: "And", conditions, subConditionGroups: [] });
const withoutAccount1 = { sort: 1, field: "id", operator: "NotEqual", values: [1], dataType: "Number" };

/** δ such that τ = ⌈1 + ln(1/(2δ))/0.5⌉ = 12: ln(1/(2δ)) = 5.25. */
const delta = Math.exp(-5.25) / 2;

describeOnTargets("Private aggregates: group release", targets, privacyDatabase, (target, dataSource) => {
  function guard<T extends ObjectLiteral>(context: QpPolicyContext): GuardedQuery<T> {
    if (target === "memory") return applyPolicy(privacyData().accounts as unknown as T[], context);
    return applyPolicy(dataSource().getRepository(PaAccount) as never, context);
  }
  const run = async (context: QpPolicyContext, shape: object) => (await guard<Row>(context).toListAsync(shape as never)) as unknown as { data: Row[]; totalCount: number | null };
  const trials = target === "memory" ? 1000 : 200;

  it("an exact floor answers membership every time; the noisy release answers it no better than ε allows", async function () {
    this.timeout(600_000);
    const engine = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", caps: { minGroupSize: 12 }, privacyBudget: { limit: 1e6, delta } }, { ruleStore: new QpInMemoryRuleStore() });
    assert.equal(privacyData().accounts.filter((a) => a.branchId === 1).length, 12, "branch 1 is a group of exactly the floor");
    const appears = async (user: string, aggregateBy: object[], conditions: object[]) => {
      const context = await engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.User, user));
      const shape = { ...(conditions.length ? { conditionGroup: and(...conditions) } : {}), groupBy: { fields: ["branchId"], aggregateBy } };
      return (await run(context, shape)).data.some((r) => Number(r.branchId) === 1);
    };
    // The oracle, exact: a Count alone is no private Summary and keeps the exact floor.
    const count = [{ alias: "n", aggregator: "Count" }];
    for (let i = 0; i < 5; i++) {
      assert.equal(await appears(`floor-${i}`, count, []), true, "account 1 in the table: branch 1 appears");
      assert.equal(await appears(`floor-${i}`, count, [withoutAccount1]), false, "account 1 not in it: branch 1 does not");
    }
    // The same attack on a private Summary, each trial a fresh caller (a fresh budget).
    const sum = [{ field: "balance", alias: "total", aggregator: "Sumation" }];
    let inD = 0;
    let inDPrime = 0;
    for (let i = 0; i < trials; i++) {
      if (await appears(`with-${i}`, sum, [])) inD++;
      if (await appears(`without-${i}`, sum, [withoutAccount1])) inDPrime++;
    }
    const difference = (inD - inDPrime) / trials;
    assert.ok(difference < 0.45, `appearance with ${inD}/${trials}, without ${inDPrime}/${trials}: the group tells membership (${difference})`);
    assert.ok(inD / trials > 0.4 && inD / trials < 0.8, `the group is released at about 1/(1+q) ≈ 0.62 (${inD}/${trials})`);
    assert.ok(inDPrime / trials > 0.2 && inDPrime / trials < 0.55, `without account 1, at about q/(1+q) ≈ 0.38: the threshold acts (${inDPrime}/${trials})`);
    if (process.env.QL_PRIVACY_VERBOSE) console.log(`[${target}] appearance with ${inD}/${trials}, without ${inDPrime}/${trials}`);
  });

  it("declared keys are all released, empty ones too; free-form groups with no row are not; totalCount counts what was released", async () => {
    const engine = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", caps: { minGroupSize: 1 }, privacyBudget: { limit: 1e6 } }, { ruleStore: new QpInMemoryRuleStore() });
    const context = await engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.User, "dee"));
    const retailOnly = and({ sort: 1, field: "segment", operator: "Equal", values: ["retail"] });
    const bySegment = await run(context, { conditionGroup: retailOnly, groupBy: { fields: ["segment"], aggregateBy: [{ field: "balance", alias: "total", aggregator: "Sumation" }, { alias: "n", aggregator: "Count" }] } });
    assert.deepEqual(bySegment.data.map((r) => r.segment).sort(), ["business", "private", "retail"]);
    assert.equal(bySegment.totalCount, 3);
    for (const row of bySegment.data) assert.deepEqual(Object.keys(row).sort(), ["n", "segment", "total"]);
    // No account has id 0: every segment is empty, all three are still released.
    const none = and({ sort: 1, field: "id", operator: "Equal", values: [0], dataType: "Number" });
    assert.equal((await run(context, { conditionGroup: none, groupBy: { fields: ["segment"], aggregateBy: [{ field: "balance", alias: "total", aggregator: "Sumation" }] } })).data.length, 3);
    const freeForm = await run(context, { conditionGroup: none, groupBy: { fields: ["branchId"], aggregateBy: [{ field: "balance", alias: "total", aggregator: "Sumation" }] } });
    assert.deepEqual([freeForm.data, freeForm.totalCount], [[], 0]);
  });
});
