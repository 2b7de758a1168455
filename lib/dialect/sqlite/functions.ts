// SQLite has no Unicode-aware lower(); QueryLib registers deterministic functions on the
// better-sqlite3 connection the first time it queries a DataSource.
import type { DataSource } from "typeorm";
import { foldCase } from "../fold-case.js";

const registered = new WeakSet<object>();

export function registerSqliteFunctions(dataSource: DataSource): void {
  const connection = (dataSource.driver as { databaseConnection?: { function?: Function } }).databaseConnection;
  if (!connection || registered.has(connection) || typeof connection.function !== "function") return;
  connection.function.call(connection, "ql_lower", { deterministic: true }, (value: unknown) =>
    typeof value === "string" ? foldCase(value) : value,
  );
  // One call per row for IContains/IStartsWith/IEndsWith (mode 0/1/2): the needle arrives folded.
  connection.function.call(connection, "ql_ci_match", { deterministic: true }, (value: unknown, needle: unknown, mode: unknown) => {
    if (typeof value !== "string" || typeof needle !== "string") return null;
    const folded = foldCase(value);
    return (mode === 0 ? folded.includes(needle) : mode === 1 ? folded.startsWith(needle) : folded.endsWith(needle)) ? 1 : 0;
  });
  registered.add(connection);
}
