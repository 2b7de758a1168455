// MySQL and MariaDB: one SQL with per-server differences (collations for lower-casing, MariaDB's
// per-statement optimizer setting), chosen from the server's version when TypeORM connects.
import type { DataSource } from "typeorm";
import { type ListSite, type PatternKind, type PatternSite, type SqlDialect, sharedSql, sqlDirection } from "../sql-dialect.js";
import { foldCase } from "../fold-case.js";
import { comparesExactlyAsEnum, learnNativeEnums } from "./native-enums.js";
import { readMysqlRows } from "./read-rows.js";
import { mysqlDdl } from "./ddl.js";

/**
 * `lower()` of the MySQL family, through a Unicode collation's case tables: LOWER under the
 * default utf8mb4_general_ci leaves 792 upper-case letters as they are (ẞ, Ƞ, Ⱥ, …; found by the
 * fuzzer, issue #18), where PostgreSQL, SQLite's ql_lower and the in-memory target lower them.
 * uca1400 (MariaDB 10.10+) lowers exactly as PostgreSQL 15 on glibc does (every code point to
 * U+1FFFF checked); MySQL 8's 0900 collations are Unicode 9, older servers' unicode_520 Unicode 5.2.
 * CONVERT makes it valid for a column of any character set.
 */
const mysqlLower = (collation: string) => (e: string) => `REPLACE(${caseTablesLower(collation)(e)}, 'ς', 'σ')`;
const caseTablesLower = (collation: string) => (e: string) => `LOWER(CONVERT(${e} USING utf8mb4) COLLATE ${collation})`;

/**
 * Whether a pattern's needle holds a sigma in any form. Without one, the final-sigma step
 * (ς → σ) decides nothing for it: the text's ς and σ then match none of the needle's characters
 * either way (UTF-8 matches whole characters), so the pattern tests lower the text without the
 * REPLACE per row (W2's COUNT over 10,000 rows: 1,945 → 1,826 µs; issue #24).
 */
const hasSigma = (needle: string) => /[σςΣ]/u.test(needle);

const exact = (e: string) => `CAST(${e} AS BINARY)`;

/** An instant's driver value (a Date, or TypeORM's text of one) that has no fraction of a second. */
const wholeSecond = (value: unknown): boolean =>
  value instanceof Date ? value.getUTCMilliseconds() === 0 : typeof value === "string" && /^[^.]*(\.0*)?$/.test(value);

/**
 * `IN (:...list)`, the list as ONE spread parameter (TypeORM's form): the text QueryLib caches is
 * the same for any length, and the finished statement has a placeholder per value, which the
 * mysql2 driver interpolates client-side (no server placeholder limit). JSON_TABLE was measured
 * slower (2–17× on 1,000–100,000 values) and compares text in the JSON_TABLE column's collation
 * ("Illegal mix of collations" against a column of another one). A named parameter per value cost
 * 1.3 s to compile for 100,000 values (TypeORM's per-name checks and copies), the spread list 0.1 s.
 */
const valueList = ({ left, negated, values, bind }: ListSite) => `${left} ${negated ? "NOT IN" : "IN"} (${bind.spread(values)})`;

/**
 * Text lists compare as bytes (the default collations ignore case, accents and trailing spaces).
 * A binary left side makes the comparison binary against plain string values, so the list stays
 * one spread parameter; `In` keeps a plain `IN` beside it, which an index can narrow. `IIn` folds
 * the list here, as SQLite's does: the server's lower() agrees with foldCase on every letter it
 * knows (see mysqlLower), and a lower() per value in SQL made the text grow with the list again.
 */
const textList = (lower: (e: string) => string) => ({ left, negated, values, bind }: ListSite, insensitive: boolean): string => {
  const not = negated ? "NOT " : "";
  if (insensitive) return `${exact(lower(left))} ${not}IN (${bind.spread(values.map((v) => (typeof v === "string" ? foldCase(v) : v)))})`;
  const list = bind.spread(values);
  const test = `${exact(left)} ${not}IN (${list})`;
  return negated ? test : `(${left} IN (${list}) AND ${test})`;
};

