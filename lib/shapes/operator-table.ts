// Every operator's meaning in one table: which test it applies, negated or not, with case folded
// or not, how many values it takes and which DataTypes it combines with (2.1.5's pairs and counts).
// Parsing, the policy, the compiler and the in-memory target read it instead of recovering a
// meaning from an operator's name; a new operator is a row here, and the type checker then asks every
// Record<Operator, …> and Record<TestKind, …> for its case.
import { DataType, Operator } from "./enums.js";

/** What an operator tests; `negated` and `caseInsensitive` say how. */
export type TestKind = "equal" | "greaterThan" | "greaterThanOrEqual" | "lessThan" | "lessThanOrEqual" | "between" | "in" | "contains" | "startsWith" | "endsWith" | "isNull";
/** Tests that compare a value with values in order (numbers, instants, dates, lower-cased uuids). */
export type OrderedTest = Extract<TestKind, "equal" | "greaterThan" | "greaterThanOrEqual" | "lessThan" | "lessThanOrEqual" | "between" | "in">;
/** Tests on text. */
export type TextTest = Extract<TestKind, "equal" | "in" | "contains" | "startsWith" | "endsWith">;

export type Arity = "none" | "one" | "two" | "oneOrMore";

/**
 * What inference protection lets a caller use on a field it sees transformed (lib/decisions/inference.ts):
 * "equality" always (each value is a guess the request is charged for), "range" on a generalized
 * field's boundaries only, "none" never (patterns and negations probe the stored value).
 */
export type InferenceUse = "equality" | "range" | "none";

/**
 * Under a group floor, the largest count a Having condition on a Count admits (guard/sanitize-summary.ts,
 * GroupTooSmall): "largestValue" the largest of its values, "belowFirst" its first value minus
 * one, "first" its first value, "second" its second value, "unbounded" no bound (never refused).
 */
export type CountBound = "largestValue" | "belowFirst" | "first" | "second" | "unbounded";

export interface OperatorMeaning {
  readonly test: TestKind;
  readonly negated: boolean;
  readonly caseInsensitive: boolean;
  readonly arity: Arity;
  /** A match pins the field to the given values (equality and lists), where ranges and patterns do not. */
  readonly pinsValue: boolean;
  /** The values are a list (In and its forms), not one value per position. */
  readonly listValued: boolean;
  readonly dataTypes: ReadonlySet<DataType>;
  /** Takes no value (the null tests): a URL gives it one empty value, a guess budget charges it nothing. */
  readonly noValue: boolean;
  /** Takes exactly one value per condition, or one list (what QpForceWhere may force). */
  readonly singleValue: boolean;
  readonly inference: InferenceUse;
  readonly countBound: CountBound;
}

/** The columns each row states besides its test and arity (negated and caseInsensitive default to false). */
interface RowFacts {
  readonly negated?: boolean;
  readonly caseInsensitive?: boolean;
  readonly inference: InferenceUse;
  readonly countBound: CountBound;
}

const all = Object.values(DataType);
const textual = [DataType.Text, DataType.Enum];
const textOnly = [DataType.Text];
const ordered = [DataType.Number, DataType.DateTime, DataType.Date];
const listable = [DataType.Text, DataType.Guid, DataType.Number, DataType.Enum];

const meaning = (test: TestKind, arity: Arity, dataTypes: readonly DataType[], facts: RowFacts): OperatorMeaning => {
  const pinsValue = !facts.negated && (test === "equal" || test === "in");
  return {
    test,
    negated: facts.negated ?? false,
    caseInsensitive: facts.caseInsensitive ?? false,
    arity,
    pinsValue,
    listValued: test === "in",
    dataTypes: new Set(dataTypes),
    noValue: arity === "none",
    singleValue: arity === "one" || arity === "oneOrMore",
    inference: facts.inference,
    countBound: facts.countBound,
  };
};
const not = { negated: true };
const folded = { caseInsensitive: true };
const notFolded = { negated: true, caseInsensitive: true };
// Shorthands for the two policy columns.
const equality = { inference: "equality", countBound: "unbounded" } as const;
const range = { inference: "range", countBound: "unbounded" } as const;
const refused = { inference: "none", countBound: "unbounded" } as const;

