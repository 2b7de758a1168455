// QueryLib's reads on mysql2 through its callback API. TypeORM's query() goes through mysql2's
// promise wrapper: a wrapper object per call, and with mysql2's `trace` option (on by default) an
// Error made and its stack captured per statement, so that a failing query's stack reaches the
// code that called it. A W1 page spent 84 µs of Node's CPU that way and 62 µs here (bench/out probe
// on the bench's 10,000 customers, medians of 7 rounds of 1,500 reads): with its COUNT, 3-4 % of a
// guarded request at 200 HTTP connections. QueryLib's statements are always called from
// QueryLib, and a failure reaches the caller as TypeORM's QueryFailedError around the driver's
// error (its code, errno and message unchanged), so the captured stack would only name QueryLib's
// own frames. The rows are the array mysql2 gives TypeORM's query() (the same parsing, options
// and type casts: the pool's own). Around the call it does what TypeORM's query() does
// (pooled-read.ts), with TypeORM's `enableQueryTimeout`, and it steps aside where the result
// could differ: a caller's query runner (run-sql.ts), a subscriber that listens to queries.
import type { DataSource } from "typeorm";
import { listensToQueries, readOnPooledRunner } from "../pooled-read.js";

type Done = (error: Error | null, rows?: unknown) => void;

interface MysqlConnection {
  query(statement: string | { sql: string; timeout: number }, values: unknown[], done: Done): unknown;
}

/**
 * The rows of a statement as TypeORM's query() gives them, or null where TypeORM's query() must
 * run it (see the top of this file).
 */
export function readMysqlRows(dataSource: DataSource, sql: string, parameters: readonly unknown[]): Promise<Record<string, unknown>[]> | null {
  const { options } = dataSource;
  if ((options.type !== "mysql" && options.type !== "mariadb") || !dataSource.isInitialized || listensToQueries(dataSource)) return null;
  // As TypeORM's MySQL runner sends it: with a timeout when the DataSource asks for one.
  const statement = options.enableQueryTimeout && options.maxQueryExecutionTime ? { sql, timeout: options.maxQueryExecutionTime } : sql;
  const values = parameters as unknown[];
  return readOnPooledRunner<MysqlConnection>(dataSource, sql, values, {
    run: (connection) =>
      new Promise((resolve, reject) => {
        connection.query(statement, values, (error, rows) => (error ? reject(error) : resolve(rows as Record<string, unknown>[])));
      }),
    slowAlsoWhenFailed: true,
  });
}
