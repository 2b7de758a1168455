// PostgreSQL (node-postgres): QueryLib reads its statements with pg's per-query type parsers
// (lib/dialect/postgres/read-rows.ts), which are the connection's own except that postgres-date's
// values are read digit by digit in their common forms. Every value must be the one TypeORM's
// query() gets, in any time zone, with a caller's own type parsers kept. What TypeORM's query()
// does around a statement is tested for every pooled driver in pooled-read-rows.test.ts.
import "reflect-metadata";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { promisify } from "node:util";
import fc from "fast-check";
import { Column, DataSource, type DataSourceOptions, Entity, PrimaryColumn } from "typeorm";
import { PostgresQueryRunner } from "typeorm/driver/postgres/PostgresQueryRunner.js";
import { toListAsync } from "../../lib/index.js";
import { postgresDateParser, postgresInstant, readPostgresRows } from "../../lib/dialect/postgres/read-rows.js";
import { openIsolatedDatabase, openOnIsolatedDatabase, skipIfUnavailable } from "../support/databases.js";
import { countRunnerQueries } from "../support/query-logging.js";

const fromPg = createRequire(createRequire(import.meta.url).resolve("pg"));
const postgresDate = createRequire(fromPg.resolve("pg-types"))("postgres-date") as (text: string) => unknown;
const pgTypes = fromPg("pg-types") as { getTypeParser(oid: number, format?: string): (text: string) => unknown };

/** Same value: Dates by their time (NaN included), anything else as is. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date && b instanceof Date) return Object.is(a.getTime(), b.getTime());
  return Object.is(a, b);
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

/** Texts in and around the forms postgresInstant reads itself. */
const instantText = fc
  .record({
    year: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 99, 100, 999, 1000, 1582, 1970, 2038, 9999)),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.integer({ min: 0, max: 61 }),
    second: fc.integer({ min: 0, max: 61 }),
    fraction: fc.oneof(fc.constant(""), fc.stringMatching(/^\.[0-9]{1,8}$/), fc.constantFrom(".", ".5", ".999999", ".000001", ".1x")),
    zone: fc.constantFrom("", "", "+00", "+05:30", "-03", "Z", " BC", "+00 BC", "+0"),
    dateOnly: fc.boolean(),
    separator: fc.constantFrom(" ", " ", "T", "  "),
  })
  .map(({ year, month, day, hour, minute, second, fraction, zone, dateOnly, separator }) => {
    const date = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
    return dateOnly ? date + (zone === " BC" ? zone : "") : `${date}${separator}${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}${fraction}${zone}`;
  });

describe("PostgreSQL: postgresInstant reads what postgres-date reads, the same Date", () => {
  it("finds the function pg itself registers for timestamps and dates (else nothing would be read faster)", () => {
    for (const oid of [1082, 1114, 1184]) assert.equal(postgresDateParser(), pgTypes.getTypeParser(oid, "text"), String(oid));
  });

  it("for every text in and around its forms (fast-check), null only where postgres-date is left to read it", () => {
    fc.assert(
      fc.property(fc.oneof(instantText, fc.string({ maxLength: 30 }), fc.constantFrom("infinity", "-infinity", "2023-09-22", "2023-09-22 20:08:21", "2023-09-22 20:08:21.123456+00")), (text) => {
        const fast = postgresInstant(text);
        if (fast === null) return true;
        return sameValue(fast, postgresDate(text));
      }),
      { numRuns: 20_000 },
    );
    // The forms it must read itself (not hand to postgres-date): the ones PostgreSQL writes by default.
    for (const text of ["2023-09-22", "2023-09-22 20:08:21", "2023-09-22 20:08:21.5", "2023-09-22 20:08:21.123456", "2023-09-22 20:08:21+00", "2023-09-22 20:08:21.123+00", "0100-01-01"]) {
      const fast = postgresInstant(text);
      assert.ok(fast instanceof Date, text);
      assert.ok(sameValue(fast, postgresDate(text)), text);
    }
    for (const text of ["0099-01-01", "2023-09-22 BC", "2023-09-22 20:08:21+05:30", "2023-09-22T20:08:21", "infinity", "12023-01-01", "2023-09-22 20:08:21.1234567"]) {
      assert.equal(postgresInstant(text), null, text);
    }
  });

  it("in time zones with daylight saving, where local midnight or 02:30 may not exist (a process per zone)", async () => {
    // Local time is the process's zone, fixed at start: each zone gets a process of its own.
    const script = `
      import { createRequire } from "node:module";
      const { postgresInstant } = await import(${JSON.stringify(new URL("../../lib/dialect/postgres/read-rows.js", import.meta.url).href)});
      const fromPg = createRequire(createRequire(${JSON.stringify(import.meta.url)}).resolve("pg"));
      const postgresDate = createRequire(fromPg.resolve("pg-types"))("postgres-date");
      const pad = (n, w) => String(n).padStart(w, "0");
      let checked = 0, differ = [];
      // Every day of 1940-2040 at midnight, 00:30, 01:30, 02:30 and 23:59:59.5, as date and timestamp.
      for (let t = Date.UTC(1940, 0, 1); t < Date.UTC(2040, 0, 1); t += 86_400_000) {
        const d = new Date(t);
        const day = pad(d.getUTCFullYear(), 4) + "-" + pad(d.getUTCMonth() + 1, 2) + "-" + pad(d.getUTCDate(), 2);
        for (const text of [day, day + " 00:00:00", day + " 00:30:00", day + " 01:30:00", day + " 02:30:00.25", day + " 23:59:59.5", day + " 02:30:00+00"]) {
          const fast = postgresInstant(text);
          if (!(fast instanceof Date)) { differ.push(text + " not read"); continue; }
          checked++;
          if (!Object.is(fast.getTime(), postgresDate(text).getTime())) differ.push(text);
        }
      }
      console.log(JSON.stringify({ checked, differ: differ.slice(0, 5), count: differ.length }));
    `;
    for (const zone of ["America/Sao_Paulo", "Europe/Berlin", "Australia/Lord_Howe", "America/Havana", "UTC"]) {
      const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, TZ: zone } });
      const { checked, differ, count } = JSON.parse(stdout) as { checked: number; differ: string[]; count: number };
      assert.equal(count, 0, `${zone}: ${differ.join(", ")}`);
      assert.ok(checked > 250_000, `${zone}: ${checked}`);
    }
  });
});

