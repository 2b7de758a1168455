// Executing finished statements on the source's connection (and its transaction, if any), reads
// on a replica where TypeORM reads from one.
import type { DataSource, ObjectLiteral, QueryRunner, SelectQueryBuilder } from "typeorm";
import type { SqlDialect } from "../dialect/sql-dialect.js";
import { type Statement, toPositional } from "../compile/to-positional.js";
import { statementRun } from "../telemetry/spans.js";

export interface Connection {
  readonly dataSource: DataSource;
  readonly queryRunner: QueryRunner | undefined;
  readonly dialect: SqlDialect;
}

export function statementOf(qb: SelectQueryBuilder<ObjectLiteral>, dialect: SqlDialect, suffix = "", extra: Record<string, unknown> = {}): Statement {
  return toPositional(qb.getQuery() + suffix, [qb.getParameters(), extra], dialect);
}

/**
 * Runs `work` with the connection its reads belong on. A caller's own query runner (a transaction,
 * an EntityManager's builder) is kept. Otherwise, on a DataSource with `replication`, `work` gets
 * one runner in TypeORM's mode for reads (a replica unless `replication.defaultMode` says master,
 * as `repository.find()` reads), released when `work` ends, failed or not: a page, its COUNT and
 * its collections then come from one replica, not from replicas at different lags. Without
 * replication every runner reaches the one server and nothing is created: the page and its COUNT
 * keep running concurrently on two pooled connections, as before (measured on PostgreSQL: lower
 * latency for a page of a few milliseconds, while one runner was as fast for sub-millisecond ones).
 */
export async function withReadRunner<R>(connection: Connection, work: (connection: Connection) => Promise<R>): Promise<R> {
  const { dataSource } = connection;
  if (connection.queryRunner || !("replication" in dataSource.options && dataSource.options.replication)) return work(connection);
  const queryRunner = dataSource.createQueryRunner(dataSource.defaultReplicationModeForReads());
  try {
    return await work({ ...connection, queryRunner });
  } finally {
    await queryRunner.release();
  }
}

export function runStatement(connection: Connection, statement: Statement): Promise<Record<string, unknown>[]> {
  // Each statement's span (the page, its COUNT, each collection chunk): the text only, never the parameters.
  return statementRun(connection.dialect.dbSystem, statement.sql, () => runOnConnection(connection, statement));
}

function runOnConnection(connection: Connection, statement: Statement): Promise<Record<string, unknown>[]> {
  // The dialect's own reading where it has one (SQLite: rows as arrays, see its read-rows.ts);
  // a caller's runner always goes through TypeORM (its transaction, its release checks).
  const read = connection.queryRunner ? null : connection.dialect.readRows?.(connection.dataSource, statement.sql, statement.parameters);
  return read ?? connection.dataSource.query(statement.sql, statement.parameters as unknown[], connection.queryRunner);
}

/** The text returned as queryString: the SQL, then its bound parameters. */
export function describeStatement(statement: Statement): string {
  return `${statement.sql}\n-- parameters: ${JSON.stringify(statement.parameters)}`;
}
