// Reading and comparing values of in-memory entities exactly as the databases do: nulls never
// match, text compares by code point, numbers, dates and booleans by value.
import type { ColumnMember } from "../model/entity-model.js";

export type Row = Record<string, unknown>;

export function readColumn(row: Row | null, column: ColumnMember): unknown {
  if (row === null) return null;
  let at: unknown = row;
  for (const part of column.propertyPath.split(".")) {
    if (at === null || at === undefined) return null;
    at = (at as Row)[part];
  }
  return at === undefined ? null : at;
}

/** The comparable form of a stored value for its column kind. */
export function normalize(value: unknown, column: ColumnMember): unknown {
  if (value === null || value === undefined) return null;
  switch (column.fieldKind) {
    case "number":
      return typeof value === "number" ? value : Number(value);
    case "boolean":
      return value === true || value === 1 || value === "1" || value === "true";
    case "datetime":
      return value instanceof Date ? value : new Date(typeof value === "string" && !/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? `${value.replace(" ", "T")}Z` : (value as string));
    default:
      return value;
  }
}

export function calendarDate(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10);
}

/** Code-point order: what SQLite's BINARY and PostgreSQL's C collations give. */
export function compareText(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

export type TextComparer = (a: string, b: string) => number;

/** Total order on non-null comparable values. */
export function compareValues(a: unknown, b: unknown, text: TextComparer = compareText): number {
  if (a instanceof Date && b instanceof Date) return Math.sign(a.getTime() - b.getTime());
  if (typeof a === "string" && typeof b === "string") return text(a, b);
  if (typeof a === "boolean" && typeof b === "boolean") return a === b ? 0 : a ? 1 : -1;
  return a === b ? 0 : (a as number) < (b as number) ? -1 : 1;
}

/** Nulls first ascending and last descending, as on every database. */
export function compareNullable(a: unknown, b: unknown, descending: boolean, text?: TextComparer): number {
  if (a === null && b === null) return 0;
  if (a === null) return descending ? 1 : -1;
  if (b === null) return descending ? -1 : 1;
  const order = compareValues(a, b, text);
  return descending ? -order : order;
}
