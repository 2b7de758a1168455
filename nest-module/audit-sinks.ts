// The audit sinks of querylib/nest: in memory (tests, development), the Nest Logger, and an
// append-only relational table that retries a transient failure with back-off (QpTypeOrmAuditSink).
import { Logger } from "@nestjs/common";
import { backOff } from "exponential-backoff";
import { Column, Entity, Index, PrimaryGeneratedColumn, type DataSource, type EntityManager, type EntityMetadata } from "typeorm";
import type { ColumnMetadata } from "typeorm/metadata/ColumnMetadata.js";
import type { IQpAuditSink, QpAuditEvent, QpSubject } from "../lib/index.js";
import { dialectOf } from "../lib/dialect/dialect-of.js";
import type { SqlDialect } from "../lib/dialect/sql-dialect.js";

/** An audit event as querylib/nest writes it: the engine's event plus the request it came from. */
export interface QpRequestAuditEvent extends QpAuditEvent {
  /** A UUID generated on the server for the request; the same for every event of one request, and only of it. */
  readonly requestId: string | null;
  /** The client's `x-request-id` when it is a short token, else null: the client's label, not an identity (any client may send any). */
  readonly clientRequestId?: string | null;
  /** HTTP method and path (no query string) of the request. */
  readonly method: string | null;
  readonly path: string | null;
}

/** Keeps every event in `events` (tests, development). */
export class QpInMemoryAuditSink implements IQpAuditSink {
  readonly events: QpRequestAuditEvent[] = [];
  /** Number of write calls (one per drained request with events). */
  writes = 0;

  async write(events: readonly QpAuditEvent[]): Promise<void> {
    this.writes++;
    this.events.push(...(events as QpRequestAuditEvent[]));
  }

  clear(): void {
    this.events.length = 0;
    this.writes = 0;
  }
}

/** One log line per event (JSON) on a Nest `Logger` (context "QueryLibAudit" by default). */
export class QpLoggerAuditSink implements IQpAuditSink {
  constructor(private readonly log: Pick<Logger, "log"> = new Logger("QueryLibAudit")) {}

  async write(events: readonly QpAuditEvent[]): Promise<void> {
    for (const event of events) this.log.log(JSON.stringify(event));
  }
}

/** A row of the append-only audit table `querylib_audit_event` (one per event). */
@Entity("querylib_audit_event")
export class QpAuditEventRecord {
  @PrimaryGeneratedColumn() id!: number;
  /** ISO-8601 time the query was sanitized. */
  @Index() @Column({ type: "varchar", length: 40 }) at!: string;
  /** Generated on the server per request. */
  @Index() @Column({ type: "varchar", length: 64, nullable: true }) requestId!: string | null;
  /** The client's `x-request-id` (a label the client chose; not unique). */
  @Index() @Column({ type: "varchar", length: 64, nullable: true }) clientRequestId!: string | null;
  @Column({ type: "varchar", length: 16, nullable: true }) method!: string | null;
  @Column({ type: "varchar", length: 400, nullable: true }) path!: string | null;
  /** The entity's public name (else its class name). */
  @Column({ type: "varchar", length: 200 }) entity!: string;
  /** The public path of the field. */
  @Column({ type: "varchar", length: 400 }) field!: string;
  /** Where, Select, Order, Group, Aggregate or Segment. */
  @Column({ type: "varchar", length: 16 }) feature!: string;
  /** What the policy did: Allowed, Masked, Generalized, Dropped, Denied, Injected, … */
  @Column({ type: "varchar", length: 16 }) action!: string;
  @Column({ type: "boolean" }) enforced!: boolean;
  /** The refusal's code when the request was refused (its events then say Refused or Denied), else null. */
  @Column({ type: "varchar", length: 64, nullable: true }) refusal!: string | null;
  /** The caller's user subject, for filtering the trail without parsing `subjects`. */
  @Index() @Column({ type: "varchar", length: 200, nullable: true }) userId!: string | null;
  @Index() @Column({ type: "varchar", length: 200, nullable: true }) tenant!: string | null;
  /** Every subject of the caller, as JSON `[{ kind, value }]`. */
  @Column({ type: "text" }) subjects!: string;
  /** How many uses of the request the row stands for (QpAuditEvent.count; 1 when the event has none). Schema version 2. */
  @Column({ type: "int", default: 1 }) count!: number;
}

