// A private field's Sumation and Average sum clamped contributions (#45, step 4, first wired
// part): each row's value is clamped to the field's public bounds in SQL (a CASE with the bounds
// as parameters) and in memory alike, so every target returns the same clamped totals; bounds
// that are not whole numbers work on an integer column (PostgreSQL reads them as decimals). The
// rules here take ε = 10⁶, so that the noise (scale about 10⁻³ steps) is zero: the totals are
// exact and the clamp is what is compared.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { type GuardedQuery, QpInMemoryRuleStore, QpPolicyContext, QpPolicyEngine, QpSubjectKind, applyPolicy } from "../../lib/index.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { PaAccount, privacyCatalogue, privacyData, privacyDatabase } from "./domain.js";

type Row = Record<string, unknown>;

const settings = {
  narrow: { lower: 400, upper: 700, granularity: 1, epsilon: 1e6 },
  fractional: { lower: 400.5, upper: 699.5, granularity: 0.5, epsilon: 1e6 },
} as const;

/** The oracle: per segment, the sum and mean of the scores clamped to [lower, upper]; the unclamped sum. */
function expected(bounds: { lower: number; upper: number }) {
  const bySegment = new Map<string, number[]>();
  for (const a of privacyData().accounts) bySegment.set(a.segment, [...(bySegment.get(a.segment) ?? []), a.score]);
  return [...bySegment].sort(([a], [b]) => (a < b ? -1 : 1)).map(([segment, scores]) => {
    const clamped = scores.map((s) => Math.min(Math.max(s, bounds.lower), bounds.upper));
    const total = clamped.reduce((s, v) => s + v, 0);
    return { segment, total, mean: total / clamped.length, raw: scores.reduce((s, v) => s + v, 0) };
  });
}

describeOnTargets("Private aggregates: contributions clamped to the bounds", targets, privacyDatabase, (target, dataSource) => {
  function guard<T extends ObjectLiteral>(context: QpPolicyContext): GuardedQuery<T> {
    if (target === "memory") return applyPolicy(privacyData().accounts as unknown as T[], context);
    return applyPolicy(dataSource().getRepository(PaAccount) as never, context);
  }
  const summary = { groupBy: { fields: ["segment"], aggregateBy: [{ field: "score", alias: "total", aggregator: "Sumation" }, { field: "score", alias: "mean", aggregator: "Average" }, { field: "score", alias: "n", aggregator: "Count" }] }, orders: [{ sort: 1, field: "segment", direction: "Ascending" }] };

  let engine: QpPolicyEngine;
  const as = (role: string) => engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, role).withSubject(QpSubjectKind.User, `u-${role}`));
  before(async () => {
    engine = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", caps: { minGroupSize: 1 }, privacyBudget: { limit: 1e9 } }, { ruleStore: new QpInMemoryRuleStore() });
    for (const [role, bounds] of Object.entries(settings)) {
      await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: role, entity: "accounts", field: "score", effect: "Private" as never, private: bounds });
    }
  });

  for (const [role, bounds] of Object.entries(settings)) {
    it(`Sumation and Average of score sum clamped contributions (${role}: [${bounds.lower}, ${bounds.upper}])`, async () => {
      const result = (await guard<Row>(await as(role)).toListAsync(summary)) as unknown as { data: Row[] };
      const want = expected(bounds);
      assert.deepEqual(result.data.map((r) => r.segment), want.map((w) => w.segment));
      result.data.forEach((row, i) => {
        assert.equal(Number(row.total), want[i]!.total, `total of ${want[i]!.segment}`);
        assert.equal(row.n, privacyData().accounts.filter((a) => a.segment === want[i]!.segment).length);
        assert.ok(Math.abs(Number(row.mean) - want[i]!.mean) < 1e-9, `mean of ${want[i]!.segment}: ${row.mean} against ${want[i]!.mean}`);
        // The clamp changed something: the test would fail without it.
        assert.notEqual(want[i]!.total, want[i]!.raw);
      });
    });
  }

  it("a caller the field is not private for gets the unclamped totals", async () => {
    const result = (await guard<Row>(await as("clerk")).toListAsync(summary)) as unknown as { data: Row[] };
    assert.deepEqual(result.data.map((r) => Number(r.total)), expected(settings.narrow).map((w) => w.raw));
  });

  if (target !== "memory") {
    it("the bounds are bound parameters, not SQL text", async () => {
      const statements = await guard<Row>(await as("fractional")).toStatementsAsync(summary as never);
      const sql = JSON.stringify(statements);
      assert.match(sql, /CASE WHEN/);
      assert.doesNotMatch(sql.replace(/"parameters":\[[^\]]*\]/g, ""), /400\.5|699\.5/);
      assert.ok(sql.includes("400.5") && sql.includes("699.5"), "the bounds travel as parameters");
    });
  }
});
