// SQLite's datetime texts are hydrated by QueryLib's own reading (execute/hydrate.ts) where it
// gives what TypeORM's driver gives, and by the driver everywhere else. The two are compared on
// generated texts (valid and not, every separator and length the fast reading looks at), on the
// calendar's edges, and end to end against TypeORM's own find() on rows written as odd texts.
import "reflect-metadata";
import assert from "node:assert/strict";
import { Column, Entity, PrimaryColumn, type DataSource, type Driver } from "typeorm";
import { hydratorOf, sqliteInstant } from "../../lib/execute/hydrate.js";
import { toListAsync } from "../../lib/index.js";
import { openIsolatedDatabase } from "../support/databases.js";

const plusOneHour = { to: (v: unknown) => v, from: (v: unknown) => (v instanceof Date ? new Date(v.getTime() + 3_600_000) : v) };

@Entity("hydrate_stamp")
class Stamp {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "datetime", nullable: true }) at!: Date | null;
  @Column({ nullable: true }) declared!: Date;
  @Column({ type: "datetime", nullable: true, transformer: plusOneHour }) shifted!: Date | null;
}

/** A deterministic generator, so a failure names a reproducible input. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const timeOf = (value: unknown) => (value instanceof Date ? value.getTime() : value);

describe("Hydrating SQLite datetimes: QueryLib's reading gives what TypeORM's driver gives", () => {
  let dataSource: DataSource;
  before(async () => {
    dataSource = await openIsolatedDatabase("sqlite", "querylib_hydrate", [Stamp]);
  });
  after(async () => dataSource?.destroy());

  const column = (name: string) => dataSource.getMetadata(Stamp).findColumnWithPropertyName(name)!;

  it("on generated texts of every length and separator it looks at, valid and not", () => {
    const next = random(2023);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const digits = (n: number) => Array.from({ length: n }, () => pick("0123456789".split(""))).join("");
    const driver = dataSource.driver;
    let fast = 0;
    for (const name of ["at", "declared"]) {
      const hydrate = hydratorOf(driver, column(name));
      for (let i = 0; i < 20_000; i++) {
        const date = `${pick(["0000", "0099", "0100", "1970", "2000", "2024", "2023", "9999", digits(4), "20a4"])}${pick(["-", "-", "/"])}${pick(["00", "01", "02", "12", "13", digits(2)])}-${pick(["00", "01", "28", "29", "30", "31", "32", digits(2)])}`;
        const time = `${pick([" ", " ", "T", "t", "_"])}${pick(["00", "23", "24", digits(2)])}:${pick(["00", "59", "60", digits(2)])}${pick([":", ":", "-"])}${pick(["00", "59", "60", digits(2)])}`;
        let text = pick([date, date + time, `${date}${time}${pick([".", ".", ",", ":"])}${pick([digits(3), digits(2), "12a"])}`, `${date}${time}${pick(["Z", "+01:00", ".000Z"])}`, `${date} ${digits(2)}:${digits(2)}`]);
        // Two texts in five are how TypeORM writes an instant that exists (any millisecond in years 100–9999).
        const stored = new Date(Date.UTC(100, 0, 1) + Math.floor(next() * (Date.UTC(9999, 11, 31) - Date.UTC(100, 0, 1)))).toISOString().slice(0, pick([19, 23])).replace("T", pick([" ", " ", "T"]));
        if (next() < 0.4) text = stored;
        if (sqliteInstant(text)) fast++;
        const ours = hydrate(text);
        const typeorm = driver.prepareHydratedValue(text, column(name));
        assert.ok(ours instanceof Date && typeorm instanceof Date, text);
        assert.ok(Object.is(timeOf(ours), timeOf(typeorm)), `${name} ${text}: ${String(ours)} vs ${String(typeorm)}`);
      }
    }
    assert.ok(fast > 5_000, `only ${fast} texts took the fast reading`);
  });

  it("on the edges of the calendar and the clock, and on values that are not text", () => {
    const hydrate = hydratorOf(dataSource.driver, column("at"));
    const texts = [
      "2024-02-29 10:00:00", "2023-02-29 10:00:00", "2000-02-29 00:00:00.000", "1900-02-29 00:00:00", "2024-04-31 00:00:00", "2024-12-31 23:59:59.999",
      "2024-12-31 24:00:00", "2024-01-01 00:60:00", "2024-01-01 00:00:60", "0099-01-01 00:00:00", "0100-01-01 00:00:00", "1970-01-01 00:00:00.000",
      "9999-12-31 23:59:59", "2024-01-01T10:00:00", "2024-01-01T10:00:00.123", "2024-01-01 10:00:00,123", "2024-01-01 10:00:00:123", "2024-01-01 10:00", "2024-01-01", "",
    ];
    for (const text of texts) assert.ok(Object.is(timeOf(hydrate(text)), timeOf(dataSource.driver.prepareHydratedValue(text, column("at")))), text);
    assert.equal(sqliteInstant("2024-12-31 23:59:59.999")?.toISOString(), "2024-12-31T23:59:59.999Z");
    assert.equal(sqliteInstant("0099-01-01 00:00:00"), null, "years below 100 go to the driver");
    for (const value of [null, undefined, 0, 1_700_000_000_000, new Date(0)]) {
      assert.deepEqual(hydrate(value), dataSource.driver.prepareHydratedValue(value, column("at")), String(value));
    }
  });

  it("leaves a column with a transformer, and every other driver, to the driver", () => {
    const shifted = hydratorOf(dataSource.driver, column("shifted"));
    assert.equal(timeOf(shifted("2024-01-01 10:00:00")), Date.UTC(2024, 0, 1, 11), "the transformer ran");
    const other = { prepareHydratedValue: () => "the driver's" } as unknown as Driver;
    assert.equal(hydratorOf(other, column("at"))("2024-01-01 10:00:00"), "the driver's");
  });

  it("end to end: rows written as odd texts come back as TypeORM's find() gives them", async () => {
    const texts = ["2024-05-13 03:49:35.000", "2024-05-13 03:49:35", "2024-05-13T03:49:35", "2024-02-30 10:00:00", "0050-01-01 00:00:00", "2024-01-01 24:00:00", "2024-01-01 10:00", "2024-01-01 10:00:00.5", "2024-01-01 10:00:00Z", null];
    await dataSource.getRepository(Stamp).clear();
    for (const [i, text] of texts.entries()) {
      await dataSource.query(`INSERT INTO "hydrate_stamp" ("id", "at", "declared", "shifted") VALUES (?, ?, ?, ?)`, [i + 1, text, text, text]);
    }
    const ours = (await toListAsync(dataSource.getRepository(Stamp), { orders: [{ sort: 1, field: "id", direction: "Ascending" }] })).data as Stamp[];
    const typeorm = await dataSource.getRepository(Stamp).find({ order: { id: "ASC" } });
    assert.equal(ours.length, texts.length);
    for (const [i, row] of ours.entries()) {
      for (const name of ["at", "declared", "shifted"] as const) {
        assert.ok(Object.is(timeOf(row[name]), timeOf(typeorm[i]![name])), `${name} of ${String(texts[i])}: ${String(row[name])} vs ${String(typeorm[i]![name])}`);
      }
    }
  });
});
