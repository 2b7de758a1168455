// Checks of a condition's operator against the operator table (shapes/operator-table.ts): its
// DataType and its number of values (as 2.1.5 checks them), and which DataTypes fit a column's kind
// (3.0: checked at validation).
import { Codes, fail } from "../errors/codes.js";
import { DataType, Operator as Op } from "../shapes/enums.js";
import { operators, operatorsOf } from "../shapes/operator-table.js";
import { type FieldKind, dataTypeOfKind } from "../model/field-kind.js";

/** The operators of each DataType (2.1.5's pairs), from the operator table. */
export const supportedOperators: Readonly<Record<DataType, ReadonlySet<Op>>> = operatorsOf;

const fittingKinds: Readonly<Record<DataType, readonly FieldKind[]>> = {
  [DataType.Text]: ["text", "enum", "uuid"],
  [DataType.Guid]: ["uuid", "text"],
  [DataType.Number]: ["number"],
  [DataType.Boolean]: ["boolean"],
  [DataType.DateTime]: ["datetime", "date"],
  [DataType.Date]: ["datetime", "date"],
  [DataType.Enum]: ["enum", "text"],
};

/** The DataTypes a condition on a field of this kind may name (its own first). */
export function fittingDataTypes(kind: FieldKind): DataType[] {
  const own = dataTypeOfKind[kind];
  const fitting = (Object.keys(fittingKinds) as DataType[]).filter((dataType) => fittingKinds[dataType].includes(kind));
  return own ? [own, ...fitting.filter((d) => d !== own)] : fitting;
}

export function checkCombination(dataType: DataType, operator: Op, where: string): void {
  if (!supportedOperators[dataType].has(operator)) {
    fail(Codes.UnsupportedCombination, `Unsupported combination of DataType '${dataType}' and Operator '${operator}'.`, where);
  }
}

/** `field`: the field as the message names it, or a function giving it (made only on failure). */
export function checkFieldKind(dataType: DataType, kind: FieldKind, field: string | (() => string), where: string): void {
  if (!fittingKinds[dataType].includes(kind)) {
    fail(Codes.DataTypeDoesNotMatchField, `DataType ${dataType} does not fit "${typeof field === "function" ? field() : field}" (a ${kind} field)`, where);
  }
}

export const isCaseInsensitive = (operator: Op) => operators[operator].caseInsensitive;
