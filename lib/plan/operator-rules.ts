// Which Operator × DataType pairs mean something (2.1.5 §1.1), how many values each operator
// takes (§1.2), and which DataTypes fit a column's kind (3.0: checked at validation).
import { Codes, fail, requiredOneValue } from "../errors/codes.js";
import { DataType, Operator as Op } from "../shapes/enums.js";
import type { FieldKind } from "../model/field-kind.js";

const textOps = Object.values(Op).filter((o) => o !== Op.GreaterThan && o !== Op.GreaterThanOrEqual && o !== Op.LessThan
  && o !== Op.LessThanOrEqual && o !== Op.Between && o !== Op.NotBetween);
const ordered = [Op.Equal, Op.NotEqual, Op.GreaterThan, Op.GreaterThanOrEqual, Op.LessThan, Op.LessThanOrEqual, Op.Between, Op.NotBetween, Op.IsNull, Op.IsNotNull];
const caseSensitiveTextOps = [Op.Contains, Op.NotContains, Op.StartsWith, Op.NotStartsWith, Op.EndsWith, Op.NotEndsWith];

export const supportedOperators: Readonly<Record<DataType, ReadonlySet<Op>>> = {
  [DataType.Text]: new Set(textOps),
  [DataType.Guid]: new Set([Op.Equal, Op.NotEqual, Op.In, Op.NotIn, Op.IsNull, Op.IsNotNull]),
  [DataType.Number]: new Set([...ordered, Op.In, Op.NotIn]),
  [DataType.Boolean]: new Set([Op.Equal, Op.NotEqual, Op.IsNull, Op.IsNotNull]),
  [DataType.DateTime]: new Set(ordered),
  [DataType.Date]: new Set(ordered),
  [DataType.Enum]: new Set([Op.Equal, Op.NotEqual, Op.In, Op.NotIn, Op.IsNull, Op.IsNotNull, ...caseSensitiveTextOps]),
};

const fittingKinds: Readonly<Record<DataType, readonly FieldKind[]>> = {
  [DataType.Text]: ["text", "enum", "uuid"],
  [DataType.Guid]: ["uuid", "text"],
  [DataType.Number]: ["number"],
  [DataType.Boolean]: ["boolean"],
  [DataType.DateTime]: ["datetime", "date"],
  [DataType.Date]: ["datetime", "date"],
  [DataType.Enum]: ["enum", "text"],
};

export function checkArity(operator: Op, count: number, where: string): void {
  switch (operator) {
    case Op.Between:
    case Op.NotBetween:
      if (count !== 2) fail(Codes.RequiredTwoValues, `${operator} takes exactly two values`, where);
      return;
    case Op.In:
    case Op.IIn:
    case Op.NotIn:
    case Op.INotIn:
      if (count < 1) fail(Codes.RequiredValues, `${operator} takes one or more values`, where);
      return;
    case Op.IsNull:
    case Op.IsNotNull:
      if (count !== 0) fail(Codes.NotRequiredValues, `${operator} takes no values`, where);
      return;
    default:
      if (count !== 1) fail(requiredOneValue(operator), `${operator} takes exactly one value`, where);
  }
}

export function checkCombination(dataType: DataType, operator: Op, where: string): void {
  if (!supportedOperators[dataType].has(operator)) {
    fail(Codes.UnsupportedCombination, `Unsupported combination of DataType '${dataType}' and Operator '${operator}'.`, where);
  }
}

export function checkFieldKind(dataType: DataType, kind: FieldKind, field: string, where: string): void {
  if (!fittingKinds[dataType].includes(kind)) {
    fail(Codes.DataTypeDoesNotMatchField, `DataType ${dataType} does not fit "${field}" (a ${kind} field)`, where);
  }
}

export const isCaseInsensitive = (operator: Op) => operator.startsWith("I") && operator !== Op.In && operator !== Op.IsNull && operator !== Op.IsNotNull;
