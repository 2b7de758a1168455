// The closed channels of a private field (#45, step 3), on every target. Each attack is written
// so that it works without the protection: a clerk, for whom Account.score is not private,
// recovers one account's exact score by a Count bisection through a Where (ten requests), reads
// scores through a Segment's condition set, a Having, a group key, an order, a Minimum/Maximum/
// First/Last, an aggregate across the branch's collection, or a plain select. An analyst, for whom
// a Private rule makes score private, is refused the conditions, keys, orders on the field,
// extremes, navigations and selects with their own codes, before anything runs; so is everyone on
// Account.balance (QpPrivate). A Having or an order on a private aggregate is answered on the
// released noisy groups (free-form groups of one account are not released). A refused request
// charges no budget: a counting ledger sees no charge, and sees the one an allowed guess makes.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { CountingLedger } from "./domain.js";
import {
  type GuardedQuery, type IQpBudgetLedger, PolicyErrorCode, type QpBudgetCharge, QpInMemoryBudgetLedger, QpInMemoryRuleStore, QpPolicyContext,
  QpPolicyEngine, QpSubjectKind, QpTier, applyPolicy,
} from "../../lib/index.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { expectPolicyError } from "../policy/helpers.js";
import { PaAccount, PaBranch, privacyCatalogue, privacyData, privacyDatabase, reserveBounds, scoreBounds } from "./domain.js";

type Row = Record<string, unknown>;
type Shape = Record<string, unknown>;