// Columns: test, arity, DataTypes, then negation and case folding, what inference protection allows
// (InferenceUse) and the count a Having on a Count admits under a group floor (CountBound).
export const operators: Readonly<Record<Operator, OperatorMeaning>> = {
  [Operator.Equal]: meaning("equal", "one", all, { ...equality, countBound: "largestValue" }),
  [Operator.IEqual]: meaning("equal", "one", textOnly, { ...folded, ...equality }),
  [Operator.NotEqual]: meaning("equal", "one", all, { ...not, ...refused }),
  [Operator.INotEqual]: meaning("equal", "one", textOnly, { ...notFolded, ...refused }),
  [Operator.Contains]: meaning("contains", "one", textual, refused),
  [Operator.IContains]: meaning("contains", "one", textOnly, { ...folded, ...refused }),
  [Operator.NotContains]: meaning("contains", "one", textual, { ...not, ...refused }),
  [Operator.INotContains]: meaning("contains", "one", textOnly, { ...notFolded, ...refused }),
  [Operator.StartsWith]: meaning("startsWith", "one", textual, refused),
  [Operator.IStartsWith]: meaning("startsWith", "one", textOnly, { ...folded, ...refused }),
  [Operator.NotStartsWith]: meaning("startsWith", "one", textual, { ...not, ...refused }),
  [Operator.INotStartsWith]: meaning("startsWith", "one", textOnly, { ...notFolded, ...refused }),
  [Operator.EndsWith]: meaning("endsWith", "one", textual, refused),
  [Operator.IEndsWith]: meaning("endsWith", "one", textOnly, { ...folded, ...refused }),
  [Operator.NotEndsWith]: meaning("endsWith", "one", textual, { ...not, ...refused }),
  [Operator.INotEndsWith]: meaning("endsWith", "one", textOnly, { ...notFolded, ...refused }),
  [Operator.In]: meaning("in", "oneOrMore", listable, { ...equality, countBound: "largestValue" }),
  [Operator.IIn]: meaning("in", "oneOrMore", textOnly, { ...folded, ...equality }),
  [Operator.NotIn]: meaning("in", "oneOrMore", listable, { ...not, ...refused }),
  [Operator.INotIn]: meaning("in", "oneOrMore", textOnly, { ...notFolded, ...refused }),
  [Operator.GreaterThan]: meaning("greaterThan", "one", ordered, range),
  [Operator.GreaterThanOrEqual]: meaning("greaterThanOrEqual", "one", ordered, range),
  [Operator.LessThan]: meaning("lessThan", "one", ordered, { ...range, countBound: "belowFirst" }),
  [Operator.LessThanOrEqual]: meaning("lessThanOrEqual", "one", ordered, { ...range, countBound: "first" }),
  [Operator.Between]: meaning("between", "two", ordered, { ...range, countBound: "second" }),
  [Operator.NotBetween]: meaning("between", "two", ordered, { ...not, ...range }),
  [Operator.IsNull]: meaning("isNull", "none", all, equality),
  [Operator.IsNotNull]: meaning("isNull", "none", all, { ...not, ...equality }),
};

/** The operators, in declaration order, whose row says `which`. */
export const operatorsWhere = (which: (meaning: OperatorMeaning) => boolean): Operator[] => Object.values(Operator).filter((op) => which(operators[op]));

const countBounds: Readonly<Record<CountBound, (numbers: readonly number[]) => number>> = {
  // Not Math.max(...numbers): a list may hold more values than a call takes arguments.
  largestValue: (numbers) => numbers.reduce((a, b) => Math.max(a, b), -Infinity),
  belowFirst: (numbers) => numbers[0]! - 1,
  first: (numbers) => numbers[0]!,
  second: (numbers) => numbers[1]!,
  unbounded: () => Infinity,
};

/** The largest count a Having condition `operator` with these values admits (its row's CountBound). */
export function largestCountAdmitted(operator: Operator, numbers: readonly number[]): number {
  return countBounds[operators[operator].countBound](numbers);
}

/** Whether each kind of test is an OrderedTest and a TextTest (a new kind fails to compile here, and a wrong answer against the two types). */
const testFamilies: { readonly [K in TestKind]: { readonly ordered: K extends OrderedTest ? true : false; readonly text: K extends TextTest ? true : false } } = {
  equal: { ordered: true, text: true },
  greaterThan: { ordered: true, text: false },
  greaterThanOrEqual: { ordered: true, text: false },
  lessThan: { ordered: true, text: false },
  lessThanOrEqual: { ordered: true, text: false },
  between: { ordered: true, text: false },
  in: { ordered: true, text: true },
  contains: { ordered: false, text: true },
  startsWith: { ordered: false, text: true },
  endsWith: { ordered: false, text: true },
  isNull: { ordered: false, text: false },
};

/** The operator's test, which must be an ordered one (the plan pairs operators with DataTypes). */
export function orderedTest(op: Operator): OrderedTest {
  const { test } = operators[op];
  if (!testFamilies[test].ordered) throw new Error(`internal: ${op} is not an ordered comparison`);
  return test as OrderedTest;
}

/** The operator's test, which must be one on text. */
export function textTest(op: Operator): TextTest {
  const { test } = operators[op];
  if (!testFamilies[test].text) throw new Error(`internal: ${op} on text`);
  return test as TextTest;
}

const operatorsFor = (dataType: DataType): ReadonlySet<Operator> => new Set(operatorsWhere((m) => m.dataTypes.has(dataType)));

/** The operators that combine with each DataType, in declaration order. */
export const operatorsOf: Readonly<Record<DataType, ReadonlySet<Operator>>> = {
  [DataType.Text]: operatorsFor(DataType.Text),
  [DataType.Guid]: operatorsFor(DataType.Guid),
  [DataType.Number]: operatorsFor(DataType.Number),
  [DataType.Boolean]: operatorsFor(DataType.Boolean),
  [DataType.DateTime]: operatorsFor(DataType.DateTime),
  [DataType.Date]: operatorsFor(DataType.Date),
  [DataType.Enum]: operatorsFor(DataType.Enum),
};