/**
 * IStartsWith and IEndsWith (and their negations) lower only the text's first or last
 * CHAR_LENGTH(needle) characters, and compare them with the lowered needle as bytes, instead of
 * lowering the whole text for a LIKE. The same answer: the server lowers one character to one
 * (test/engine/case-folding.test.ts checks every code point to U+1FFFF), so the lowered text starts
 * with the lowered needle exactly when the lowered first characters equal it; NULL text stays
 * NULL, negated too. Why: each lowering goes through the uca1400 collation once per condition per
 * row, and a filter UI's OR of ten name prefixes cost 8.2 ms over 10,000 rows this way against
 * 4.0 ms for the prefix only (issue #24, W7). Contains has no such cut and keeps the LIKE.
 */
/** The part of the text each kind compares with the needle; null: the whole text, with LIKE (a new kind fails to compile here). */
const patternPart: Readonly<Record<PatternKind, "LEFT" | "RIGHT" | null>> = { contains: null, startsWith: "LEFT", endsWith: "RIGHT" };

const textPatternOf = (collation: string) => ({ expr, kind, needle, pattern, insensitive, negated, bind }: PatternSite): string | null => {
  if (!insensitive) return null;
  const lower = hasSigma(needle) ? mysqlLower(collation) : caseTablesLower(collation);
  const side = patternPart[kind];
  if (side === null) return `${negated ? "NOT " : ""}${exact(lower(expr))} LIKE ${exact(lower(bind.param(pattern)))} ESCAPE '!'`;
  const needleParam = bind.param(needle);
  const part = `${side}(${expr}, CHAR_LENGTH(${needleParam}))`;
  return `${exact(lower(part))} ${negated ? "<>" : "="} ${exact(lower(bind.param(needle)))}`;
};

const mysqlFamily = (collation: string): SqlDialect => ({
  ...sharedSql,
  name: "mysql",
  dbSystem: "mysql",
  quote: (id) => `\`${id.replaceAll("`", "``")}\``,
  placeholder: () => "?",
  lower: mysqlLower(collation),
  // The default collations are case- and accent-insensitive and pad spaces: compare bytes.
  exact,
  calendarDate: (e) => `DATE(${e})`,
  // MariaDB/MySQL already put nulls first ascending and last descending.
  orderTerm: (e, d) => `${e} ${sqlDirection(d)}`,
  position: (h, n) => `LOCATE(CAST(${n} AS BINARY), CAST(${h} AS BINARY))`,
  length: (e) => `CHAR_LENGTH(${e})`,
  enumText: (e) => `CAST(${e} AS CHAR)`,
  instantText: (e) => `CAST(${e} AS CHAR)`,
  rowValueSeek: false,
  plannerEstimate: {
    // After a statement prefix (SET STATEMENT … FOR), whose setting the estimate should see too.
    explain: (sql) => {
      const at = sql.startsWith("SET STATEMENT ") ? sql.indexOf(" FOR ") + 5 : 0;
      return `${sql.slice(0, at)}EXPLAIN ${sql.slice(at)}`;
    },
    // The outer query's tables (id 1): each reads `rows`, of which `filtered` % pass; a join multiplies them.
    rows: (result) => {
      const outer = result.filter((r) => Number(r.id) === 1);
      if (outer.length === 0) return null;
      const rows = outer.reduce((product, r) => product * Number(r.rows ?? 0) * (r.filtered === null || r.filtered === undefined ? 1 : Number(r.filtered) / 100), 1);
      return Number.isFinite(rows) ? Math.round(rows) : null;
    },
  },
  // `tier = 'Gold'` on the ENUM column itself, so its index serves it (CAST(tier AS CHAR) is
  // opaque to the optimizer: a tenant predicate on an enum scanned every row, issue #24). Only
  // the enum's own labels take this path. compileText keeps the byte test beside it, as for any
  // text on a lenient collation (the database's column may not be the ENUM the entity says, and a
  // lenient sql_mode lets two labels equal under the collation stand), unless the server said
  // otherwise for this column and these labels (exactOnColumn, native-enums.ts).
  enumEqualityOnColumn: true,
  exactOnColumn: comparesExactlyAsEnum,
  statement: (sql) => sql,
  driverValue: (value) => value,
  inlinesNumberParameters: false,
  pooled: true,
  upsertReturning: false,
  changeChannel: null,
  ddl: mysqlDdl,
  prepare: () => undefined,
  learnSchema: learnNativeEnums,
  readRows: readMysqlRows,
  lenientCollation: true,
  textOfExact: (e) => `CONVERT(${e} USING utf8mb4)`,
  // A double (MySQL would round a decimal average to 4 places).
  average: (e) => `AVG(CAST(${e} AS DOUBLE))`,
  decimal: (e) => `CAST(${e} AS DECIMAL(65,30))`,
  // MariaDB reads an instant's text at the column's precision when it looks a joined row up
  // (`customer.createdAt = '…17.500'` matched a DATETIME(0) 17:00 through a reference, and not
  // on the root); typed as DATETIME(6) the constant keeps its fraction (issue #18, fuzzer). A whole
  // second has no fraction to lose and is typed DATETIME: against a DATETIME(0) column it compared
  // 2 % faster (W1's COUNT, 1,470 against 1,500 µs; issue #24).
  instantParameter: (p, value) => `CAST(${p} AS ${wholeSecond(value) ? "DATETIME" : "DATETIME(6)"})`,
  valueList,
  textList: textList(mysqlLower(collation)),
  textPattern: textPatternOf(collation),
});

