// A cursor page's seek predicate (issue #44): the rows strictly after (or before) the cursor's row
// in the page's order, written so an index on the sort keys can serve it instead of an OFFSET.
//
// Each key sorts NULL as its smallest value (nulls first ascending, last descending: the order
// compile-filter.ts writes and every target keeps), so "later in the order" is, per key, a
// larger value (ascending forward, descending backward) or a smaller one, NULL included:
//   larger than v:  v NULL → k IS NOT NULL;  else k > v
//   smaller than v: v NULL → nothing;        else k < v (OR k IS NULL where k can be NULL)
//   equal to v:     v NULL → k IS NULL;      else k = v
// and the whole is the lexicographic chain  later₁ OR (eq₁ AND later₂) OR …  with the primary
// key last (plan/seek.ts), so exactly the rows after the position qualify, whatever rows were
// added or removed since. Two forms a planner serves better, both implied by the chain:
// - every key in one direction, none nullable, no NULL value, on a family that compares row
//   values by index (PostgreSQL, SQLite): the row value comparison (k₁, k₂, …) > (v₁, v₂, …);
// - otherwise the first key's bound (k₁ >= v₁, or k₁ <= v₁ where k₁ is not nullable) ANDed in
//   front of the chain, which any family turns into an index range.
import type { OrderKey, Seek } from "../plan/nodes.js";
import { nullableKey } from "../plan/seek.js";
import { Direction } from "../shapes/enums.js";
import { type Scope, columnMetadataOf } from "./sql-writer.js";

/** The key as the seek compares it: the column as ORDER BY sorts it (an enum by its text). */
export function seekExpression(scope: Scope, key: OrderKey): string {
  if (key.value.kind !== "column") throw new Error("internal: a reduced order in a seek"); // refused by plan/seek.ts
  const { hops, column } = key.value;
  const expr = scope.writer.column(scope.aliasAt(hops), columnMetadataOf(column));
  return column.fieldKind === "enum" ? scope.writer.dialect.enumText(expr) : expr;
}

/**
 * The key as a cursor keeps it: the value ORDER BY compares, exactly. Dates and instants as the
 * database's own text where its driver would round them to a JS Date's milliseconds (PostgreSQL's
 * and MariaDB's microseconds): a cursor rounded down would find its own row after itself.
 */
export function cursorValueExpression(scope: Scope, key: OrderKey): string {
  const expr = seekExpression(scope, key);
  const kind = key.value.column.fieldKind;
  return kind === "datetime" || kind === "date" ? scope.writer.dialect.instantText(expr) : expr;
}

export function seekPredicate(scope: Scope, keys: readonly OrderKey[], seek: Seek): string | null {
  const { values } = seek;
  if (!values) return null;
  const writer = scope.writer;
  const exprs = keys.map((k) => seekExpression(scope, k));
  // Per key: does "later in the page's walk" mean a larger value?
  const larger = keys.map((k) => (k.direction === Direction.Ascending) === seek.forward);
  const uniform = larger.every((l) => l === larger[0]);
  if (uniform && writer.dialect.rowValueSeek && keys.every((k, i) => !nullableKey(k) && values[i] !== null)) {
    const params = values.map((v) => writer.param(v));
    return `(${exprs.join(", ")}) ${larger[0] ? ">" : "<"} (${params.join(", ")})`;
  }
  const later = (i: number): string | null => {
    const v = values[i];
    if (larger[i]) return v === null ? `${exprs[i]} IS NOT NULL` : `${exprs[i]} > ${writer.param(v)}`;
    if (v === null) return null;
    return nullableKey(keys[i]!) ? `(${exprs[i]} < ${writer.param(v)} OR ${exprs[i]} IS NULL)` : `${exprs[i]} < ${writer.param(v)}`;
  };
  const equal = (i: number) => (values[i] === null ? `${exprs[i]} IS NULL` : `${exprs[i]} = ${writer.param(values[i])}`);
  const branches: string[] = [];
  for (let i = 0; i < keys.length; i++) {
    const step = later(i);
    if (step === null) continue;
    const prefix = keys.slice(0, i).map((_, j) => equal(j));
    branches.push(prefix.length === 0 ? step : `(${[...prefix, step].join(" AND ")})`);
  }
  if (branches.length === 0) return "1 = 0"; // after the last possible position: no row
  const chain = branches.length === 1 ? branches[0]! : `(${branches.join(" OR ")})`;
  const first = values[0];
  if (first === null || first === undefined) return chain;
  if (larger[0]) return `${exprs[0]} >= ${writer.param(first)} AND ${chain}`;
  return nullableKey(keys[0]!) ? chain : `${exprs[0]} <= ${writer.param(first)} AND ${chain}`;
}
