// The validation codes (docs/SHAPES.md, "Validation codes"), plus the ones 3.0 adds for
// inputs 2.1.5 did not reject cleanly. Each is listed in docs/SHAPES.md ("Validation codes").
import { LogicException } from "./logic-exception.js";
import type { Operator } from "../shapes/enums.js";

export const Codes = {
  ConditionsUniqueSort: "AnyListOfConditionsMustHasUniqueSortValue",
  SubGroupsUniqueSort: "AnyListOfSubConditionsGroupsMustHasUniqueSortValue",
  SetsUniqueSort: "ListOfConditionsSetsMustHasUniqueSortValue",
  RequiredIntersection: "ConditionsSetOfIndex[1-N]MustHasIntersection",
  InvalidField: "ConditionMustHasValidFieldName",
  InvalidValue: "ConditionValuesAreNullOrWhiteSpace",
  RequiredValues: "ConditionWithOperator[In-IIn-NotIn-INotIn]MustHasOneOrMoreValues",
  NotRequiredValues: "ConditionWithOperator[IsNull-IsNotNull]MustHasNoValues",
  RequiredTwoValues: "ConditionWithOperator[Between-NotBetween]MustHasOnlyTwoValues",
  InvalidPageNumber: "PageNumberMustBeGreaterThanZero",
  InvalidPageSize: "PageSizeMustBeGreaterThanZero",
  MustHaveFields: "MustHasFields",
  InvalidFormat: "InvalidFormat",
  InvalidAlias: "AggregationMustHasValidAlias",
  AggregationFieldMustBeSimpleType: "AggregationFieldMustBeSimpleType",
  GroupByMustHaveFields: "GroupByMustHasAtLeastOneField",
  GroupByFieldsMustBeUnique: "GroupByFieldsMustBeUnique",
  GroupByFieldCannotBeComplexType: "GroupByFieldCannotBeComplexType",
  AggregationAliasesMustBeUnique: "AggregationAliasesMustBeUnique",
  // 3.0 additions.
  UnsupportedCombination: "UnsupportedDataTypeOperatorCombination",
  DataTypeDoesNotMatchField: "DataTypeDoesNotMatchFieldType",
  InvalidJson: "InvalidJson",
  UnknownMember: "UnknownMember",
  InvalidMemberType: "InvalidMemberType",
  InvalidEnumValue: "InvalidEnumValue",
  GroupByRequired: "SummaryMustHasGroupBy",
  EntityNotSupported: "EntityMetadataNotFound",
  UnsupportedOnBuilder: "NotSupportedOnQueryBuilder",
  /** U+0000 or a lone UTF-16 surrogate in a text value: PostgreSQL refuses the first; the second reaches no database as written. */
  InvalidCharacter: "ValueHasInvalidCharacter",
  // Cursor pages and count modes (#44).
  PageNumberAndCursor: "PageMustHasEitherPageNumberOrCursor",
  PageAfterAndBefore: "PageCannotHasBothAfterAndBefore",
  /** Not a cursor QueryLib made (altered, truncated, or made under another key). */
  InvalidCursor: "CursorIsInvalid",
  /** A cursor QueryLib made for another request: another entity, shape, caller, source or policy snapshot. */
  CursorMismatch: "CursorDoesNotMatchRequest",
  /** A cursor page ordered by a value across a collection (MIN/MAX of its elements): no seek predicate can follow it. */
  CursorOrderAcrossCollection: "CursorPageCannotOrderAcrossCollection",
  CursorOnSummary: "CursorPageIsNotSupportedForSummary",
  CountModeNotSupported: "CountModeIsNotSupported",
} as const;

export const requiredOneValue = (operator: Operator) => `ConditionWithOperator[${operator}]MustHasOnlyOneValue`;
export const unsupportedAggregator = (aggregator: string, type: string) =>
  `Aggregator[${aggregator}]IsNotSupportedForFieldType[${type}]`;
export const aliasCannotBeGroupField = (alias: string) => `AggregationAlias[${alias}]CannotBeUsedInGroupByFields`;
export const summaryOrderField = (field: string) =>
  `SummaryOrderField[${field}]MustExistInGroupByFieldsOrAggregateByAliases`;
export const orderFieldCannotEndOnCollection = (field: string) =>
  `OrderField[${field}]CannotEndOnCollectionOfComplexElements`;
export const havingField = (field: string) => `HavingField[${field}]MustExistInAggregateByAliases`;
export const groupKeyCollision = (name: string) => `GroupKey[${name}]CollidesWithAnotherKeyOrAlias`;

/** Throws a LogicException whose message is the code itself plus an explanation of what to fix. */
export function fail(code: string, explanation: string, path?: string): never {
  throw new LogicException(code, `${code}: ${explanation}${path ? ` (at ${path})` : ""}`, path);
}
