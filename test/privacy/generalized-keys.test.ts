// Generalization buckets as declared keys of a private Summary (#45), on every target. A group key
// shown through a QpGeneralize Bucket with public bounds (amount: steps of 1,000 from 0 to 9,999)
// has ten public keys: a private Summary grouped by it returns all ten buckets, the empty ones too
// (no loan is above 8,000, and a Where that selects nothing leaves all ten), merged from the
// stored values' groups (Count, Sumation and Average per bucket: with ε 10⁶ the noise is zero and
// the merge is compared with an oracle). A stored value outside the bounds is in no released
// bucket. The membership attack of group-release.test.ts finds nothing through it: with and
// without the target loan the same buckets appear, every time. A Bucket without bounds (band) stays
// free-form (thresholded: nothing is released for no row); a CountDistinct, which does not merge
// by bucket, keeps the key free-form; more than 10,000 buckets are CapExceeded at groupBy.
// Date generalizations with ISO-date bounds likewise (opened: DatePart Month over 2024, twelve
// months, the loans in January to August and one in 2025 outside; openedYear: Year 2020 to 2024;
// openedQuarter: Truncate to Quarter over 2024; openedFree: Month without bounds, free-form;
// openedDay: Day from 1990 to 2024, more than 10,000 days).
import "reflect-metadata";
import assert from "node:assert/strict";
import { Column, type DataSource, Entity, PrimaryColumn } from "typeorm";
import { DatePart, GeneralizeMode, QpEntityCatalogue, QpGeneralize, QpInMemoryRuleStore, QpPolicyContext, QpPolicyEngine, QpSubjectKind, applyPolicy } from "../../lib/index.js";
import { openIsolatedDatabase } from "../support/databases.js";
import type { Dialect } from "../support/target-list.js";
import { describeOnTargets, targets } from "../support/targets.js";

@Entity("pg_loan")
class PgLoan {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 1000, lower: 0, upper: 9999, allowAggregate: true }) @Column({ type: "int" }) amount!: number;
  @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 1000, allowAggregate: true }) @Column({ type: "int" }) band!: number;
  @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 1, lower: 0, upper: 20_000, allowAggregate: true }) @Column({ type: "int" }) fine!: number;
  @Column({ type: "int" }) score!: number;
  @QpGeneralize({ mode: GeneralizeMode.DatePart, part: DatePart.Month, lower: "2024-01-01", upper: "2024-12-31", allowAggregate: true }) @Column({ type: "date" }) opened!: string;
  @QpGeneralize({ mode: GeneralizeMode.DatePart, part: DatePart.Year, lower: "2020-06-30", upper: "2024-01-01", allowAggregate: true }) @Column({ type: "date" }) openedYear!: string;
  @QpGeneralize({ mode: GeneralizeMode.Truncate, part: DatePart.Quarter, lower: "2024-01-01", upper: "2024-12-31", allowAggregate: true }) @Column({ type: "date" }) openedQuarter!: string;
  @QpGeneralize({ mode: GeneralizeMode.DatePart, part: DatePart.Month, allowAggregate: true }) @Column({ type: "date" }) openedFree!: string;
  @QpGeneralize({ mode: GeneralizeMode.DatePart, part: DatePart.Day, lower: "1990-01-01", upper: "2024-12-31", allowAggregate: true }) @Column({ type: "date" }) openedDay!: string;
}

/** 30 loans below 8,000, opened from January to August 2024 (the last day of a month among them), and one above the bounds (12,000, opened in 2025). */
const pad = (n: number) => String(n).padStart(2, "0");
const openedOf = (i: number) => `2024-${pad((i * 5) % 8 + 1)}-${pad(i % 3 === 0 ? 1 : i % 3 === 1 ? 28 : 15)}`;
const loans = [...Array.from({ length: 30 }, (_, i) => ({ id: i + 1, amount: (i * 337 + 50) % 8000, score: (i * 13) % 101, opened: openedOf(i) })), { id: 31, amount: 12_000, score: 77, opened: "2025-06-15" }]
  .map((l) => Object.assign(new PgLoan(), { ...l, band: l.amount, fine: l.amount, openedYear: l.opened, openedQuarter: l.opened, openedFree: l.opened, openedDay: l.opened }));
const labels = Array.from({ length: 10 }, (_, i) => `${i * 1000}-${(i + 1) * 1000}`);
const months = Array.from({ length: 12 }, (_, i) => `2024-${pad(i + 1)}`);

const opened = new Map<Dialect, Promise<DataSource>>();
function database(dialect: Dialect): Promise<DataSource> {
  let pending = opened.get(dialect);
  if (!pending) {
    opened.set(dialect, (pending = (async () => {
      const dataSource = await openIsolatedDatabase(dialect, "querylib_private_buckets", [PgLoan]);
      await dataSource.getRepository(PgLoan).insert(loans.map((l) => ({ ...l })));
      return dataSource;
    })()));
  }
  return pending;
}

