// A private integer column's clamp runs in the column's own type (#45, the cost of a private
// Summary): whole bounds in the type's range are typed as the column, so the database sums
// integers, not decimals; the totals must be the very ones the decimal clamp gave, including sums
// past the column type's range (PostgreSQL's SUM of int4 is bigint, MariaDB's a DECIMAL). A
// decimal column keeps the exact decimal bounds. ε is 10⁶ and the amounts' granularity 10⁶ (every
// clamped amount a whole number of steps) so that the noise (scale about 0.002 steps) is zero:
// the clamp is what is compared.
import "reflect-metadata";
import assert from "node:assert/strict";
import { Column, type DataSource, Entity, PrimaryColumn } from "typeorm";
import { QpEntityCatalogue, QpInMemoryRuleStore, QpPolicyContext, QpPolicyEngine, QpSubjectKind, applyPolicy } from "../../lib/index.js";
import { openIsolatedDatabase } from "../support/databases.js";
import type { Dialect } from "../support/target-list.js";
import { describeOnTargets, targets } from "../support/targets.js";

@Entity("pi_wide")
class PiWide {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 10 }) segment!: string;
  @Column({ type: "int" }) amount!: number;
  @Column({ type: "decimal", precision: 12, scale: 2 }) price!: number;
}

const INT4_MAX = 2_147_483_647;
/** Segment a's amounts sum past the int4 range, clamped or not. */
const rows = [
  [1, "a", 2_000_000_000, 12.34], [2, "a", 2_100_000_000, 150.5], [3, "a", 2_147_000_000, -3.25], [4, "a", 1_900_000_000, 99.99],
  [5, "a", -2_000_000, 100], [6, "b", 5_000_000, 0.01], [7, "b", 2_050_000_000, 250], [8, "b", -3_000_000, 42.42],
].map(([id, segment, amount, price]) => Object.assign(new PiWide(), { id, segment, amount, price }));

const epsilon = 1e6;
const settings = {
  wide: { field: "amount", lower: 0, upper: 2_050_000_000, granularity: 1e6, epsilon },
  narrow: { field: "amount", lower: -1_000_000, upper: 2_000_000_000, granularity: 1e6, epsilon },
  // Outside int4: the bounds stay decimal, the same totals.
  beyond: { field: "amount", lower: 0, upper: 4_000_000_000, granularity: 1e6, epsilon },
  priced: { field: "price", lower: 0, upper: 100, granularity: 0.01, epsilon },
} as const;

function expected(field: "amount" | "price", lower: number, upper: number) {
  return ["a", "b"].map((segment) => {
    const clamped = rows.filter((r) => r.segment === segment).map((r) => Math.min(Math.max(r[field], lower), upper));
    const total = clamped.reduce((s, v) => s + v, 0);
    return { segment, total, mean: total / clamped.length };
  });
}

const opened = new Map<Dialect, Promise<DataSource>>();
function database(dialect: Dialect): Promise<DataSource> {
  let pending = opened.get(dialect);
  if (!pending) {
    opened.set(dialect, (pending = (async () => {
      const dataSource = await openIsolatedDatabase(dialect, "querylib_private_int", [PiWide]);
      await dataSource.getRepository(PiWide).insert(rows.map((r) => ({ ...r })));
      return dataSource;
    })()));
  }
  return pending;
}

describeOnTargets("Private aggregates: an integer column clamps in its own type", targets, database, (target, dataSource) => {
  let engine: QpPolicyEngine;
  before(async () => {
    engine = new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(PiWide, "wide"), lint: "off", caps: { minGroupSize: 1 }, privacyBudget: { limit: 1e9 } }, { ruleStore: new QpInMemoryRuleStore() });
    for (const [role, { field, ...bounds }] of Object.entries(settings)) {
      await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: role, entity: "wide", field, effect: "Private" as never, private: bounds });
    }
  });
  const as = (role: string) => engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, role).withSubject(QpSubjectKind.User, `u-${role}`));
  const summary = (field: string) => ({
    groupBy: { fields: ["segment"], aggregateBy: [{ field, alias: "total", aggregator: "Sumation" }, { field, alias: "mean", aggregator: "Average" }] },
    orders: [{ sort: 1, field: "segment", direction: "Ascending" }],
  });
  const guard = async (role: string) => {
    const context = await as(role);
    return target === "memory" ? applyPolicy(rows as never, context) : applyPolicy(dataSource().getRepository(PiWide) as never, context);
  };

  for (const [role, { field, lower, upper }] of Object.entries(settings)) {
    it(`Sumation and Average of ${field} in [${lower}, ${upper}] are the exact clamped ones (${role})`, async () => {
      const result = (await (await guard(role)).toListAsync(summary(field) as never)) as unknown as { data: Record<string, unknown>[] };
      const want = expected(field, lower, upper);
      assert.deepEqual(result.data.map((r) => r.segment), want.map((w) => w.segment));
      result.data.forEach((row, i) => {
        // Sums are whole granularity steps: a price total compares to the cent.
        assert.ok(Math.abs(Number(row.total) - want[i]!.total) < 1e-6, `${role} total of ${want[i]!.segment}: ${String(row.total)} against ${want[i]!.total}`);
        assert.ok(Math.abs(Number(row.mean) - want[i]!.mean) <= Math.abs(want[i]!.mean) * 1e-12 + 1e-6, `${role} mean of ${want[i]!.segment}: ${String(row.mean)} against ${want[i]!.mean}`);
      });
      if (field === "amount") assert.ok(want[0]!.total > INT4_MAX, "the test sums past the int4 range");
    });
  }

  if (target !== "memory") {
    it("whole bounds on an integer column are not read as decimals; a decimal column's are not read as integers", async () => {
      const sql = async (role: string) => (await (await guard(role)).toStatementsAsync(summary(settings[role as keyof typeof settings].field) as never)).data.sql;
      // dialect.decimal()'s casts (SQLite's own numeric parameter, CAST(? AS NUMERIC), is how it binds every number).
      const decimalCast = /AS numeric\)|AS DECIMAL\(/;
      for (const role of ["wide", "narrow"]) {
        const text = await sql(role);
        assert.match(text, /CASE WHEN/);
        assert.doesNotMatch(text, decimalCast, `${role}: ${text}`);
        assert.doesNotMatch(text, /2000000000|2050000000/, "bounds are parameters");
      }
      const priced = await sql("priced");
      assert.match(priced, /CASE WHEN/);
      assert.doesNotMatch(priced, /AS (small|big)?int(eger)?\b/i, priced);
    });
  }
});
