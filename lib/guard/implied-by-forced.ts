// A caller's comparison that the forced predicates already make true is left out of the plan. With
// `tier = 'Gold'` forced, a caller's `tier IN ('Silver', 'Gold')` holds on every row the query can
// return, and a database still tests it row by row: on SQLite a list is bound as JSON
// (`IN (SELECT value FROM json_each(?))`), about 25 ns per row scanned, so issue #24's W2 spent
// 779 against 644 µs on its page and COUNT (bench/out probe, 10,000 customers).
//
// Only a comparison that is true on every row the forced Equal lets through is removed, never one
// that would be false (that one stays for the database to decide), so the rows are the same:
// - the forced comparison is Equal on a column of the root itself, to one value that is a string,
//   number or boolean (Text, Enum, Number, Boolean): each returned row holds that value;
// - the caller's comparison is Equal or In on the same column, with a DataType that compiles the
//   same way (Text and Enum are one: every target tests both as text), and lists that very value
//   (===). Equal and In compile to the same equality of the column on every target, and an
//   equality holds between a value and itself; nothing else is assumed of it (not case,
//   collation or padding: `'gold'` or `'Gold '` against `'Gold'` is not ===, so it stays);
// - comparisons inside an any-match (EXISTS) are another scope's columns and are never touched.
// The forced predicates themselves are never changed or removed.
import { DataType, Operator } from "../shapes/enums.js";
import type { ColumnMember } from "../model/entity-model.js";
import type { Comparison, Predicate } from "../plan/nodes.js";

/** DataTypes whose tests of a column compile alike (compileTest, and the in-memory test). */
const families: Readonly<Partial<Record<DataType, string>>> = {
  [DataType.Text]: "text",
  [DataType.Enum]: "text",
  [DataType.Number]: "number",
  [DataType.Boolean]: "boolean",
};

type Pin = { readonly family: string; readonly value: string | number | boolean };

/** The forced Equal comparisons on the root's own columns, each the one value its column holds on every returned row. */
function pinsOf(forced: readonly Predicate[]): Map<ColumnMember, Pin[]> {
  const pins = new Map<ColumnMember, Pin[]>();
  for (const p of forced) {
    if (p.kind !== "compare" || p.operator !== Operator.Equal || p.left.hops.length !== 0 || p.values.length !== 1) continue;
    const family = families[p.dataType];
    const value = p.values[0];
    if (!family || (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean")) continue;
    const list = pins.get(p.left.column) ?? [];
    list.push({ family, value });
    pins.set(p.left.column, list);
  }
  return pins;
}

function isImplied(c: Comparison, pins: ReadonlyMap<ColumnMember, readonly Pin[]>): boolean {
  if ((c.operator !== Operator.Equal && c.operator !== Operator.In) || c.left.hops.length !== 0) return false;
  const columnPins = pins.get(c.left.column);
  return columnPins !== undefined && columnPins.some((pin) => pin.family === families[c.dataType] && c.values.some((v) => v === pin.value));
}

/** The predicate without what the pins make true; `true` when nothing is left to test. */
function fold(p: Predicate, pins: ReadonlyMap<ColumnMember, readonly Pin[]>): Predicate | true {
  switch (p.kind) {
    case "compare":
      return isImplied(p, pins) ? true : p;
    case "exists":
      return p;
    case "and": {
      const items: Predicate[] = [];
      for (const item of p.items) {
        const folded = fold(item, pins);
        if (folded !== true) items.push(folded);
      }
      if (items.length === 0) return true;
      if (items.length === p.items.length && items.every((item, i) => item === p.items[i])) return p;
      return items.length === 1 ? items[0]! : { kind: "and", items };
    }
    case "or": {
      const items: Predicate[] = [];
      for (const item of p.items) {
        const folded = fold(item, pins);
        if (folded === true) return true;
        items.push(folded);
      }
      return items.every((item, i) => item === p.items[i]) ? p : { kind: "or", items };
    }
  }
}

/**
 * What removes from a caller's predicate the comparisons the forced predicates make true (null:
 * nothing left to test); the pins are read once, for the Filter's predicate or every Segment set.
 */
export function withoutImpliedBy(forced: readonly Predicate[]): (caller: Predicate | null) => Predicate | null {
  const pins = pinsOf(forced);
  if (pins.size === 0) return (caller) => caller;
  return (caller) => {
    if (!caller) return null;
    const folded = fold(caller, pins);
    return folded === true ? null : folded;
  };
}
