// The budget ledger in the rule store's database (SQLite, PostgreSQL, MariaDB/MySQL) through
// TypeORM: table `querylib_budget` (created by QueryLibMigrations' second step), one row per key
// and window, its primary key the SHA-256 of both (ledger.ts, ledgerId). A charge is one
// conditional UPDATE in the common case:
//   UPDATE querylib_budget SET spent = spent + :cost WHERE id = :id AND spent + :cost <= :limit
// which every engine evaluates under the row's write lock, so concurrent charges from any number
// of processes never add up past the limit. Only when it changes nothing is the row read: there
// (refused) or absent (the key's first charge in the window), in which case it is inserted with
// nothing spent by an insert that leaves an existing row alone (ON CONFLICT DO NOTHING, ON
// DUPLICATE KEY UPDATE id = id), so two first charges racing both find one row, and the UPDATE
// runs again. Every statement runs on the primary (a master runner), never on a read replica.
import { Column, Entity, PrimaryColumn, type DataSource, type QueryRunner } from "typeorm";
import { dialectOf } from "../dialect/dialect-of.js";
import { type AsyncLock, connectionLock } from "../rules/async-lock.js";
import {
  type IQpBudgetLedger, type IQpReleaseStore, type QpBudgetCharge, type QpBudgetLedgerOptions, type QpBudgetWindow, type QpChargeResult, checkCharge, ledgerId, maxReleaseLength,
  releaseId, resultOf, unavailable, windowOf, withTimeout,
} from "./ledger.js";

@Entity("querylib_budget")
export class QpBudgetRecord {
  /** SHA-256 (hex) of the key and the window's start. */
  @PrimaryColumn({ type: "varchar", length: 64 }) id!: string;
  @Column({ type: "varchar", length: 16 }) scopeKind!: string;
  @Column({ type: "varchar", length: 400 }) scopeId!: string;
  @Column({ type: "varchar", length: 200 }) entity!: string;
  @Column({ type: "varchar", length: 400, nullable: true }) field!: string | null;
  @Column({ type: "varchar", length: 16 }) kind!: string;
  /** ISO 8601, UTC. */
  @Column({ type: "varchar", length: 40 }) windowStart!: string;
  /** ISO 8601, UTC; null for the window Never. Rows whose window ended may be deleted (purgeAsync). */
  @Column({ type: "varchar", length: 40, nullable: true }) resetsAt!: string | null;
  /** Micro-units (1 guess, 1 ε = 1,000,000). */
  @Column({ type: "bigint" }) spent!: string;
}

/**
 * A private Summary's released answer (#45, sticky answers), kept beside the ledger: table
 * `querylib_release` (QueryLibMigrations' fourth step), one row per answer key and window, its
 * primary key the SHA-256 of both (ledger.ts, releaseId); the first answer stored stays.
 */
@Entity("querylib_release")
export class QpReleaseRecord {
  @PrimaryColumn({ type: "varchar", length: 64 }) id!: string;
  /** ISO 8601, UTC. */
  @Column({ type: "varchar", length: 40 }) windowStart!: string;
  /** ISO 8601, UTC; null for the window Never. Rows whose window ended may be deleted (purgeAsync). */
  @Column({ type: "varchar", length: 40, nullable: true }) resetsAt!: string | null;
  /** The answer as released (JSON), at most 60,000 characters. */
  @Column({ type: "text" }) answer!: string;
}

export interface QpTypeOrmBudgetLedgerOptions extends QpBudgetLedgerOptions {
  /** A charge that has not answered after this many milliseconds is refused (QpLedgerUnavailable); default 5000. */
  timeoutMs?: number;
}

const columns = ["id", "scopeKind", "scopeId", "entity", "field", "kind", "windowStart", "resetsAt", "spent"];
const releaseColumns = ["id", "windowStart", "resetsAt", "answer"];

/**
 * The ledger's statements in the DataSource's SQL (its family's quoting and placeholders). A
 * family with `INSERT … ON CONFLICT … RETURNING` (upsertReturning: SQLite, PostgreSQL) also has
 * `UPDATE … RETURNING` and `ON CONFLICT DO NOTHING`; the others (MariaDB/MySQL) read the row after
 * the update and insert with `ON DUPLICATE KEY UPDATE id = id`.
 */
