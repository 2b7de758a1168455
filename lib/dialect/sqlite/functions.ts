// SQLite has no Unicode-aware lower(); QueryLib registers deterministic functions on the
// better-sqlite3 connection the first time it queries a DataSource.
import type { DataSource } from "typeorm";
import { foldCase } from "../fold-case.js";
import type { PatternKind } from "../sql-dialect.js";

/** ql_ci_match's mode per kind of pattern test, and what it tests on folded text (a new kind fails to compile here). */
export const ciMatchModes: Readonly<Record<PatternKind, { readonly mode: number; readonly test: (folded: string, needle: string) => boolean }>> = {
  contains: { mode: 0, test: (folded, needle) => folded.includes(needle) },
  startsWith: { mode: 1, test: (folded, needle) => folded.startsWith(needle) },
  endsWith: { mode: 2, test: (folded, needle) => folded.endsWith(needle) },
};
const testOfMode = new Map(Object.values(ciMatchModes).map(({ mode, test }) => [mode, test]));

const registered = new WeakSet<object>();

export function registerSqliteFunctions(dataSource: DataSource): void {
  const connection = (dataSource.driver as { databaseConnection?: { function?: Function } }).databaseConnection;
  if (!connection || registered.has(connection) || typeof connection.function !== "function") return;
  connection.function.call(connection, "ql_lower", { deterministic: true }, (value: unknown) =>
    typeof value === "string" ? foldCase(value) : value,
  );
  // One call per row for IContains/IStartsWith/IEndsWith (ciMatchModes): the needle arrives folded.
  connection.function.call(connection, "ql_ci_match", { deterministic: true }, (value: unknown, needle: unknown, mode: unknown) => {
    if (typeof value !== "string" || typeof needle !== "string") return null;
    const test = testOfMode.get(mode as number);
    if (!test) return null;
    return test(foldCase(value), needle) ? 1 : 0;
  });
  registered.add(connection);
}
