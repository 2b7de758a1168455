// SQLite (better-sqlite3, sql.js and the mobile drivers): one connection, no boolean or date
// types, an ASCII-only lower() replaced by a registered one.
import { type SqlDialect, sqlDirection } from "../sql-dialect.js";
import { registerSqliteFunctions } from "./functions.js";

const doubleQuote = (id: string) => (id.includes('"') ? `"${id.replaceAll('"', '""')}"` : `"${id}"`);

export const sqlite: SqlDialect = {
  name: "sqlite",
  quote: doubleQuote,
  placeholder: () => "?",
  // SQLite's lower() is ASCII-only; ql_lower is registered on the connection (see functions.ts).
  lower: (e) => `ql_lower(${e})`,
  exact: (e) => e,
  calendarDate: (e) => `substr(${e}, 1, 10)`,
  orderTerm: (e, d) => `${e} ${sqlDirection(d)}`,
  position: (h, n) => `instr(${h}, ${n})`,
  length: (e) => `length(${e})`,
  enumText: (e) => e,
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
  notifications: false,
  prepare: registerSqliteFunctions,
};

/** TypeORM's driver types of the SQLite family. */
export const sqliteDrivers = ["sqlite", "better-sqlite3", "sqljs", "capacitor", "cordova", "expo", "nativescript", "react-native"] as const;
