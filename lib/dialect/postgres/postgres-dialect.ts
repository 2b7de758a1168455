// PostgreSQL and the servers that speak its SQL (CockroachDB, Aurora PostgreSQL).
import { type SqlDialect, sqlDirection } from "../sql-dialect.js";
import { Direction } from "../../shapes/enums.js";

export const postgres: SqlDialect = {
  name: "postgres",
  quote: (id) => (id.includes('"') ? `"${id.replaceAll('"', '""')}"` : `"${id}"`),
  placeholder: (p) => `$${p}`,
  lower: (e) => `replace(lower(${e}), 'ς', 'σ')`,
  exact: (e) => e,
  calendarDate: (e) => `CAST(${e} AS date)`,
  orderTerm: (e, d) => `${e} ${sqlDirection(d)} ${d === Direction.Descending ? "NULLS LAST" : "NULLS FIRST"}`,
  position: (h, n) => `strpos(${h}, ${n})`,
  length: (e) => `char_length(${e})`,
  enumText: (e) => `CAST(${e} AS text)`,
  statement: (sql) => sql,
  driverValue: (value) => value,
  inlinesNumberParameters: false,
  pooled: true,
  upsertReturning: true,
  notifications: true,
  prepare: () => undefined,
};

/** PostgreSQL's SQL on a server without LISTEN/NOTIFY support QueryLib relies on (CockroachDB, Aurora). */
export const postgresCompatible: SqlDialect = { ...postgres, notifications: false };