const firstSubject = (subjects: readonly QpSubject[], kind: string) => subjects.find((s) => s.kind === kind)?.value ?? null;

/** Node and driver error codes of a lost or refused connection, a deadlock or a busy database: worth a retry. */
const transientCodes = new Set([
  "ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "ECONNABORTED",
  "PROTOCOL_CONNECTION_LOST", "ER_CON_COUNT_ERROR", "ER_LOCK_DEADLOCK", "ER_LOCK_WAIT_TIMEOUT", "SQLITE_BUSY", "SQLITE_LOCKED",
  "40001", "40P01", "53300", "57P01", "57P02", "57P03", // PostgreSQL: serialization, deadlock, too many connections, shutdown, cannot connect now
]);

/**
 * True for a failure that may clear within a moment (the connection, a lock): a PostgreSQL
 * connection exception (SQLSTATE class 08), a code above, or pg's messages for a dropped
 * connection. A full disk, a missing table or a rejected row are not: retrying cannot help soon.
 */
const droppedConnectionMessage = /connection terminated|connection (?:was )?(?:lost|closed|reset)|timeout exceeded when trying to connect|not queryable/i;

export function isTransientAuditFailure(error: unknown, depth = 0): boolean {
  if (error === null || typeof error !== "object" || depth > 3) return false;
  const e = error as { code?: unknown; driverError?: unknown; cause?: unknown; message?: unknown; errors?: unknown };
  if (typeof e.code === "string" && (transientCodes.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code))) return true;
  if (typeof e.message === "string" && droppedConnectionMessage.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isTransientAuditFailure(inner, depth + 1))) return true;
  return isTransientAuditFailure(e.driverError, depth + 1) || isTransientAuditFailure(e.cause, depth + 1);
}

export interface QpTypeOrmAuditSinkOptions {
  /** Rows per INSERT (default 200); a request's batches are written in one transaction. */
  readonly batchSize?: number;
  /** Retries after a transient failure (default 3; 0: none). */
  readonly retries?: number;
  /** The first retry's delay in ms (default 50), doubled for each further one: 50, 100, 200. */
  readonly retryDelay?: number;
}

/**
 * Appends events to `querylib_audit_event` through TypeORM (SQLite, PostgreSQL, MariaDB/MySQL):
 * add `QpTypeOrmAuditSink.entities` to the DataSource (the table: QueryLibMigrations). It only ever inserts (no update, no
 * delete); grant the application's database user INSERT and SELECT only on this table to make
 * the trail append-only for the application as well. A transient failure (isTransientAuditFailure)
 * is retried a bounded number of times with back-off; then, or at once for any other failure,
 * write rejects and the host's auditFailure mode decides. A retry after an acknowledgement that
 * was lost may write a request's events twice, never fewer.
 */
export class QpTypeOrmAuditSink implements IQpAuditSink {
  static readonly entities = [QpAuditEventRecord];

  constructor(private readonly dataSource: DataSource, private readonly options: QpTypeOrmAuditSinkOptions = {}) {
    const { batchSize, retries, retryDelay } = options;
    const integerIn = (value: number, min: number, max: number) => Number.isInteger(value) && value >= min && value <= max;
    if (batchSize !== undefined && !integerIn(batchSize, 1, 100_000)) throw new RangeError("QpTypeOrmAuditSink: batchSize must be an integer from 1 to 100000");
    if (retries !== undefined && !integerIn(retries, 0, 10)) throw new RangeError("QpTypeOrmAuditSink: retries must be an integer from 0 to 10");
    if (retryDelay !== undefined && !integerIn(retryDelay, 0, 10_000)) throw new RangeError("QpTypeOrmAuditSink: retryDelay must be an integer from 0 to 10000 (ms)");
  }

