// Value lists far past every driver's parameter limit (SQLite's variable limit, PostgreSQL's
// 65,535 bind parameters): In / NotIn / IIn / INotIn compile a list to ONE bound parameter, so a
// list of 100,000 ids (or 70,000 texts) runs, and the SQL text does not depend on the list's
// length. Every typed column kind a list may compare (int, bigint, decimal, uuid, text, enum) is
// checked on every target against a plain-JS oracle, with the traps of today's coercion in the
// lists: fractions and out-of-range numbers against integer columns, GUIDs in other spellings,
// case / accent / trailing-space variants of text (MariaDB's collations), enum names and positions.
import assert from "node:assert/strict";
import "reflect-metadata";
import { Column, Entity, PrimaryColumn, type DataSource, type ObjectLiteral } from "typeorm";
import { toList, toListAsync, toStatements, where } from "../../lib/index.js";
import { openIsolatedDatabase } from "../support/databases.js";
import { describeOnTargets, targets } from "../support/targets.js";

export enum ListKind {
  Alpha = "Alpha",
  Beta = "Beta",
  Gamma = "Gamma",
  Delta = "Delta",
}

const decimalToNumber = { to: (v: unknown) => v, from: (v: unknown) => (v === null || v === undefined ? v : Number(v)) };

@Entity("long_list_item")
export class LongListItem {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Column({ type: "uuid" })
  code!: string;

  @Column({ type: "varchar", length: 80, nullable: true })
  label!: string | null;

  @Column({ type: "simple-enum", enum: ListKind, nullable: true })
  kind!: ListKind | null;

  @Column({ type: "bigint", nullable: true })
  big!: string | null;

  @Column({ type: "decimal", precision: 12, scale: 2, nullable: true, transformer: decimalToNumber })
  amount!: number | null;
}

const ROWS = 2_000;
const kinds = Object.values(ListKind);

/** Text that the databases' default collations would confuse: case, accents, padding, ligatures, final sigma. */
const LABEL_VARIANTS = [
  "alpha", "Alpha", "ALPHA", "Álpha", "alpha ", "straße", "STRASSE", "Strasse", "Σίσυφος", "ΣΊΣΥΦΟΣ", "σίσυφοσ",
  "ǅemal", "ǆemal", "ﬁle", "file", "naïve", "naive", "NAÏVE", "", "o'brien", "100%", "a_b", "trailing\t",
];

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0").slice(-width);
const codeOf = (i: number) => `${hex(i * 2654435761, 8)}-${hex(i, 4)}-4${hex(i * 7, 3)}-8${hex(i * 13, 3)}-${hex(i * 40503, 12)}`;

function makeRows(): LongListItem[] {
  const rows: LongListItem[] = [];
  for (let i = 1; i <= ROWS; i++) {
    const item = new LongListItem();
    item.id = i;
    item.code = codeOf(i);
    item.label = i % 50 === 0 ? null : i % 3 === 0 ? LABEL_VARIANTS[i % LABEL_VARIANTS.length]! : `w${i % 400}`;
    item.kind = i % 40 === 0 ? null : kinds[i % kinds.length]!;
    item.big = i % 45 === 0 ? null : String(i * 2 ** 32);
    item.amount = i % 55 === 0 ? null : i / 4;
    rows.push(item);
  }
  return rows;
}

const rows = makeRows();

async function openSeeded(dialect: "sqlite" | "postgres" | "mariadb"): Promise<DataSource> {
  const dataSource = await openIsolatedDatabase(dialect, "querylib_long_lists", [LongListItem]);
  const repository = dataSource.getRepository(LongListItem);
  for (let i = 0; i < rows.length; i += 500) await repository.insert(rows.slice(i, i + 500));
  return dataSource;
}

// ---------------------------------------------------------------------------------------------
// The lists (deterministic) and the oracle

/** 100,000 numbers: the even ids, then fractions and numbers outside int4 / int8 (never equal to an int column). */
function idList(): unknown[] {
  const list: unknown[] = [];
  for (let n = 2; list.length < 99_990; n += 2) list.push(n);
  list.push(3.5, "7.0", 2_999_999_999, -2_999_999_999, 1e20, 1e21, "12", 0.5, 1999.999, -0);
  return list;
}