type Result = { data: Record<string, unknown>[]; totalCount: number | null; privacy: { threshold: unknown } };
const and = (...conditions: object[]) => ({ sort: 1, connector: "And", conditions, subConditionGroups: [] });

describeOnTargets("Private aggregates: generalization buckets are declared keys", targets, database, (target, dataSource) => {
  let engine: QpPolicyEngine;
  before(async () => {
    engine = new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(PgLoan, "loans"), lint: "off", caps: { minGroupSize: 5 }, privacyBudget: { limit: 1e9 } }, { ruleStore: new QpInMemoryRuleStore() });
    for (const [role, epsilon] of [["analyst", 0.5], ["precise", 1e6]] as const) {
      await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: role, entity: "loans", field: "score", effect: "Private" as never, private: { lower: 0, upper: 100, granularity: 1, epsilon } });
    }
  });
  let users = 0;
  const run = async (role: string, shape: object) => {
    const context = await engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, role).withSubject(QpSubjectKind.User, `${role}-${users++}`));
    const guarded = target === "memory" ? applyPolicy(loans as never, context) : applyPolicy(dataSource().getRepository(PgLoan) as never, context);
    return (await guarded.toListAsync(shape as never)) as unknown as Result;
  };
  const byKey = (key: string, conditions: object[] = [], aggregateBy: object[] = [{ field: "score", alias: "total", aggregator: "Sumation" }]) =>
    ({ ...(conditions.length ? { conditionGroup: and(...conditions) } : {}), groupBy: { fields: [key], aggregateBy } });
  const none = { sort: 1, field: "id", operator: "Equal", values: [0], dataType: "Number" };

  it("every bucket inside the bounds is released, the empty ones too, merged exactly from the stored values' groups; a value outside the bounds is in none", async () => {
    const result = await run("precise", { ...byKey("amount", [], [{ alias: "n", aggregator: "Count" }, { field: "score", alias: "total", aggregator: "Sumation" }, { field: "score", alias: "mean", aggregator: "Average" }]), orders: [{ sort: 1, field: "amount", direction: "Ascending" }] });
    assert.deepEqual(result.data.map((r) => r.amount), labels);
    assert.equal(result.totalCount, 10);
    assert.equal(result.privacy.threshold, null, "declared: no threshold");
    for (const [i, row] of result.data.entries()) {
      const inside = loans.filter((l) => l.amount >= i * 1000 && l.amount < (i + 1) * 1000);
      const total = inside.reduce((s, l) => s + l.score, 0);
      assert.equal(row.n, inside.length, `${labels[i]}: count`);
      assert.equal(row.total, inside.length ? total : 0, `${labels[i]}: sum`);
      if (inside.length) assert.ok(Math.abs(Number(row.mean) - total / inside.length) < 1e-6, `${labels[i]}: mean ${String(row.mean)} against ${total / inside.length}`);
    }
    assert.ok(result.data.some((r) => r.n === 0) && result.data.some((r) => Number(r.n) > 1), "empty buckets and merged ones");
  });

  it("a Where that selects nothing still releases all ten; an unbounded Bucket releases nothing for no row", async () => {
    assert.deepEqual((await run("analyst", byKey("amount", [none]))).data.map((r) => r.amount).sort(), [...labels].sort());
    const free = await run("analyst", byKey("band", [none]));
    assert.deepEqual([free.data, free.totalCount], [[], 0]);
    assert.notEqual(free.privacy.threshold, null, "free-form: thresholded");
  });

  it("the membership attack finds nothing through it: with and without the target loan, the same buckets, every time", async () => {
    const withoutTarget = { sort: 1, field: "id", operator: "NotEqual", values: [1], dataType: "Number" };
    const target1 = loans[0]!.amount;
    const bucketOfTarget = labels[Math.floor(target1 / 1000)]!;
    for (let i = 0; i < 20; i++) {
      const withIt = (await run("analyst", byKey("amount"))).data.map((r) => r.amount);
      const without = (await run("analyst", byKey("amount", [withoutTarget]))).data.map((r) => r.amount);
      assert.deepEqual([withIt.includes(bucketOfTarget), without.includes(bucketOfTarget)], [true, true]);
      assert.deepEqual([...withIt].sort(), [...without].sort());
    }
  });

  it("a CountDistinct keeps the key free-form; more than 10,000 buckets are CapExceeded at groupBy", async () => {
    const distinct = await run("analyst", byKey("amount", [], [{ field: "score", alias: "d", aggregator: "CountDistinct" }]));
    assert.notEqual(distinct.privacy.threshold, null);
    await assert.rejects(run("analyst", byKey("fine")), (error: unknown) => {
      const e = error as { errorCode?: number; message?: string; path?: string; field?: string };
      return /at most 10000 groups/.test(e.message ?? "") && /groupBy/.test(JSON.stringify(e) + (e.message ?? ""));
    });
  });

  it("a bounded date generalization releases every month, quarter or year between its bounds, the empty ones too, merged exactly; a date outside the bounds is in none", async () => {
    const aggregates = [{ alias: "n", aggregator: "Count" }, { field: "score", alias: "total", aggregator: "Sumation" }, { field: "score", alias: "mean", aggregator: "Average" }];
    const result = await run("precise", { ...byKey("opened", [], aggregates), orders: [{ sort: 1, field: "opened", direction: "Ascending" }] });
    assert.deepEqual(result.data.map((r) => r.opened), months);
    assert.equal(result.totalCount, 12);
    assert.equal(result.privacy.threshold, null, "declared: no threshold");
    for (const [i, row] of result.data.entries()) {
      const inside = loans.filter((l) => l.opened.startsWith(months[i]!));
      const total = inside.reduce((s, l) => s + l.score, 0);
      assert.equal(row.n, inside.length, `${months[i]}: count`);
      assert.equal(row.total, inside.length ? total : 0, `${months[i]}: sum`);
      if (inside.length) assert.ok(Math.abs(Number(row.mean) - total / inside.length) < 1e-6, `${months[i]}: mean ${String(row.mean)} against ${total / inside.length}`);
    }
    assert.equal(result.data.reduce((s, r) => s + Number(r.n), 0), 30, "the 2025 loan is in no month");
    assert.ok(result.data.some((r) => r.n === 0) && result.data.some((r) => Number(r.n) > 1), "empty months and merged ones");
    const years = await run("precise", { ...byKey("openedYear", [], aggregates), orders: [{ sort: 1, field: "openedYear", direction: "Ascending" }] });
    assert.deepEqual(years.data.map((r) => [r.openedYear, r.n]), [["2020", 0], ["2021", 0], ["2022", 0], ["2023", 0], ["2024", 30]]);
    const quarters = await run("precise", { ...byKey("openedQuarter", [], aggregates), orders: [{ sort: 1, field: "openedQuarter", direction: "Ascending" }] });
    const inQuarter = (q: number) => loans.filter((l) => l.opened.startsWith("2024-") && Math.floor((Number(l.opened.slice(5, 7)) - 1) / 3) === q);
    assert.deepEqual(quarters.data.map((r) => [r.openedQuarter, r.n, r.total]),
      ["2024-01-01", "2024-04-01", "2024-07-01", "2024-10-01"].map((d, q) => [d, inQuarter(q).length, inQuarter(q).length ? inQuarter(q).reduce((s, l) => s + l.score, 0) : 0]));
  });

  it("a date key: a Where that selects nothing still releases all twelve months; without bounds it is free-form (nothing for no row)", async () => {
    const empty = await run("analyst", byKey("opened", [none]));
    assert.deepEqual(empty.data.map((r) => r.opened).sort(), months);
    assert.equal(empty.privacy.threshold, null);
    const free = await run("analyst", byKey("openedFree", [none]));
    assert.deepEqual([free.data, free.totalCount], [[], 0]);
    assert.notEqual(free.privacy.threshold, null, "free-form: thresholded");
  });

  it("a date key: the membership attack finds nothing, the same months with and without the target loan, every time", async () => {
    // The target is alone in its month among the loans not selected away: without it the month is empty.
    const target1 = loans[0]!;
    const others = loans.filter((l) => l.id !== target1.id && l.opened.slice(0, 7) === target1.opened.slice(0, 7)).map((l) => l.id);
    const withoutOthers = others.map((id, i) => ({ sort: i + 2, field: "id", operator: "NotEqual", values: [id], dataType: "Number" }));
    const withoutTarget = { sort: 1, field: "id", operator: "NotEqual", values: [target1.id], dataType: "Number" };
    const month = target1.opened.slice(0, 7);
    for (let i = 0; i < 20; i++) {
      const withIt = (await run("analyst", byKey("opened", withoutOthers))).data.map((r) => r.opened);
      const without = (await run("analyst", byKey("opened", [...withoutOthers, withoutTarget]))).data.map((r) => r.opened);
      assert.deepEqual([withIt.includes(month), without.includes(month)], [true, true]);
      assert.deepEqual([...withIt].sort(), [...without].sort());
    }
  });

  it("a date key of more than 10,000 buckets (days from 1990 to 2024) is CapExceeded at groupBy", async () => {
    await assert.rejects(run("analyst", byKey("openedDay")), (error: unknown) => {
      const e = error as { message?: string };
      return /at most 10000 groups/.test(e.message ?? "") && /12784/.test(e.message ?? "") && /groupBy/.test(JSON.stringify(e) + (e.message ?? ""));
    });
  });
});
