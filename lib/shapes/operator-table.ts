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
}

const all = Object.values(DataType);
const textual = [DataType.Text, DataType.Enum];
const textOnly = [DataType.Text];
const ordered = [DataType.Number, DataType.DateTime, DataType.Date];
const listable = [DataType.Text, DataType.Guid, DataType.Number, DataType.Enum];

const meaning = (test: TestKind, arity: Arity, dataTypes: readonly DataType[], how: { negated?: boolean; caseInsensitive?: boolean } = {}): OperatorMeaning => ({
  test,
  negated: how.negated ?? false,
  caseInsensitive: how.caseInsensitive ?? false,
  arity,
  pinsValue: !how.negated && (test === "equal" || test === "in"),
  listValued: test === "in",
  dataTypes: new Set(dataTypes),
});
const not = { negated: true };
const folded = { caseInsensitive: true };
const notFolded = { negated: true, caseInsensitive: true };

export const operators: Readonly<Record<Operator, OperatorMeaning>> = {
  [Operator.Equal]: meaning("equal", "one", all),
  [Operator.IEqual]: meaning("equal", "one", textOnly, folded),
  [Operator.NotEqual]: meaning("equal", "one", all, not),
  [Operator.INotEqual]: meaning("equal", "one", textOnly, notFolded),
  [Operator.Contains]: meaning("contains", "one", textual),
  [Operator.IContains]: meaning("contains", "one", textOnly, folded),
  [Operator.NotContains]: meaning("contains", "one", textual, not),
  [Operator.INotContains]: meaning("contains", "one", textOnly, notFolded),
  [Operator.StartsWith]: meaning("startsWith", "one", textual),
  [Operator.IStartsWith]: meaning("startsWith", "one", textOnly, folded),
  [Operator.NotStartsWith]: meaning("startsWith", "one", textual, not),
  [Operator.INotStartsWith]: meaning("startsWith", "one", textOnly, notFolded),
  [Operator.EndsWith]: meaning("endsWith", "one", textual),
  [Operator.IEndsWith]: meaning("endsWith", "one", textOnly, folded),
  [Operator.NotEndsWith]: meaning("endsWith", "one", textual, not),
  [Operator.INotEndsWith]: meaning("endsWith", "one", textOnly, notFolded),
  [Operator.In]: meaning("in", "oneOrMore", listable),
  [Operator.IIn]: meaning("in", "oneOrMore", textOnly, folded),
  [Operator.NotIn]: meaning("in", "oneOrMore", listable, not),
  [Operator.INotIn]: meaning("in", "oneOrMore", textOnly, notFolded),
  [Operator.GreaterThan]: meaning("greaterThan", "one", ordered),
  [Operator.GreaterThanOrEqual]: meaning("greaterThanOrEqual", "one", ordered),
  [Operator.LessThan]: meaning("lessThan", "one", ordered),
  [Operator.LessThanOrEqual]: meaning("lessThanOrEqual", "one", ordered),
  [Operator.Between]: meaning("between", "two", ordered),
  [Operator.NotBetween]: meaning("between", "two", ordered, not),
  [Operator.IsNull]: meaning("isNull", "none", all),
  [Operator.IsNotNull]: meaning("isNull", "none", all, not),
};

/** The operator's test, which must be an ordered one (the plan pairs operators with DataTypes). */
export function orderedTest(op: Operator): OrderedTest {
  const { test } = operators[op];
  if (test === "contains" || test === "startsWith" || test === "endsWith" || test === "isNull") throw new Error(`internal: ${op} is not an ordered comparison`);
  return test;
}

/** The operator's test, which must be one on text. */
export function textTest(op: Operator): TextTest {
  const { test } = operators[op];
  if (test !== "equal" && test !== "in" && test !== "contains" && test !== "startsWith" && test !== "endsWith") throw new Error(`internal: ${op} on text`);
  return test;
}

const operatorsFor = (dataType: DataType): ReadonlySet<Operator> =>
  new Set(Object.values(Operator).filter((op) => operators[op].dataTypes.has(dataType)));

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