/** 100,000 GUIDs: every third row's code (in upper case, braces, without hyphens), the rest absent. */
function codeList(): string[] {
  const list: string[] = [];
  for (let i = 3; i <= ROWS; i += 3) {
    const code = codeOf(i);
    list.push(i % 2 === 0 ? code.toUpperCase() : i % 5 === 0 ? `{${code}}` : i % 7 === 0 ? code.replaceAll("-", "") : code);
  }
  for (let n = ROWS + 1; list.length < 100_000; n++) list.push(codeOf(n));
  return list;
}

/** 70,000 texts: some label variants (padded: tokens are trimmed), a null (the empty text), then absent fillers. */
function labelList(): unknown[] {
  const list: unknown[] = ["Alpha", " straße", "σίσυφοσ", "ǅEMAL", "ﬁle", "naïve ", null, "100%", "w7", "W8", "w9 "];
  for (let n = 0; list.length < 70_000; n++) list.push(`filler-${n}-é`);
  return list;
}

/** 100,000 enum values: members, a name in another case and a position. */
function kindList(): string[] {
  const list: string[] = [];
  while (list.length < 100_000) list.push("Alpha", "gamma", "1");
  return list.slice(0, 100_000);
}

/** 100,000 numbers for the bigint column: every fourth row's value, the rest absent. */
function bigList(): number[] {
  const list: number[] = [];
  for (let i = 4; i <= ROWS; i += 4) list.push(i * 2 ** 32);
  for (let n = 1; list.length < 100_000; n++) list.push(n * 2 ** 32 + 1);
  return list;
}

/** 100,000 numbers for the decimal column: quarters of every fifth row, thirds (never stored), negatives. */
function amountList(): number[] {
  const list: number[] = [];
  for (let i = 5; i <= ROWS; i += 5) list.push(i / 4);
  for (let n = 1; list.length < 100_000; n++) list.push(n % 2 ? n / 3 : -n);
  return list;
}

type Field = "id" | "code" | "label" | "kind" | "big" | "amount";

const token = (v: unknown) => (v === null || v === undefined ? "" : String(v).trim());
const guidKey = (text: string) => text.replace(/[{}-]/g, "").toLowerCase();
const enumKey = (text: string) => kinds.find((k) => k === text) ?? kinds.find((k) => k.toLowerCase() === text.toLowerCase()) ?? kinds[Number(text)]!;

/** Ids matching the condition, from the rows themselves: exact code points, JS lower case for I…, null guard. */
function expectedIds(field: Field, dataType: string, operator: string, values: readonly unknown[]): number[] {
  const insensitive = operator.startsWith("II") || operator === "INotIn";
  const negated = operator.includes("Not");
  const keyOf = (v: unknown): unknown => {
    const text = token(v);
    if (dataType === "Number") return Number(text);
    if (dataType === "Guid") return guidKey(text);
    if (dataType === "Enum") return enumKey(text);
    return insensitive ? text.toLowerCase().replaceAll("ς", "σ") : text;
  };
  const wanted = new Set(values.map(keyOf));
  return rows
    .filter((row) => {
      const raw = row[field];
      if (raw === null) return false;
      const key = dataType === "Number" ? Number(raw) : dataType === "Guid" ? guidKey(String(raw)) : insensitive ? String(raw).toLowerCase().replaceAll("ς", "σ") : String(raw);
      return wanted.has(key) !== negated;
    })
    .map((row) => row.id);
}

const condition = (field: Field, dataType: string, operator: string, values: readonly unknown[]) => ({
  conditionGroup: { connector: "And", conditions: [{ sort: 1, field, dataType, operator, values }] },
});

interface Case {
  readonly field: Field;
  readonly dataType: string;
  readonly operators: readonly string[];
  readonly list: () => readonly unknown[];
}

const cases: Case[] = [
  { field: "id", dataType: "Number", operators: ["In", "NotIn"], list: idList },
  { field: "code", dataType: "Guid", operators: ["In", "NotIn"], list: codeList },
  { field: "label", dataType: "Text", operators: ["In", "NotIn", "IIn", "INotIn"], list: labelList },
  { field: "kind", dataType: "Enum", operators: ["In", "NotIn"], list: kindList },
  { field: "kind", dataType: "Text", operators: ["In", "NotIn", "IIn", "INotIn"], list: () => [...labelList(), "Beta", "DELTA"] },
  { field: "big", dataType: "Number", operators: ["In", "NotIn"], list: bigList },
  { field: "amount", dataType: "Number", operators: ["In", "NotIn"], list: amountList },
];

