// Predicate evaluation on in-memory rows, mirroring the SQL compilers: the same operators,
// the same null guard, collections as any-match.
import { DataType, Operator as Op } from "../shapes/enums.js";
import type { ColumnMember } from "../model/entity-model.js";
import type { Predicate, Test } from "../plan/nodes.js";
import { type OrderedTest, type TextTest, operators, orderedTest, textTest } from "../shapes/operator-table.js";
import { type Row, calendarDate, normalize, readColumn } from "./values.js";
import type { Hop } from "../resolve/resolved-path.js";
import { foldCase } from "../dialect/fold-case.js";

export function matches(row: Row, predicate: Predicate): boolean {
  switch (predicate.kind) {
    case "and":
      return predicate.items.every((p) => matches(row, p));
    case "or":
      return predicate.items.some((p) => matches(row, p));
    case "exists": {
      const owner = follow(row, predicate.hops);
      if (owner === null) return false;
      // Only the elements the collection's scope lets through (Hop.scope): the EXISTS' WHERE.
      return elementsOf(owner[predicate.collection.member.name], predicate.collection).some((element) => matches(element, predicate.predicate));
    }
    case "compare":
      return test(readColumn(follow(row, predicate.left.hops), predicate.left.column), predicate.left.column, predicate);
  }
}

/** Follows reference hops; a missing reference, or one outside the hop's scope, yields null (a LEFT JOIN's null row). */
export function follow(row: Row | null, hops: readonly Hop[]): Row | null {
  let at: Row | null = row;
  for (const hop of hops) {
    if (at === null) return null;
    at = reached(at[hop.member.name], hop);
  }
  return at;
}

/** The row a reference hop reaches, or null: none, or one the hop's scope (Hop.scope, its target's forced predicates) excludes. */
export function reached(value: unknown, hop: Hop): Row | null {
  if (value === null || value === undefined) return null;
  return inScope(value as Row, hop) ? (value as Row) : null;
}

/** The elements of a collection hop that its scope lets through (all of them without one). */
export function elementsOf(value: unknown, hop: Hop): Row[] {
  if (!Array.isArray(value)) return [];
  return hop.scope && hop.scope.length > 0 ? (value as Row[]).filter((element) => element !== null && element !== undefined && inScope(element, hop)) : (value as Row[]);
}

/** Whether a row reached through `hop` satisfies the forced predicates of its entity (decisions/tenant-navigation.ts). */
export function inScope(row: Row, hop: Hop): boolean {
  return !hop.scope || hop.scope.every((p) => matches(row, p));
}

/** One value against a test; shared with Having. */
export function test(raw: unknown, column: ColumnMember, t: Test): boolean {
  if (t.operator === Op.IsNull) return raw === null || raw === undefined;
  if (t.operator === Op.IsNotNull) return raw !== null && raw !== undefined;
  if (raw === null || raw === undefined) return false;
  switch (t.dataType) {
    case DataType.Text:
    case DataType.Enum:
      return testText(String(raw), t);
    case DataType.Guid:
      return testOrdered(String(raw).toLowerCase(), t.operator, t.values, t);
    case DataType.DateTime:
    case DataType.Date: {
      const calendar = t.dataType === DataType.Date || column.fieldKind === "date";
      if (calendar) return testOrdered(calendarDate(normalize(raw, column)), t.operator, t.values.map(calendarDate));
      return testOrdered((normalize(raw, column) as Date).getTime(), t.operator, t.values.map((v) => (v as Date).getTime()));
    }
    default:
      return testOrdered(normalize(raw, column), t.operator, t.values, t);
  }
}

/**
 * The values of an In / NotIn test as a Set, made once per test (a list may hold 100,000 values
 * and is read once per row); `fold` maps each value first (case folding of IIn / INotIn).
 * Set membership is SameValueZero, as Array.includes was.
 */
const valueSets = new WeakMap<Test, ReadonlySet<unknown>>();
function valueSet(t: Test, fold?: (value: string) => string): ReadonlySet<unknown> {
  let set = valueSets.get(t);
  if (!set) valueSets.set(t, (set = new Set(fold ? (t.values as string[]).map(fold) : t.values)));
  return set;
}

function testOrdered(value: unknown, op: Op, values: readonly unknown[], t?: Test): boolean {
  const { negated } = operators[op];
  return orderedTests[orderedTest(op)](value as number, values as number[], t) !== negated;
}

const orderedTests: Readonly<Record<OrderedTest, (v: number, values: readonly number[], t: Test | undefined) => boolean>> = {
  equal: (v, [a]) => v === a,
  greaterThan: (v, [a]) => v > a!,
  greaterThanOrEqual: (v, [a]) => v >= a!,
  lessThan: (v, [a]) => v < a!,
  lessThanOrEqual: (v, [a]) => v <= a!,
  between: (v, [a, b]) => v >= a! && v <= b!,
  in: (v, values, t) => (t ? valueSet(t).has(v) : values.includes(v)),
};

function testText(value: string, t: Test): boolean {
  const { negated, caseInsensitive } = operators[t.operator];
  const fold = (s: string) => (caseInsensitive ? foldCase(s) : s);
  return textTests[textTest(t.operator)](fold(value), t, fold) !== negated;
}

const textTests: Readonly<Record<TextTest, (field: string, t: Test, fold: (s: string) => string) => boolean>> = {
  in: (field, t, fold) => valueSet(t, fold).has(field),
  equal: (field, t, fold) => field === fold((t.values as string[])[0]!),
  contains: (field, t, fold) => field.includes(fold((t.values as string[])[0]!)),
  startsWith: (field, t, fold) => field.startsWith(fold((t.values as string[])[0]!)),
  endsWith: (field, t, fold) => field.endsWith(fold((t.values as string[])[0]!)),
};
