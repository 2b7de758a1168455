// What a DataSource tells about its statements, recorded for the tests of QueryLib's own reads
// (test/engine/sqlite-read-rows.test.ts, postgres-read-rows.test.ts): they must tell what
// TypeORM's query() tells.
import { type AfterQueryEvent, type EntitySubscriberInterface, EventSubscriber, type Logger } from "typeorm";

/** A logger that records what it is told. */
export class RecordingLogger implements Logger {
  readonly queries: { sql: string; parameters: unknown[] | undefined }[] = [];
  readonly errors: { error: string | Error; sql: string }[] = [];
  readonly slow: { time: number; sql: string }[] = [];
  logQuery(sql: string, parameters?: unknown[]) {
    this.queries.push({ sql, parameters });
  }
  logQueryError(error: string | Error, sql: string) {
    this.errors.push({ error, sql });
  }
  logQuerySlow(time: number, sql: string) {
    this.slow.push({ time, sql });
  }
  logSchemaBuild() {}
  logMigration() {}
  log() {}
}

/** The statements a DataSource with QueryListener among its subscribers has run, as its afterQuery saw them. */
export const seenQueries: AfterQueryEvent[] = [];

/** A subscriber listening to queries: with one, TypeORM's query() must run QueryLib's statements. */
@EventSubscriber()
export class QueryListener implements EntitySubscriberInterface {
  afterQuery(event: AfterQueryEvent) {
    seenQueries.push(event);
  }
}

/** Counts the statements run by `runnerClass`'s query() (TypeORM's runner of a driver) while `work` runs. */
export async function countRunnerQueries<R>(runnerClass: { prototype: { query: (...args: never[]) => Promise<unknown> } }, work: () => Promise<R>): Promise<{ result: R; count: number }> {
  const original = runnerClass.prototype.query;
  let count = 0;
  runnerClass.prototype.query = function (this: unknown, ...args: never[]) {
    count++;
    return original.apply(this, args);
  };
  try {
    return { result: await work(), count };
  } finally {
    runnerClass.prototype.query = original;
  }
}