const cond = (field: string, operator: string, values: unknown[], sort = 1) => ({ sort, field, operator, values, ...(values.every((v) => typeof v === "number") && values.length ? { dataType: "Number" } : {}) });
const and = (...conditions: Shape[]) => ({ sort: 1, connector: "And", conditions, subConditionGroups: [] });
const countWhere = (...conditions: Shape[]) => ({ conditionGroup: and(...conditions), groupBy: { fields: ["segment"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });

const target7 = () => privacyData().accounts.find((a) => a.id === 7)!;

/** Binary search for the largest x in [lo, hi] with `atLeast(x)` true: one row's value, one request per halving. */
async function bisect(atLeast: (x: number) => Promise<boolean>, lo: number, hi: number): Promise<{ value: number; requests: number }> {
  let requests = 0;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    requests++;
    if (await atLeast(mid)) lo = mid;
    else hi = mid - 1;
  }
  return { value: lo, requests };
}


describeOnTargets("Private aggregates: the closed channels", targets, privacyDatabase, (target, dataSource) => {
  function guard<T extends ObjectLiteral>(entity: new () => T, context: QpPolicyContext): GuardedQuery<T> {
    if (target === "memory") {
      const data = privacyData();
      return applyPolicy((entity === (PaAccount as Function) ? data.accounts : data.branches) as unknown as T[], context);
    }
    return applyPolicy(dataSource().getRepository(entity), context);
  }
  const run = async (context: QpPolicyContext, shape: Shape, entity: new () => object = PaAccount) => (await guard(entity as new () => Row, context).toListAsync(shape)) as unknown as { data: Row[] };

  // Group floor 1: the one-row groups a bisection reads are returned (a floor alone does not stop differencing anyway).
  let engine: QpPolicyEngine;
  let analyst: QpPolicyContext;
  let clerk: QpPolicyContext;
  before(async () => {
    engine = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", caps: { minGroupSize: 1 } }, { ruleStore: new QpInMemoryRuleStore() });
    await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "accounts", field: "score", effect: "Private" as never, private: scoreBounds });
    await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "branches", field: "reserve", effect: "Private" as never, private: reserveBounds });
    // Each with a User subject: the privacy budget is kept per user, and an anonymous caller is refused.
    analyst = await engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, "analyst").withSubject(QpSubjectKind.User, "ann"));
    clerk = await engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, "clerk").withSubject(QpSubjectKind.User, "carl"));
  });

  it("Where: a Count bisection recovers one account's exact score for a caller it is not private for, and is refused on its first request for one it is", async () => {
    const probe = (context: QpPolicyContext) => async (x: number) =>
      (await run(context, countWhere(cond("id", "Equal", [7]), cond("score", "GreaterThanOrEqual", [x], 2)))).data.length > 0;
    const found = await bisect(probe(clerk), scoreBounds.lower, scoreBounds.upper);
    assert.equal(found.value, target7().score, "the attack works without the protection");
    assert.ok(found.requests <= 10);
    await expectPolicyError(() => probe(analyst)(575), PolicyErrorCode.PrivateFieldDeniedForWhere, "score is private for this caller");
    // The decorated field, for every caller, whatever the operator (Equal too: a guess is a bisection step).
    for (const context of [analyst, clerk]) {
      for (const operator of ["GreaterThanOrEqual", "Equal", "IsNull"]) {
        await expectPolicyError(() => run(context, countWhere(cond("balance", operator, operator === "IsNull" ? [] : [5000]))), PolicyErrorCode.PrivateFieldDeniedForWhere, "QpPrivate on PaAccount.balance");
      }
    }
    // In a Filter, and through a navigation (from the branch, over its accounts).
    await expectPolicyError(() => run(analyst, { conditionGroup: and(cond("score", "LessThan", [500])), selects: ["id"] }), PolicyErrorCode.PrivateFieldDeniedForWhere);
    assert.ok((await run(clerk, { conditionGroup: and(cond("accounts.score", "GreaterThan", [800])), selects: ["id"] }, PaBranch)).data.length > 0);
    await expectPolicyError(() => run(analyst, { conditionGroup: and(cond("accounts.score", "GreaterThan", [800])), selects: ["id"] }, PaBranch), PolicyErrorCode.PrivateFieldDeniedForWhere);
  });

  it("Segment: a condition set on the private field is refused", async () => {
    const segment = (field: string) => ({
      conditionSets: [
        { sort: 1, intersection: null, conditionGroup: and(cond("segment", "Equal", ["retail"])) },
        { sort: 2, intersection: "Intersect", conditionGroup: and(cond(field, "GreaterThan", [700])) },
      ],
      selects: ["id"],
    });
    const open = await run(clerk, segment("score"));
    assert.deepEqual(open.data.map((r) => r.id).sort((a, b) => Number(a) - Number(b)), privacyData().accounts.filter((a) => a.segment === "retail" && a.score > 700).map((a) => a.id));
    await expectPolicyError(() => run(analyst, segment("score")), PolicyErrorCode.PrivateFieldDeniedForWhere, "a Segment's conditions");
    await expectPolicyError(() => run(clerk, segment("balance")), PolicyErrorCode.PrivateFieldDeniedForWhere);
  });

  it("Having: answered on the released noisy groups, never on the exact aggregate (groups of one account are not released)", async () => {
    const shape = { groupBy: { fields: ["id"], aggregateBy: [{ field: "score", alias: "s", aggregator: "Sumation" }] }, having: and(cond("s", "GreaterThan", [800])) };
    const open = await run(clerk, shape);
    assert.equal(open.data.length, privacyData().accounts.filter((a) => a.score > 800).length, "groups of one account: the Having answers for one value");
    // Free-form keys (id): a group of one row clears τ (here ⌈1 + ln(1/(2·10⁻⁶))/0.25⌉ = 54) with probability below 10⁻⁶: none is released.
    assert.deepEqual((await run(analyst, shape)).data, []);
    // A Count of the private field in a Having: answered too (test/privacy/noisy-having.test.ts has the bisection attack).
    const count = { groupBy: { fields: ["segment"], aggregateBy: [{ field: "balance", alias: "c", aggregator: "Count" }] }, having: and(cond("c", "GreaterThan", [-1000])) };
    assert.equal((await run(clerk, count)).data.length, 3);
  });

  it("Group and Order: keys and rankings of the private field are refused", async () => {
    const byScore = { groupBy: { fields: ["score"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } };
    assert.equal((await run(clerk, byScore)).data.length, new Set(privacyData().accounts.map((a) => a.score)).size, "the keys are the values");
    await expectPolicyError(() => run(analyst, byScore), PolicyErrorCode.PrivateFieldDeniedForGroup);
    await expectPolicyError(() => run(clerk, { groupBy: { fields: ["balance"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } }), PolicyErrorCode.PrivateFieldDeniedForGroup);

    const ranked = { selects: ["id"], orders: [{ sort: 1, field: "score", direction: "Descending" }] };
    const order = (await run(clerk, ranked)).data.map((r) => r.id);
    assert.deepEqual(order, [...privacyData().accounts].sort((a, b) => b.score - a.score || a.id - b.id).map((a) => a.id).slice(0, order.length), "ranked by the hidden value");
    await expectPolicyError(() => run(analyst, ranked), PolicyErrorCode.PrivateFieldDeniedForOrder);
    // Refused, not dropped, under Convenience.
    const bySum = { groupBy: { fields: ["id"], aggregateBy: [{ field: "score", alias: "s", aggregator: "Sumation" }] }, orders: [{ sort: 1, field: "s", direction: "Descending" }] };
    assert.equal((await run(clerk, bySum)).data[0]!.id, [...privacyData().accounts].sort((a, b) => b.score - a.score)[0]!.id);
    // An order on a private aggregate is answered on the released noisy values (groups of one account are not released).
    const ranked2 = await run(analyst, bySum);
    assert.deepEqual(ranked2.data, []);
    assert.ok(JSON.stringify(ranked2).includes('"action":"Noised"'), "the order is traced as on noisy values");
  });

  it("Minimum, Maximum, FirstOrDefault, LastOrDefault of the private field are refused; Count, CountDistinct, Sumation, Average are answered", async () => {
    for (const aggregator of ["Minimum", "Maximum", "FirstOrDefault", "LastOrDefault"]) {
      const shape = { groupBy: { fields: ["id"], aggregateBy: [{ field: "score", alias: "v", aggregator }] } };
      const open = await run(clerk, shape);
      assert.equal(open.data.find((r) => r.id === 7)!.v, target7().score, `${aggregator} of a one-row group is the value`);
      await expectPolicyError(() => run(analyst, shape), PolicyErrorCode.PrivateFieldDeniedForAggregate, `${aggregator} of score is one of its values`);
      await expectPolicyError(() => run(clerk, { groupBy: { fields: ["segment"], aggregateBy: [{ field: "balance", alias: "v", aggregator }] } }), PolicyErrorCode.PrivateFieldDeniedForAggregate);
    }
    const allowed = { groupBy: { fields: ["segment"], aggregateBy: ["Count", "CountDistinct", "Sumation", "Average"].map((aggregator) => ({ field: "score", alias: aggregator.toLowerCase(), aggregator })) } };
    const answered = await run(analyst, allowed);
    assert.equal(answered.data.length, 3);
    const balance = { groupBy: { fields: ["segment"], aggregateBy: [{ field: "balance", alias: "total", aggregator: "Sumation" }, { field: "balance", alias: "mean", aggregator: "Average" }] } };
    assert.equal((await run(clerk, balance)).data.length, 3);
  });

  it("an aggregate of the private field through a navigation is refused: through a reference, one branch's reserve counts once per account", async () => {
    // The attack: Average(branch.reserve) over one branch's accounts is that branch's exact reserve, past any bound on a contribution.
    const shape = (aggregator: string) => ({ groupBy: { fields: ["branchId"], aggregateBy: [{ field: "branch.reserve", alias: "v", aggregator }] } });
    const open = await run(clerk, shape("Average"));
    assert.deepEqual(open.data.map((r) => Number(r.v)).sort((a, b) => a - b), privacyData().branches.map((b) => b.reserve));
    for (const aggregator of ["Sumation", "Average", "Count", "CountDistinct"]) {
      await expectPolicyError(() => run(analyst, shape(aggregator)), PolicyErrorCode.PrivateAggregateAcrossNavigation, "reached through a navigation");
    }
    // Across a collection the shape itself is refused for everyone (one value per row is required);
    // for a caller the field is private for, the policy's own code comes first.
    const across = { groupBy: { fields: ["name"], aggregateBy: [{ field: "accounts.score", alias: "v", aggregator: "Sumation" }] } };
    await assert.rejects(() => run(clerk, across, PaBranch), /AggregationFieldMustBeSimpleType/);
    await expectPolicyError(() => run(analyst, across, PaBranch), PolicyErrorCode.PrivateAggregateAcrossNavigation, "reached through a collection");
    // From its own entity the same aggregate is answered, not refused (branch names are free-form keys: a branch is a group of one, not released).
    const own = await run(analyst, { groupBy: { fields: ["name"], aggregateBy: [{ field: "reserve", alias: "v", aggregator: "Sumation" }] } }, PaBranch);
    assert.deepEqual(own.data, []);
  });

  it("a select of the private field is dropped (Convenience) or refused (Strict), as a denied select", async () => {
    const shape = { selects: ["id", "score"], conditionGroup: and(cond("id", "Equal", [7])) };
    assert.deepEqual((await run(clerk, shape)).data.map((r) => r.score), [target7().score]);
    const dropped = await run(analyst, shape);
    assert.deepEqual(dropped.data.map((r) => ({ ...r })), [{ id: 7 }]);
    const strict = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", tier: QpTier.Strict }, { ruleStore: new QpInMemoryRuleStore() });
    await strict.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "accounts", field: "score", effect: "Private" as never, private: scoreBounds });
    const strictAnalyst = await strict.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, "analyst").withSubject(QpSubjectKind.User, "ann"));
    await expectPolicyError(() => run(strictAnalyst, shape), PolicyErrorCode.FieldDeniedForSelect);
  });

  it("a request without selects (the default projection) and a select of the whole object leave the private field out: its values never reach a row", async () => {
    // The attack: no selects at all. The default projection decided each column's Select without
    // the privacy override, so the analyst's rows carried every account's exact score.
    const all = { conditionGroup: and(cond("id", "Equal", [7])) };
    assert.equal((await run(clerk, all)).data[0]!.score, target7().score, "the clerk, for whom score is not private, reads it");
    const rows = (await run(analyst, all)).data;
    assert.equal(rows.length, 1);
    assert.ok(!("score" in rows[0]!), `the analyst's row: ${JSON.stringify(rows[0])}`);
    // Through a navigation: the branch's accounts, selected as a whole object.
    const branch = target7().branchId;
    const nested = await run(analyst, { conditionGroup: and(cond("id", "Equal", [branch])), selects: ["id", "accounts"] }, PaBranch);
    const accounts = (nested.data[0]!.accounts ?? []) as Row[];
    assert.ok(accounts.length > 0, "the accounts are read");
    assert.ok(accounts.every((a) => !("score" in a)), `the analyst's accounts: ${JSON.stringify(accounts.slice(0, 2))}`);
    const clerkAccounts = ((await run(clerk, { conditionGroup: and(cond("id", "Equal", [branch])), selects: ["id", "accounts"] }, PaBranch)).data[0]!.accounts ?? []) as Row[];
    assert.ok(clerkAccounts.some((a) => typeof a.score === "number"), "the clerk's accounts carry their scores");
  });

  it("a refused request charges no budget: the ledger sees no charge, and sees the charge of the same guess without the private condition", async () => {
    const ledger = new CountingLedger();
    const guarded = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", inferenceProtection: true, guessBudget: { ledger, limit: 100 }, caps: { minGroupSize: 1 } }, { ruleStore: new QpInMemoryRuleStore() });
    const caller = await guarded.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.User, "ben"));
    const guess = cond("holder", "Equal", ["H7"]);
    for (const shape of [
      countWhere(guess, cond("balance", "GreaterThan", [10], 2)),
      { conditionGroup: and(guess), groupBy: { fields: ["segment"], aggregateBy: [{ field: "balance", alias: "m", aggregator: "Maximum" }] } },
      { conditionGroup: and(guess), groupBy: { fields: ["balance"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } },
    ]) {
      await assert.rejects(() => run(caller, shape), (error: unknown) => (error as { errorCode?: number }).errorCode! >= PolicyErrorCode.PrivateFieldDeniedForWhere);
    }
    assert.equal(ledger.charges.length, 0, "no charge for refused requests");
    await run(caller, countWhere(guess));
    assert.equal(ledger.charges.length, 1, "the same guess, allowed, is charged: the ledger is wired");
  });
});
