// The six query enums (docs/SHAPES.md), as string enums with the exact member names. The member
// lists keep the spec's order: JSON may name a member by its zero-based position.

export enum DataType { Text = "Text", Guid = "Guid", Number = "Number", Boolean = "Boolean", DateTime = "DateTime", Date = "Date", Enum = "Enum" }

export enum Operator {
  Equal = "Equal", IEqual = "IEqual", NotEqual = "NotEqual", INotEqual = "INotEqual",
  Contains = "Contains", IContains = "IContains", NotContains = "NotContains", INotContains = "INotContains",
  StartsWith = "StartsWith", IStartsWith = "IStartsWith", NotStartsWith = "NotStartsWith", INotStartsWith = "INotStartsWith",
  EndsWith = "EndsWith", IEndsWith = "IEndsWith", NotEndsWith = "NotEndsWith", INotEndsWith = "INotEndsWith",
  In = "In", IIn = "IIn", NotIn = "NotIn", INotIn = "INotIn",
  GreaterThan = "GreaterThan", GreaterThanOrEqual = "GreaterThanOrEqual", LessThan = "LessThan", LessThanOrEqual = "LessThanOrEqual",
  Between = "Between", NotBetween = "NotBetween", IsNull = "IsNull", IsNotNull = "IsNotNull",
}

export enum Connector { And = "And", Or = "Or" }
export enum Direction { Ascending = "Ascending", Descending = "Descending" }
export enum Intersection { Union = "Union", Intersect = "Intersect", Except = "Except" }

export enum Aggregator {
  Count = "Count", CountDistinct = "CountDistinct", Sumation = "Sumation", Average = "Average",
  Minimum = "Minimum", Maximum = "Maximum", FirstOrDefault = "FirstOrDefault", LastOrDefault = "LastOrDefault",
}

/** Declaration order of each enum, for positional JSON values. */
export const enumMembers = {
  DataType: Object.values(DataType),
  Operator: Object.values(Operator),
  Connector: Object.values(Connector),
  Direction: Object.values(Direction),
  Intersection: Object.values(Intersection),
  Aggregator: Object.values(Aggregator),
} as const;