@Entity("prr_moment")
class Moment {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Column({ type: "timestamp", nullable: true })
  at!: Date | null;

  @Column({ type: "timestamptz", nullable: true })
  zoned!: Date | null;

  @Column({ type: "date", nullable: true })
  day!: string | null;

  @Column({ type: "varchar", length: 40 })
  label!: string;
}

/** Values PostgreSQL writes in each form postgres-date knows, and some it reads only itself. */
const moments: [number, string | null, string | null, string | null][] = [
  [1, "2023-09-22 20:08:21", "2023-09-22 20:08:21+00", "2023-09-22"],
  [2, "2023-09-22 20:08:21.5", "2023-09-22 20:08:21.123456+00", "1950-05-21"],
  [3, "1999-12-31 23:59:59.999999", "2000-01-01 00:00:00+05:30", "0100-01-01"],
  [4, "0050-06-01 12:00:00", "0050-06-01 12:00:00+00", "0050-06-01"],
  [5, "0044-03-15 12:00:00 BC", "0044-03-15 12:00:00+00 BC", "0044-03-15 BC"],
  [6, "infinity", "-infinity", "infinity"],
  [7, null, null, null],
  [8, "2023-03-26 02:30:00", "2023-03-26 02:30:00-03", "2023-10-29"],
];

const insertSql = `INSERT INTO prr_moment (id, at, zoned, day, label) VALUES ${moments.map((_, i) => `($${i * 4 + 1}, $${i * 4 + 2}, $${i * 4 + 3}, $${i * 4 + 4}, 'm')`).join(", ")}`;

const selectAll = "SELECT id, at, zoned, day, label FROM prr_moment ORDER BY id";
const filter = { orders: [{ sort: 1, field: "id", direction: "Ascending" }], page: { pageNumber: 1, pageSize: 100 } };

describe("PostgreSQL: QueryLib's reads with the connection's type parsers, timestamps read faster", () => {
  const opened: DataSource[] = [];
  const open = async (options: Partial<DataSourceOptions> = {}) => {
    const dataSource = await openOnIsolatedDatabase("postgres", "querylib_read_rows", [Moment], options);
    opened.push(dataSource);
    return dataSource;
  };

  before(async function () {
    try {
      const dataSource = await openIsolatedDatabase("postgres", "querylib_read_rows", [Moment]);
      await dataSource.query(insertSql, moments.flat());
      await dataSource.destroy();
    } catch (error) {
      skipIfUnavailable(this, error);
    }
  });
  after(async () => {
    for (const dataSource of opened) if (dataSource.isInitialized) await dataSource.destroy();
  });

  it("every value is the one TypeORM's query() gets: each form, zone, BC, infinity and null, in a UTC session and in another zone", async () => {
    for (const timezone of [undefined, "Asia/Kolkata", "America/Sao_Paulo"]) {
      const dataSource = await open(timezone ? { extra: { options: `-c TimeZone=${timezone}` } } : {});
      const fast = (await readPostgresRows(dataSource, selectAll, []))!;
      const typeOrm = await dataSource.query(selectAll);
      assert.equal(fast.length, moments.length);
      assert.deepStrictEqual(fast, typeOrm, String(timezone));
      assert.ok(fast[0]!.at instanceof Date && fast[0]!.zoned instanceof Date && fast[0]!.day instanceof Date, "pg's values, not texts");
    }
  });

  it("a caller's own type parsers (the pool's `types`) are kept, postgres-date's forms included", async () => {
    const types = {
      getTypeParser: (oid: number, format?: string) => (oid === 1114 ? (text: string) => `timestamp ${text}` : pgTypes.getTypeParser(oid, format)),
    };
    const dataSource = await open({ extra: { types } });
    const fast = (await readPostgresRows(dataSource, selectAll, []))!;
    assert.deepStrictEqual(fast, await dataSource.query(selectAll));
    assert.equal(fast[0]!.at, "timestamp 2023-09-22 20:08:21");
    assert.ok(fast[0]!.zoned instanceof Date);
  });

  it("a connection without getTypeParser (an application's own pg-like client) is read with its own parsers, not a TypeError", async () => {
    const pg = fromPg("pg") as { Client: new (...args: unknown[]) => object };
    class ClientWithoutParsers extends pg.Client {
      getTypeParser = undefined;
    }
    const dataSource = await open({ extra: { Client: ClientWithoutParsers } });
    const fast = (await readPostgresRows(dataSource, selectAll, []))!;
    assert.deepStrictEqual(fast, await dataSource.query(selectAll));
    assert.ok(fast[0]!.at instanceof Date);
  });

  it("QueryLib's page and COUNT are read without TypeORM's query(), with the entities TypeORM's find() gives", async () => {
    const dataSource = await open();
    const { result, count } = await countRunnerQueries(PostgresQueryRunner, () => toListAsync(dataSource.getRepository(Moment), filter as never));
    assert.equal(count, 0);
    assert.equal(result.totalCount, moments.length);
    assert.deepStrictEqual(result.data, await dataSource.getRepository(Moment).find({ order: { id: "ASC" } }));
  });
});
