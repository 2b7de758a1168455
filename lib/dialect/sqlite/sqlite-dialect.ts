// SQLite (better-sqlite3, sql.js and the mobile drivers): one connection, no boolean or date
// types, an ASCII-only lower() and a LIKE that ignores ASCII case, both replaced here.
import { type ListSite, type PatternKind, type PatternSite, type SqlDialect, sharedSql, sqlDirection } from "../sql-dialect.js";
import { foldCase } from "../fold-case.js";
import { ciMatchModes, registerSqliteFunctions } from "./functions.js";
import { readSqliteRows } from "./read-rows.js";
import { sqliteDdl } from "./ddl.js";

const doubleQuote = (id: string) => (id.includes('"') ? `"${id.replaceAll('"', '""')}"` : `"${id}"`);
const lower = (e: string) => `ql_lower(${e})`;

/**
 * `IN (SELECT value FROM json_each(?))` over the list as JSON text: the SQL text is the same
 * whatever the list's length (one placeholder per value passes SQLite's variable limit). The
 * column's affinity applies to json_each's values exactly as to a list of placeholders (neither
 * side of a list has affinity of its own); JSON numbers are INTEGER or REAL as CAST(? AS NUMERIC)
 * gives them, and JSON strings decode to the same UTF-8 bytes a bound string has.
 */
function valueList(site: ListSite): string {
  return `${listLeft(site)} ${site.negated ? "NOT IN" : "IN"} (SELECT value FROM json_each(${site.bind.list(JSON.stringify(site.values))}))`;
}

/**
 * Inside a collection's EXISTS, SQLite used an IN list to drive its index lookups: one probe per
 * value per parent row (5,000 ids on `order.customer.orders.id` over 9,300 items: 1.4-2 s; found
 * by the fuzzer, issue #18) where the correlation's index finds a parent's few children at once.
 * A unary + keeps the list's test off the indexes (the list is then built once, 12 ms). It also
 * drops the column's affinity, so only where affinity changes nothing: whole numbers against an
 * integer column, text against a text column (both already stored in the list's own types).
 */
function listLeft({ left, values, correlatedColumn: column }: ListSite): string {
  if (!column) return left;
  const wholeNumbers = column.integer && values.every((v) => Number.isSafeInteger(v));
  // SQLite's TEXT affinity: a declared type naming CHAR, CLOB or TEXT.
  const texts = column.text && /char|clob|text/i.test(column.declaredType) && values.every((v) => typeof v === "string");
  return wholeNumbers || texts ? `+${left}` : left;
}

const isAscii = (text: string) => /^[\x00-\x7f]*$/.test(text);
/** ASCII without i and k: SQLite's LIKE matches such a needle exactly as foldCase does. */
const likeFoldsAsFoldCase = (needle: string) => isAscii(needle) && !/[ik]/i.test(needle);

/**
 * The exact (case-sensitive) test of each kind by position: instr/substr are exact where SQLite's
 * LIKE ignores ASCII case. `needle()` binds the needle once per call, in the order written.
 */
const exactPatternTests: Readonly<Record<PatternKind, (expr: string, needle: () => string) => string>> = {
  contains: (expr, needle) => `instr(${expr}, ${needle()}) > 0`,
  startsWith: (expr, needle) => `substr(${expr}, 1, length(${needle()})) = ${needle()}`,
  endsWith: (expr, needle) => `substr(${expr}, -length(${needle()})) = ${needle()}`,
};

