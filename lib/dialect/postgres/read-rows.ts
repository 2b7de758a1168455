// QueryLib's reads on node-postgres: TypeORM's query() with the parser of timestamps and dates made
// faster. pg reads every timestamp, timestamptz and date through postgres-date, two regular
// expressions and a split per value; a W1 page (50 rows, a timestamp and a date each) spent 244 µs
// of Node's CPU on TypeORM's query() and 192 µs here (bench/out probe on the bench's 10,000
// customers, medians of 7 rounds of 1,500 reads): at 200 HTTP connections that is about 4 % of a
// guarded request. No option of pg's or TypeORM's does it, so this file hands pg a query's own type
// parsers (node-postgres' documented per-query `types`), which are the connection's own except
// where the connection would use postgres-date itself: there `postgresInstant` reads the common
// forms digit by digit and gives every other text to postgres-date, so each value is the Date
// pg would have made. Around the call it does what TypeORM's query() does (pooled-read.ts), and
// it steps aside wherever the result could differ: a caller's query runner (run-sql.ts), a
// subscriber that listens to queries. pg-native (which TypeORM loads when it is installed)
// ignores per-query parsers: the values are then its own, the ones TypeORM's query() gets, only
// not faster.
import { createRequire } from "node:module";
import type { DataSource } from "typeorm";
import { digitsAt } from "../../model/calendar.js";
import { listensToQueries, readOnPooledRunner } from "../pooled-read.js";

type Parser = (text: string) => unknown;

interface TypeSource {
  getTypeParser(oid: number, format?: string): Parser;
}

/** pg's Client and its native one alike; a driver module of the application's (TypeORM's `driver` option) may lack getTypeParser. */
interface PgClient extends TypeSource {
  query(config: { text: string; values: unknown[]; types?: TypeSource }): Promise<{ rows: Record<string, unknown>[] }>;
}

let postgresDate: Parser | null | undefined;

/**
 * pg-types' own parser of timestamps and dates (postgres-date), the very function pg registers
 * (what its parsers are compared with); null if not found, and then nothing is read faster.
 */
export function postgresDateParser(): Parser | null {
  if (postgresDate !== undefined) return postgresDate;
  try {
    // The copy pg itself loads: resolved from pg's pg-types, not from QueryLib's own folder.
    const fromPg = createRequire(createRequire(import.meta.url).resolve("pg"));
    const parser = createRequire(fromPg.resolve("pg-types"))("postgres-date") as unknown;
    postgresDate = typeof parser === "function" ? (parser as Parser) : null;
  } catch {
    postgresDate = null;
  }
  return postgresDate;
}

/**
 * The Date postgres-date makes of `text`, for the forms PostgreSQL writes by default: `YYYY-MM-DD`
 * (a date, local midnight) and `YYYY-MM-DD HH:MM:SS`, with a fraction of up to six digits and
 * `+00` or nothing after it (timestamptz in a UTC session, timestamp). Null for anything else
 * (other zones, BC, infinity, years below 100), which postgres-date reads itself. The same
 * constructor with the same numbers: local time through `new Date(y, m, d, …)`, UTC through
 * `Date.UTC`, the milliseconds as `1000 * parseFloat(fraction)`, as postgres-date computes them.
 */
export function postgresInstant(text: string): Date | null {
  const length = text.length;
  if (length < 10 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return null;
  const y = digitsAt(text, 0, 4), mo = digitsAt(text, 5, 2), d = digitsAt(text, 8, 2);
  if (y < 100 || mo < 0 || d < 0) return null;
  if (length === 10) return new Date(y, mo - 1, d);
  if (length < 19 || text.charCodeAt(10) !== 32 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return null;
  const h = digitsAt(text, 11, 2), mi = digitsAt(text, 14, 2), s = digitsAt(text, 17, 2);
  if (h < 0 || mi < 0 || s < 0) return null;
  // What follows the seconds: an optional fraction, then `+00` or the end.
  const utc = text.endsWith("+00");
  const end = utc ? length - 3 : length;
  let ms = 0;
  if (end > 19) {
    if (text.charCodeAt(19) !== 46 || end - 20 < 1 || end - 20 > 6 || digitsAt(text, 20, end - 20) < 0) return null;
    ms = 1000 * parseFloat(text.slice(19, end));
  } else if (end !== 19) return null;
  return utc ? new Date(Date.UTC(y, mo - 1, d, h, mi, s, ms)) : new Date(y, mo - 1, d, h, mi, s, ms);
}

/** A query's type parsers: the connection's own, with postgres-date's values read faster. */
const typesOfClient = new WeakMap<PgClient, TypeSource>();

function typesOf(client: PgClient, postgresDate: Parser): TypeSource {
  let types = typesOfClient.get(client);
  if (!types) {
    const instant: Parser = (text) => postgresInstant(text) ?? postgresDate(text);
    types = {
      getTypeParser(oid, format = "text") {
        const parser = client.getTypeParser(oid, format);
        return parser === postgresDate ? instant : parser;
      },
    };
    typesOfClient.set(client, types);
  }
  return types;
}

/**
 * The rows of a statement as TypeORM's query() gives them, or null where TypeORM's query() must
 * run it (see the top of this file).
 */
export function readPostgresRows(dataSource: DataSource, sql: string, parameters: readonly unknown[]): Promise<Record<string, unknown>[]> | null {
  if (dataSource.options.type !== "postgres" || !dataSource.isInitialized || listensToQueries(dataSource)) return null;
  const parser = postgresDateParser();
  if (!parser) return null;
  const values = parameters as unknown[];
  return readOnPooledRunner<PgClient>(dataSource, sql, values, {
    // Without the connection's parsers to start from, its own (no per-query parsers at all).
    run: async (client) => (await client.query(typeof client.getTypeParser === "function" ? { text: sql, values, types: typesOf(client, parser) } : { text: sql, values })).rows,
    slowAlsoWhenFailed: false,
  });
}