function statements(dataSource: DataSource) {
  const dialect = dialectOf(dataSource);
  const q = (name: string) => dataSource.driver.escape(name);
  const p = (i: number) => dialect.placeholder(i);
  const table = q("querylib_budget");
  const releases = q("querylib_release");
  const insertValues = `INSERT INTO ${table} (${columns.map(q).join(", ")}) VALUES (${columns.map((_, i) => p(i + 1)).join(", ")})`;
  return {
    returning: dialect.upsertReturning,
    // params: cost, id, cost, limit
    update: `UPDATE ${table} SET ${q("spent")} = ${q("spent")} + ${p(1)} WHERE ${q("id")} = ${p(2)} AND ${q("spent")} + ${p(3)} <= ${p(4)}`
      + (dialect.upsertReturning ? ` RETURNING ${q("spent")}` : ""),
    select: `SELECT ${q("spent")} AS spent FROM ${table} WHERE ${q("id")} = ${p(1)}`,
    insert: dialect.upsertReturning ? `${insertValues} ON CONFLICT (${q("id")}) DO NOTHING` : `${insertValues} ON DUPLICATE KEY UPDATE ${q("id")} = ${q("id")}`,
    purge: `DELETE FROM ${table} WHERE ${q("resetsAt")} IS NOT NULL AND ${q("resetsAt")} <= ${p(1)}`,
    releaseSelect: `SELECT ${q("answer")} AS answer FROM ${releases} WHERE ${q("id")} = ${p(1)}`,
    releaseInsert: `INSERT INTO ${releases} (${releaseColumns.map(q).join(", ")}) VALUES (${releaseColumns.map((_, i) => p(i + 1)).join(", ")})`
      + (dialect.upsertReturning ? ` ON CONFLICT (${q("id")}) DO NOTHING` : ` ON DUPLICATE KEY UPDATE ${q("id")} = ${q("id")}`),
    releasePurge: `DELETE FROM ${releases} WHERE ${q("resetsAt")} IS NOT NULL AND ${q("resetsAt")} <= ${p(1)}`,
  };
}

/** Serialization failures and deadlocks a single-statement retry resolves. */
const retryable = (error: unknown) => {
  const e = error as { code?: unknown; errno?: unknown; driverError?: { code?: unknown; errno?: unknown } };
  const code = e?.driverError?.code ?? e?.code;
  const errno = e?.driverError?.errno ?? e?.errno;
  return code === "40P01" || code === "40001" || code === "ER_LOCK_DEADLOCK" || errno === 1213 || code === "SQLITE_BUSY";
};

export class QpTypeOrmBudgetLedger implements IQpBudgetLedger, IQpReleaseStore {
  static readonly entities = [QpBudgetRecord, QpReleaseRecord];
  private readonly sql: ReturnType<typeof statements>;
  private readonly clock: () => number;
  private readonly timeoutMs: number;
  /** SQLite's one connection: the rule store's transactions run through this lock, so a charge never lands inside one (and rolls back with it). */
  private readonly lock: AsyncLock | null;

  constructor(private readonly dataSource: DataSource, options: QpTypeOrmBudgetLedgerOptions = {}) {
    this.lock = connectionLock(dataSource);
    this.sql = statements(dataSource);
    this.clock = options.clock ?? Date.now;
    this.timeoutMs = options.timeoutMs ?? 5000;
  }