function textPattern({ expr, kind, needle, pattern, insensitive, negated, bind }: PatternSite): string {
  const not = negated ? "NOT " : "";
  if (insensitive) {
    // SQLite's own LIKE ignores ASCII case only. For a needle of ASCII characters other than i and
    // k it decides exactly as folding does: no other character lower-cases to ASCII (İ → i and
    // the Kelvin sign → k are the only two), so the matcher's JavaScript call per row is not needed.
    if (likeFoldsAsFoldCase(needle)) return `${expr} ${not}LIKE ${bind.param(pattern)} ESCAPE '!'`;
    // A registered matcher: one JavaScript call per row instead of two lower() calls and a LIKE.
    // Each call hands JavaScript the needle anew, so text shorter than the needle (which cannot
    // hold it: folding keeps one character per character) is decided in SQL first: a needle of
    // 10,000 "é" on a collection path made 46,000 calls decode 20 KB each, 4.6 s (found by the fuzzer).
    const { mode } = ciMatchModes[kind];
    const matcher = `(length(${expr}) >= ${bind.param([...needle].length)} AND ql_ci_match(${expr}, ${bind.param(foldCase(needle))}, ${mode}) = 1)`;
    if (!isAscii(needle)) return `${not}${matcher}`;
    // An ASCII needle with i or k: every LIKE match is a match, and the only others are in text
    // holding İ or the Kelvin sign, so the matcher runs for those rows alone. Exact TRUE/FALSE on
    // text, NULL on NULL (the null guard holds, negated too).
    return `${not}(${expr} LIKE ${bind.param(pattern)} ESCAPE '!' OR ((instr(${expr}, '\u0130') > 0 OR instr(${expr}, '\u212A') > 0) AND ${matcher}))`;
  }
  // SQLite's LIKE ignores ASCII case: test positions instead (instr/substr are exact).
  const test = exactPatternTests[kind](expr, () => bind.param(needle));
  return negated ? `NOT (${test})` : test;
}

export const sqlite: SqlDialect = {
  ...sharedSql,
  name: "sqlite",
  dbSystem: "sqlite",
  quote: doubleQuote,
  placeholder: () => "?",
  // SQLite's lower() is ASCII-only; ql_lower is registered on the connection (see functions.ts).
  lower,
  exact: (e) => e,
  calendarDate: (e) => `substr(${e}, 1, 10)`,
  orderTerm: (e, d) => `${e} ${sqlDirection(d)}`,
  position: (h, n) => `instr(${h}, ${n})`,
  length: (e) => `length(${e})`,
  enumText: (e) => e,
  instantText: (e) => e,
  rowValueSeek: true,
  // SQLite keeps no row estimates unless ANALYZE ran, and its EXPLAIN QUERY PLAN shows none: a page counts exactly up to the cap, else not at all.
  plannerEstimate: null,
  statement: (sql) => sql,
  // Stored the way TypeORM stores them.
  driverValue: (value) => {
    if (typeof value === "boolean") return value ? 1 : 0;
    if (value instanceof Date) return value.toISOString().replace("T", " ").replace("Z", "");
    return value;
  },
  inlinesNumberParameters: true,
  pooled: false,
  upsertReturning: true,
  changeChannel: null,
  ddl: sqliteDdl,
  prepare: registerSqliteFunctions,
  learnSchema: null,
  readRows: readSqliteRows,
  // SQLite 3.51+ turns EXISTS into a join and then applies the outer OFFSET to the joined rows
  // (wrong pages); a LIMIT inside the subquery keeps it a subquery.
  existsSuffix: " LIMIT 1",
  average: (e) => `AVG(${e})`,
  // A number parameter is already CAST(… AS NUMERIC) here (SqlWriter.param).
  decimal: (e) => e,
  valueList,
  // ql_lower is foldCase: the list is folded here once instead of once per value in SQL.
  textList: (site, insensitive) => {
    if (!insensitive) return valueList(site);
    const folded = site.values.map((v) => (typeof v === "string" ? foldCase(v) : v));
    return valueList({ ...site, left: lower(site.left), values: folded, correlatedColumn: null });
  },
  textPattern,
};

/** TypeORM's driver types of the SQLite family. */
export const sqliteDrivers = ["sqlite", "better-sqlite3", "sqljs", "capacitor", "cordova", "expo", "nativescript", "react-native"] as const;
