// PostgreSQL and the servers that speak its SQL (CockroachDB, Aurora PostgreSQL). Parameters take
// their type from what they meet, so lists bind as arrays of the column's own type, and numbers
// that the column's type cannot hold are cast.
import { type ListSite, type SqlDialect, sharedSql, sqlDirection } from "../sql-dialect.js";
import { Direction } from "../../shapes/enums.js";
import { readPostgresRows } from "./read-rows.js";
import { postgresChangeChannel } from "./listen.js";
import { postgresDdl } from "./ddl.js";

const lower = (e: string) => `replace(lower(${e}), 'ς', 'σ')`;

/**
 * `= ANY` / `<> ALL` of ONE bound array cast to `arrayType` (the column's own type; null: typed
 * by the column, as a single `=` parameter is, e.g. an enum): the SQL text is the same for any
 * length (one placeholder per value passes the protocol's 65,535 bind parameters).
 */
function valueList({ left, negated, values, arrayType, foldElements, bind }: ListSite): string {
  const array = arrayType ? `CAST(${bind.list(values)} AS ${arrayType}[])` : bind.list(values);
  // Lowered elements as an IN subquery: PostgreSQL hashes it once per statement, where `= ANY` over
  // ARRAY(SELECT lower(v) …) compared every element with every row (a 5,000-value IIn inside a
  // collection's EXISTS: 3.8 s on 9,300 items; found by the fuzzer). A bound array itself is hashed.
  if (foldElements) return `${left} ${negated ? "NOT IN" : "IN"} (SELECT ${lower("v")} FROM unnest(${array}) AS v)`;
  return negated ? `${left} <> ALL (${array})` : `${left} = ANY (${array})`;
}

const integerRanges: Readonly<Record<string, { min: number; max: number }>> = {
  smallint: { min: -32_768, max: 32_767 },
  integer: { min: -2_147_483_648, max: 2_147_483_647 },
  // The doubles nearest ±2^63 inside the range (JavaScript numbers are doubles).
  bigint: { min: -(2 ** 63), max: 2 ** 63 - 1024 },
};

const isInt4 = (value: unknown) => Number.isInteger(value) && Math.abs(value as number) <= 2_147_483_647;

/** Text types whose `=` is text's: a `text[]` list compares exactly as a single parameter would (not char(n), citext…). */
const plainTextTypes: ReadonlySet<string> = new Set(["character varying", "varchar", "text"]);

export const postgres: SqlDialect = {
  ...sharedSql,
  name: "postgres",
  dbSystem: "postgresql",
  quote: (id) => (id.includes('"') ? `"${id.replaceAll('"', '""')}"` : `"${id}"`),
  placeholder: (p) => `$${p}`,
  lower,
  exact: (e) => e,
  calendarDate: (e) => `CAST(${e} AS date)`,
  orderTerm: (e, d) => `${e} ${sqlDirection(d)} ${d === Direction.Descending ? "NULLS LAST" : "NULLS FIRST"}`,
  position: (h, n) => `strpos(${h}, ${n})`,
  length: (e) => `char_length(${e})`,
  enumText: (e) => `CAST(${e} AS text)`,
  instantText: (e) => `CAST(${e} AS text)`,
  rowValueSeek: true,
  plannerEstimate: {
    explain: (sql) => `EXPLAIN (FORMAT JSON) ${sql}`,
    // One row, one column: the plan as JSON (parsed by the driver, or its text).
    rows: (result) => {
      const cell = result[0] ? Object.values(result[0])[0] : null;
      const plan = (typeof cell === "string" ? JSON.parse(cell) : cell) as { Plan?: { "Plan Rows"?: unknown } }[] | null;
      const rows = plan?.[0]?.Plan?.["Plan Rows"];
      return typeof rows === "number" && Number.isFinite(rows) ? Math.round(rows) : null;
    },
  },
  statement: (sql) => sql,
  driverValue: (value) => value,
  inlinesNumberParameters: false,
  pooled: true,
  upsertReturning: true,
  changeChannel: postgresChangeChannel,
  ddl: postgresDdl,
  prepare: () => undefined,
  learnSchema: null,
  readRows: readPostgresRows,
  explicitNullsOrder: true,
  // `enum_column = $1` types the parameter as the enum, so an index on the column serves it.
  enumEqualityOnColumn: true,
  uuidType: "uuid",
  average: (e) => `AVG(CAST(${e} AS double precision))`,
  decimal: (e) => `CAST(${e} AS numeric)`,
  // Cast to the column's own type: an int4 column's clamp stays int4 and SUM gives bigint, an int8's numeric (exact either way).
  integerBound: (type, lower, upper) => {
    const range = type === null ? undefined : integerRanges[type];
    if (!range || !Number.isSafeInteger(lower) || !Number.isSafeInteger(upper) || lower < range.min || upper > range.max) return null;
    return (placeholder) => `CAST(${placeholder} AS ${type})`;
  },
  // No MIN/MAX for boolean: the smallest is "all true", the largest "any true".
  booleanExtreme: (e, largest) => (largest ? `BOOL_OR(${e})` : `BOOL_AND(${e})`),
  // A fraction, or a whole number out of the 4-byte range, against an integer column needs a cast
  // (else a driver error). Aggregates may be bigint or numeric: a cast keeps fractions comparable.
  numberParameter: (placeholder, value, integerTarget) => (integerTarget && !isInt4(value) ? `CAST(${placeholder} AS numeric)` : placeholder),
  integerListType: (type) => {
    if (type === null) return null;
    const range = integerRanges[type];
    return range ? { type, ...range } : { type: "numeric", min: -Infinity, max: Infinity };
  },
  numberListType: (type) => {
    // An aggregate (no column) may be bigint or numeric: numeric keeps fractions comparable.
    if (type === null) return "numeric";
    // An integer column declared by its TypeScript type (`number`): numeric keeps fractions comparable.
    if (integerRanges[type]) return "numeric";
    // Any other type (money…) is typed by the column, as a single `=` parameter is.
    return type === "numeric" || type === "double precision" || type === "real" ? type : null;
  },
  plainTextType: (type) => plainTextTypes.has(type),
  valueList,
  textList: (site, insensitive) => (insensitive ? valueList({ ...site, left: lower(site.left), arrayType: "text", foldElements: true }) : valueList(site)),
};

/** PostgreSQL's SQL on a server without LISTEN/NOTIFY support QueryLib relies on (CockroachDB, Aurora). */
export const postgresCompatible: SqlDialect = { ...postgres, changeChannel: null };
