// What TypeORM's query() does around a statement, for QueryLib's own reads on a pooled driver
// (node-postgres, mysql2): each runs its statement its own way (postgres/read-rows.ts,
// mysql/read-rows.ts) and must otherwise be indistinguishable from DataSource.query().
import { type DataSource, QueryFailedError } from "typeorm";

/** A subscriber that listens to queries must see QueryLib's: then TypeORM's query() runs them (on every driver, SQLite's too). */
export const listensToQueries = (dataSource: DataSource): boolean => dataSource.subscribers.some((s) => s.beforeQuery || s.afterQuery);

export interface PooledRead<Connection> {
  /** Runs the statement on the connection; rejects with the driver's error. */
  readonly run: (connection: Connection) => Promise<Record<string, unknown>[]>;
  /** TypeORM's MySQL runner logs a slow statement also when it failed; its PostgreSQL runner does not. */
  readonly slowAlsoWhenFailed: boolean;
}

/**
 * As DataSource.query() runs a statement: a runner of its own, connected from the pool and
 * released after (also on error); the logger told the query, an error and a statement slower than
 * `maxQueryExecutionTime`; a driver's error as a QueryFailedError.
 */
export async function readOnPooledRunner<Connection>(dataSource: DataSource, sql: string, parameters: unknown[], read: PooledRead<Connection>): Promise<Record<string, unknown>[]> {
  const runner = dataSource.createQueryRunner();
  try {
    const connection = (await runner.connect()) as Connection;
    dataSource.logger.logQuery(sql, parameters, runner);
    const started = Date.now();
    const logIfSlow = () => {
      const elapsed = Date.now() - started;
      const slow = dataSource.options.maxQueryExecutionTime;
      if (slow && elapsed > slow) dataSource.logger.logQuerySlow(elapsed, sql, parameters, runner);
    };
    let rows: Record<string, unknown>[];
    try {
      rows = await read.run(connection);
    } catch (error) {
      if (read.slowAlsoWhenFailed) logIfSlow();
      dataSource.logger.logQueryError(error as Error, sql, parameters, runner);
      throw new QueryFailedError(sql, parameters, error as Error);
    }
    logIfSlow();
    return rows;
  } finally {
    await runner.release();
  }
}
