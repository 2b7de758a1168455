// The query shapes (docs/SHAPES.md), with their camelCase JSON names.
// Parsed shapes are plain readonly data: the engine never mutates a request.
import type { Aggregator, Connector, DataType, Direction, Intersection, Operator } from "./enums.js";

export interface Condition {
  readonly sort: number;
  readonly field: string | null;
  readonly dataType: DataType;
  readonly operator: Operator;
  readonly values: readonly unknown[];
}

export interface ConditionGroup {
  readonly sort: number;
  readonly connector: Connector;
  readonly conditions: readonly Condition[];
  readonly subConditionGroups: readonly ConditionGroup[];
}

export interface ConditionSet {
  readonly sort: number;
  readonly intersection: Intersection | null;
  readonly conditionGroup: ConditionGroup;
}

export interface OrderBy {
  readonly sort: number;
  readonly field: string | null;
  readonly direction: Direction;
}

export interface AggregateBy {
  readonly field: string | null;
  readonly alias: string | null;
  readonly aggregator: Aggregator;
}

export interface GroupBy {
  readonly fields: readonly string[];
  readonly aggregateBy: readonly AggregateBy[];
}

/** How a page's total is counted (docs/SHAPES.md, "Cursor pages and counts"). */
export type CountMode = "exact" | "estimated" | "none";
export const countModes: readonly CountMode[] = ["exact", "estimated", "none"];

export interface PageBy {
  /** 1 or more for a numbered page; 0 for a cursor page (after or before given instead). */
  readonly pageNumber: number;
  readonly pageSize: number;
  /**
   * A cursor page: the rows after this position (a result's nextCursor), or from the first row
   * when empty (""). Exactly one of pageNumber, after and before.
   */
  readonly after?: string | null;
  /** A cursor page: the rows before this position (a result's previousCursor), or up to the last row when empty (""). */
  readonly before?: string | null;
  /** How the total is counted; exact (the spec's COUNT) when absent. */
  readonly count?: CountMode | null;
}

/** A page read by cursor (after or before given). */
export const isCursorPage = (page: PageBy | null | undefined): boolean =>
  !!page && ((page.after !== undefined && page.after !== null) || (page.before !== undefined && page.before !== null));

export interface Filter {
  readonly conditionGroup?: ConditionGroup | null;
  readonly selects?: readonly string[] | null;
  readonly orders?: readonly OrderBy[] | null;
  readonly page?: PageBy | null;
}

export interface Segment {
  readonly conditionSets: readonly ConditionSet[];
  readonly selects?: readonly string[] | null;
  readonly orders?: readonly OrderBy[] | null;
  readonly page?: PageBy | null;
}

export interface Summary {
  readonly conditionGroup?: ConditionGroup | null;
  readonly groupBy?: GroupBy | null;
  readonly having?: ConditionGroup | null;
  readonly orders?: readonly OrderBy[] | null;
  readonly page?: PageBy | null;
}

/**
 * What callers may pass: the same shapes with every member optional (defaults of 2.1.5 apply),
 * enums also by member name or position, as in JSON.
 */
export type DeepPartialShape<T> = T extends readonly (infer E)[]
  ? readonly DeepPartialShape<E>[]
  : T extends object
    ? { readonly [K in keyof T]?: DeepPartialShape<T[K]> | null }
    : T extends string
      ? string extends T ? T : T | `${T}` | number
      : T;

export type FilterInput = DeepPartialShape<Filter>;
export type SegmentInput = DeepPartialShape<Segment>;
export type SummaryInput = DeepPartialShape<Summary>;