/** MySQL 8 (and a MySQL server whose version is not known yet). */
export const mysql: SqlDialect = mysqlFamily("utf8mb4_0900_ai_ci");
/** MySQL before 8. */
const mysql57: SqlDialect = mysqlFamily("utf8mb4_unicode_520_ci");

/**
 * MariaDB: MySQL's SQL, with its EXISTS-to-IN rewrite switched off for statements that hold an
 * EXISTS. The rewrite turns a collection's correlated EXISTS into a semi-join that the optimizer
 * may flatten into the outer join order: for `order.items.product.id NotIn …` with
 * `order.customer.orders.id < …` on OrderItem it chose a block-nested-loop over every product
 * per customer order, 1.9 s, against 63 ms for the per-row foreign-key lookups an EXISTS means
 * (found by the fuzzer, issue #18). `SET STATEMENT … FOR` scopes the setting to the one statement.
 * A COUNT whose EXISTS each read one table, with no JOIN anywhere, keeps the rewrite: it reads
 * every row, so the per-row lookups cannot stop early as a page's do, and they cost 3–6× the
 * semi-join (W3's COUNT over 10,000 customers 29 ms against 10 ms; NOT EXISTS 38 against 6, issue
 * #24), while with one table per subquery there is no join order to get wrong: a semi-join's
 * strategies include FirstMatch, which is the per-row lookup itself.
 */
const mariadbStatementPrefix = "SET STATEMENT optimizer_switch='exists_to_in=off' FOR ";
const mariadbFamily = (collation: string): SqlDialect => ({
  ...mysqlFamily(collation),
  statement: (sql, facts) => (!sql.includes("EXISTS (") || (facts?.counts && facts.singleTableExists) ? sql : mariadbStatementPrefix + sql),
});
/** MariaDB 10.10 and later (and a MariaDB server whose version is not known yet). */
export const mariadb: SqlDialect = mariadbFamily("utf8mb4_uca1400_ai_ci");
/** MariaDB before 10.10, which has no uca1400 collations. */
const mariadb105: SqlDialect = mariadbFamily("utf8mb4_unicode_520_ci");

/** "10.11.19-MariaDB-0+deb12u1" → [10, 11]. */
const versionOf = (text: string): [number, number] => {
  const [major = 0, minor = 0] = (/^(\d+)\.(\d+)/.exec(text) ?? []).slice(1).map(Number);
  return [major, minor];
};
const atLeast = ([major, minor]: [number, number], wantMajor: number, wantMinor: number) =>
  major > wantMajor || (major === wantMajor && minor >= wantMinor);

/**
 * The MySQL-family dialect of the server itself, from the version TypeORM reads when it connects
 * (`driver.version`, digits only): a "mysql" DataSource may reach a MariaDB server, and the two
 * differ in per-statement settings and collations. MariaDB's versions start at 10 (its 5.x
 * releases predate both), MySQL's run 5.x, 8.x, 9.x.
 */
export function mysqlFamilyOf(dataSource: DataSource): SqlDialect {
  const serverVersion = (dataSource.driver as { version?: string } | undefined)?.version;
  if (!serverVersion) return dataSource.options.type === "mariadb" ? mariadb : mysql;
  const version = versionOf(serverVersion);
  if (dataSource.options.type === "mariadb" || version[0] >= 10) return atLeast(version, 10, 10) ? mariadb : mariadb105;
  return atLeast(version, 8, 0) ? mysql : mysql57;
}