  async charge(charge: QpBudgetCharge): Promise<QpChargeResult> {
    const { cost, limit } = checkCharge(charge);
    const period = windowOf(charge.window, this.clock());
    const id = ledgerId(charge, period.start);
    try {
      return await withTimeout(this.onPrimary(async (runner) => {
        for (let attempt = 0; ; attempt++) {
          try {
            const spent = await this.tryCharge(runner, id, cost, limit);
            if (spent !== null) return resultOf(true, spent, limit, period);
            const current = await this.spentOf(runner, id);
            if (current !== null) return resultOf(false, current, limit, period);
            // The key's first charge in this window: a row with nothing spent, then the same update.
            await runner.query(this.sql.insert, [id, charge.scopeKind, charge.scopeId, charge.entity, charge.field, charge.kind,
              period.start.toISOString(), period.end?.toISOString() ?? null, 0]);
            const after = await this.tryCharge(runner, id, cost, limit);
            if (after !== null) return resultOf(true, after, limit, period);
            return resultOf(false, (await this.spentOf(runner, id)) ?? 0, limit, period);
          } catch (error) {
            if (attempt >= 3 || !retryable(error)) throw error;
          }
        }
      }), this.timeoutMs, "the budget ledger's database");
    } catch (error) {
      throw unavailable(error, "the budget ledger's database");
    }
  }

  /** The spent amount after the conditional update, or null when it changed nothing (no row, or over the limit). */
  private async tryCharge(runner: QueryRunner, id: string, cost: number, limit: number): Promise<number | null> {
    const params = [cost, id, cost, limit];
    if (!this.sql.returning) {
      const result = await runner.query(this.sql.update, params, true);
      if (!result.affected) return null;
      // The row is charged; what it holds now (another charge may have followed: never less than this one's share).
      return (await this.spentOf(runner, id)) ?? 0;
    }
    const rows = await runner.query(this.sql.update, params) as unknown;
    // PostgreSQL answers [rows, count] for an UPDATE … RETURNING; SQLite the rows.
    const list = (Array.isArray(rows) && Array.isArray(rows[0]) ? rows[0] : rows) as { spent: unknown }[];
    return list.length > 0 ? Number(list[0]!.spent) : null;
  }

  private async spentOf(runner: QueryRunner, id: string): Promise<number | null> {
    const rows = await runner.query(this.sql.select, [id]) as { spent: unknown }[];
    return rows.length > 0 ? Number(rows[0]!.spent) : null;
  }

  /** Deletes the rows (charges and stored answers) of windows that ended at or before `now` (default the ledger's clock); returns how many. */
  async purgeAsync(now: number = this.clock()): Promise<number> {
    return this.onPrimary(async (runner) => {
      const at = new Date(now).toISOString();
      const charges = (await runner.query(this.sql.purge, [at], true)).affected ?? 0;
      return charges + ((await runner.query(this.sql.releasePurge, [at], true)).affected ?? 0);
    });
  }

  async getRelease(key: string, window: QpBudgetWindow): Promise<string | null> {
    const period = windowOf(window, this.clock());
    try {
      return await withTimeout(this.onPrimary((runner) => this.answerOf(runner, releaseId(key, period.start))), this.timeoutMs, "the budget ledger's database");
    } catch (error) {
      throw unavailable(error, "the budget ledger's database");
    }
  }

  /** Inserts unless a row is there (a racing replica's first answer stays), then reads what is stored. */
  async putRelease(key: string, window: QpBudgetWindow, answer: string): Promise<string> {
    if (answer.length > maxReleaseLength) return answer;
    const period = windowOf(window, this.clock());
    const id = releaseId(key, period.start);
    try {
      return await withTimeout(this.onPrimary(async (runner) => {
        await runner.query(this.sql.releaseInsert, [id, period.start.toISOString(), period.end?.toISOString() ?? null, answer]);
        return (await this.answerOf(runner, id)) ?? answer;
      }), this.timeoutMs, "the budget ledger's database");
    } catch (error) {
      throw unavailable(error, "the budget ledger's database");
    }
  }

  private async answerOf(runner: QueryRunner, id: string): Promise<string | null> {
    const rows = await runner.query(this.sql.releaseSelect, [id]) as { answer: unknown }[];
    return rows.length > 0 ? String(rows[0]!.answer) : null;
  }

  private onPrimary<T>(work: (runner: QueryRunner) => Promise<T>): Promise<T> {
    const run = async () => {
      const runner = this.dataSource.createQueryRunner("master");
      try {
        return await work(runner);
      } finally {
        await runner.release();
      }
    };
    return this.lock ? this.lock.run(run) : run();
  }
}
