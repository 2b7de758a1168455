// Predicate evaluation on in-memory rows, mirroring the SQL compilers: the same operators,
// the same null guard, collections as any-match.
import { DataType, Operator as Op } from "../shapes/enums.js";
import type { ColumnMember } from "../model/entity-model.js";
import type { Predicate } from "../plan/nodes.js";
import { isCaseInsensitive } from "../plan/operator-rules.js";
import type { Test } from "../compile/compile-predicate.js";
import { type Row, calendarDate, follow, normalize, readColumn } from "./values.js";
import { foldCase } from "../dialect/fold-case.js";

export function matches(row: Row, predicate: Predicate): boolean {
  switch (predicate.kind) {
    case "and":
      return predicate.items.every((p) => matches(row, p));
    case "or":
      return predicate.items.some((p) => matches(row, p));
    case "exists": {
      const owner = follow(row, predicate.hops);
      const elements = owner?.[predicate.collection.member.name];
      return Array.isArray(elements) && elements.some((element) => matches(element as Row, predicate.predicate));
    }
    case "compare":
      return test(readColumn(follow(row, predicate.left.hops), predicate.left.column), predicate.left.column, predicate);
  }
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
  const v = value as number;
  const [a, b] = values as number[];
  switch (op) {
    case Op.Equal: return v === a;
    case Op.NotEqual: return v !== a;
    case Op.GreaterThan: return v > a!;
    case Op.GreaterThanOrEqual: return v >= a!;
    case Op.LessThan: return v < a!;
    case Op.LessThanOrEqual: return v <= a!;
    case Op.Between: return v >= a! && v <= b!;
    case Op.NotBetween: return v < a! || v > b!;
    case Op.In: return t ? valueSet(t).has(v) : values.includes(v);
    case Op.NotIn: return t ? !valueSet(t).has(v) : !values.includes(v);
    default: throw new Error(`internal: ${op} is not an ordered comparison`);
  }
}

function testText(value: string, t: Test): boolean {
  const insensitive = isCaseInsensitive(t.operator);
  const fold = (s: string) => (insensitive ? foldCase(s) : s);
  const field = fold(value);
  const negated = t.operator.includes("Not");
  const base = t.operator.replace(/^I(?=[A-Z])/, "").replace("Not", "");
  if (base === "In") return valueSet(t, fold).has(field) !== negated;
  const needle = fold((t.values as string[])[0]!);
  let result: boolean;
  switch (base) {
    case "Equal": result = field === needle; break;
    case "Contains": result = field.includes(needle); break;
    case "StartsWith": result = field.startsWith(needle); break;
    case "EndsWith": result = field.endsWith(needle); break;
    default: throw new Error(`internal: ${t.operator} on text`);
  }
  return negated ? !result : result;
}
