// The caps of every request (QpCaps) and their defaults: how deep, how long, how many. Parsing
// enforces the request bounds on every request, unguarded ones by capDefaults, guarded ones by
// their engine's caps (QpPolicyOptions.caps, read and checked by decisions/options.ts).

export interface QpCaps {
  maxPageSize: number;
  maxConditions: number;
  maxOrderFields: number;
  maxNavigationDepth: number;
  maxQueryCost: number;
  defaultFieldCost: number;
  maxAuditEvents: number;
  minGroupSize: number;
  schemaDepth: number;
  schemaCycleLimit: number;
  maxSchemaFields: number;
  // Bounds of every request, guarded or not (unguarded ones by capDefaults), checked while parsing.
  /** Levels of sub-groups below a root group (where, having, a set's group); also nesting inside one value. */
  maxGroupDepth: number;
  maxConditionSets: number;
  /** Conditions in one request: where, having and every set together. */
  maxRequestConditions: number;
  /** Sub-groups in one request. */
  maxConditionGroups: number;
  maxValuesPerList: number;
  /** UTF-16 code units of one text value (an array or object value: of its JSON text). */
  maxValueLength: number;
  /** Entries of one selects, orders, groupBy.fields or groupBy.aggregateBy list. */
  maxFieldsPerList: number;
  /** Dot-separated segments of one field path. */
  maxPathSegments: number;
  /** Correlated subqueries of one statement, counted on the plan (see plan/subquery-budget.ts). */
  maxSubqueries: number;
  /**
   * Under inferenceProtection, the values one request may test against one field the caller sees
   * transformed: every Equal/IEqual value, In/IIn element and range bound, summed over Or branches,
   * sub-groups, Segment sets and Summary Where and Having (an allowance per request and field
   * since #42; it was per In list before, hence the name).
   */
  maxProtectedInValues: number;
  /** Values of the In (any list) that satisfies a QpRequireWhere: a longer list does not narrow and satisfies nothing. */
  maxRequiredInValues: number;
  /** Characters of one page cursor (page.after, page.before); a cursor holds the sort keys' values of one row, encrypted. */
  maxCursorLength: number;
  /**
   * A page with count "estimated" counts exactly up to this many rows (a COUNT over at most this
   * many and one more); above it, the planner's estimate, or no total where none may be given.
   */
  maxExactEstimate: number;
  /** Rows of one export (exportRows, GuardedQuery.exportAsync, the export route): a larger result is refused before its first row. */
  maxExportRows: number;
}

export const capDefaults: Readonly<QpCaps> = Object.freeze({
  maxPageSize: 1000, maxConditions: 50, maxOrderFields: 10, maxNavigationDepth: 4, maxQueryCost: 1000,
  defaultFieldCost: 1, maxAuditEvents: 10000, minGroupSize: 5, schemaDepth: 2, schemaCycleLimit: 2, maxSchemaFields: 2000,
  maxGroupDepth: 32, maxConditionSets: 100, maxRequestConditions: 250, maxConditionGroups: 100, maxValuesPerList: 100_000,
  maxValueLength: 10_000, maxFieldsPerList: 200, maxPathSegments: 10, maxSubqueries: 16, maxProtectedInValues: 10,
  maxRequiredInValues: 10, maxCursorLength: 16_384, maxExactEstimate: 10_000, maxExportRows: 1_000_000,
});

export const capMinimum = (cap: keyof QpCaps) => (cap === "defaultFieldCost" ? 0 : 1);
/** Parsing and every later stage recurse once per group level; deeper than this could overflow the stack. */
export const capMaximum = (cap: keyof QpCaps) => (cap === "maxGroupDepth" ? 256 : Number.MAX_SAFE_INTEGER);