  async write(events: readonly QpAuditEvent[]): Promise<void> {
    const rows = (events as readonly QpRequestAuditEvent[]).map((e) => ({
      at: e.at, requestId: e.requestId ?? null, clientRequestId: e.clientRequestId ?? null, method: e.method ?? null, path: e.path ?? null, entity: e.entity, field: e.field,
      feature: e.feature, action: e.action, enforced: e.enforced, refusal: e.refusal ?? null, userId: firstSubject(e.subjects, "User"), tenant: firstSubject(e.subjects, "Tenant"),
      subjects: JSON.stringify(e.subjects), count: e.count ?? 1,
    }));
    if (rows.length === 0) return;
    const size = this.options.batchSize ?? 200;
    const insert = async () => {
      if (rows.length <= size) return void (await this.insertRows(this.dataSource.manager, rows));
      // All of a request's events or none, so that a retry does not write its first batches twice.
      await this.dataSource.transaction(async (manager) => {
        for (let i = 0; i < rows.length; i += size) await this.insertRows(manager, rows.slice(i, i + size));
      });
    };
    await backOff(insert, {
      numOfAttempts: 1 + (this.options.retries ?? 3), startingDelay: this.options.retryDelay ?? 50, timeMultiple: 2, jitter: "none",
      retry: (error: unknown) => isTransientAuditFailure(error),
    });
  }

  /**
   * One multi-row INSERT of `rows`, written as QueryLib writes its own SQL: names quoted by the
   * DataSource's dialect from the entity's metadata, every value a placeholder, converted by the
   * driver as TypeORM converts it. The text is kept per row count up to 16. Why not
   * `repository.insert`: it builds an InsertQueryBuilder per call and reads the generated ids back
   * (RETURNING on PostgreSQL), which nothing here uses. CPU per write of two events, TypeORM's
   * insert against this one: PostgreSQL 150 against 54 µs, MariaDB 195 against 59 µs, SQLite 425
   * against 322 µs (issue #24: audit on was 0.87× the hand-written endpoint on PostgreSQL W1).
   */
  private async insertRows(manager: EntityManager, rows: readonly Record<string, unknown>[]): Promise<void> {
    const dialect = dialectOf(this.dataSource);
    const { driver } = this.dataSource;
    const target = (this.target ??= insertTarget(this.dataSource.getMetadata(QpAuditEventRecord), dialect));
    let sql = this.statements.get(rows.length);
    if (sql === undefined) {
      let position = 0;
      sql = target.head + rows.map(() => `(${target.columns.map(() => dialect.placeholder(++position)).join(", ")})`).join(", ");
      if (rows.length <= 16) this.statements.set(rows.length, sql);
    }
    const parameters: unknown[] = [];
    for (const row of rows) for (const column of target.columns) parameters.push(driver.preparePersistentValue(row[column.propertyName], column));
    await manager.query(sql, parameters);
  }

  private target: { readonly head: string; readonly columns: readonly ColumnMetadata[] } | undefined;
  private readonly statements = new Map<number, string>();
}

/** `INSERT INTO table (columns) VALUES ` for the entity's stored columns (not the generated id). */
function insertTarget(metadata: EntityMetadata, dialect: SqlDialect) {
  const columns = metadata.columns.filter((c) => !c.isGenerated);
  const table = metadata.tablePath.split(".").map((part) => dialect.quote(part)).join(".");
  return { head: `INSERT INTO ${table} (${columns.map((c) => dialect.quote(c.databaseName)).join(", ")}) VALUES `, columns };
}