describeOnTargets("Long value lists", targets, openSeeded, (target, dataSource) => {
  const run = async (shape: object): Promise<number[]> => {
    const result = target === "memory"
      ? toList(rows as ObjectLiteral[], shape as never)
      : await toListAsync(dataSource().getRepository(LongListItem), shape as never);
    return (result as unknown as { data: { id: number }[] }).data.map((row) => row.id);
  };

  for (const c of cases) {
    for (const operator of c.operators) {
      it(`${c.dataType} ${operator} on ${c.field} with ${c.list().length.toLocaleString("en")} values`, async () => {
        const values = c.list();
        const expected = expectedIds(c.field, c.dataType, operator, values);
        // The list must decide something: neither every row nor none.
        assert.ok(expected.length > 0 && expected.length < ROWS, `test bug: ${expected.length} rows expected`);
        assert.deepEqual(await run(condition(c.field, c.dataType, operator, values)), expected);
      });
    }
  }

  if (target === "memory") return;

  /** The WHERE clause of a list's statement, and its parameters. */
  const statement = (field: Field, dataType: string, operator: string, values: readonly unknown[]) => {
    const { sql, parameters } = toStatements(dataSource().getRepository(LongListItem), condition(field, dataType, operator, values) as never).data;
    return { where: sql.slice(sql.indexOf(" WHERE "), sql.indexOf(" ORDER BY ")), parameters };
  };

  if (target === "mariadb") {
    // MariaDB binds a list as ONE spread parameter (`IN (:...ql_0)`, TypeORM's form): the text
    // QueryLib builds and caches does not depend on the list's length; the finished statement has
    // a placeholder per value, which mysql2 fills in client-side (no server limit; JSON_TABLE
    // measured slower and compares text in its own collation: lib/dialect/mysql/mysql-dialect.ts).
    // A named parameter per value made a 100,000-value list cost 1.3 s to compile (the fuzzer).
    it("the builder's text of a list does not depend on its length (3 and 3,000 values); the statement binds each value", () => {
      const builderText = (field: Field, dataType: string, operator: string, values: readonly unknown[]) => {
        const qb = where(dataSource().getRepository(LongListItem), { conditions: [{ field, dataType, operator, values }] } as never);
        return qb.getQuery().slice(qb.getQuery().indexOf(" WHERE "));
      };
      assert.equal(builderText("id", "Number", "In", [1, 2, 3]), " WHERE (`longListItem`.`id` IN (:...ql_0))");
      assert.equal(statement("id", "Number", "In", [1, 2, 3]).where, " WHERE (`longListItem`.`id` IN (?, ?, ?))");
      for (const c of cases) {
        for (const operator of c.operators) {
          const list = c.list();
          const short = builderText(c.field, c.dataType, operator, list.slice(0, 3));
          const long = builderText(c.field, c.dataType, operator, list.slice(0, 3_000));
          assert.equal(long, short, `${c.dataType} ${operator} on ${c.field}`);
        }
      }
      assert.equal(statement("id", "Number", "In", idList().slice(0, 3_000)).parameters.length, 3_000);
    });
    return;
  }

  it("the SQL text of a list does not depend on its length (3 and 3,000 values): one parameter", () => {
    const pinned = target === "sqlite"
      ? [' WHERE ("longListItem"."id" IN (SELECT value FROM json_each(?)))', ' WHERE ("longListItem"."id" NOT IN (SELECT value FROM json_each(?)))']
      : [' WHERE ("longListItem"."id" = ANY (CAST($1 AS integer[])))', ' WHERE ("longListItem"."id" <> ALL (CAST($1 AS integer[])))'];
    assert.deepEqual(["In", "NotIn"].map((operator) => statement("id", "Number", operator, [1, 2, 3]).where), pinned);
    for (const c of cases) {
      for (const operator of c.operators) {
        const list = c.list();
        const short = statement(c.field, c.dataType, operator, list.slice(0, 3));
        const long = statement(c.field, c.dataType, operator, list.slice(0, 3_000));
        assert.equal(long.where, short.where, `${c.dataType} ${operator} on ${c.field}`);
        assert.equal(long.parameters.length, 1);
        assert.equal(short.parameters.length, 1);
      }
    }
  });
});
