// Immutable plan nodes: what a query means, with every path resolved and every value typed,
// independent of any dialect. The SQL compilers and the in-memory evaluator read the same plan.
import type { Aggregator, DataType, Direction, Intersection, Operator } from "../shapes/enums.js";
import type { PageBy } from "../shapes/shapes.js";
import type { ColumnMember, EntityModel } from "../model/entity-model.js";
import type { Hop, ResolvedPath } from "../resolve/resolved-path.js";
import type { TypedValue } from "../resolve/coerce-values.js";

declare module "../resolve/resolved-path.js" {
  interface Hop {
    /**
     * The forced predicates (QpForceWhere) of `to`, on `to`'s own columns, that every row this hop
     * reaches must satisfy: a guarded plan puts them on each hop into a scoped entity
     * (decisions/tenant-navigation.ts); the join's ON, the EXISTS' WHERE and the in-memory evaluator
     * apply them, so a row outside the caller's scope is as absent as a missing one. Declared here,
     * with the plan's nodes, so resolve/ does not import the plan.
     */
    readonly scope?: readonly Predicate[];
  }
}

/** A column reached from the current scope through reference hops only (no fan-out). */
export interface ColumnRef {
  readonly kind: "column";
  readonly hops: readonly Hop[];
  readonly column: ColumnMember;
}

/** A path across collections reduced to one value: MIN ascending, MAX descending (as 2.1.5 orders across collections; docs/PATHS.md). */
export interface ReducedRef {
  readonly kind: "reduced";
  readonly fn: "min" | "max";
  /** Reference hops before the first collection. */
  readonly hops: readonly Hop[];
  /** Every hop from the first collection to the column's owner (collections and references). */
  readonly chain: readonly Hop[];
  readonly column: ColumnMember;
}

export type ValueRef = ColumnRef | ReducedRef;

export interface Comparison {
  readonly kind: "compare";
  readonly left: ColumnRef;
  readonly operator: Operator;
  readonly dataType: DataType;
  readonly values: readonly TypedValue[];
}

/** What a test needs of a comparison: the operator, the DataType and the typed values (Having's too). */
export type Test = Pick<Comparison, "operator" | "dataType" | "values">;

/** Any-match over a collection: true when at least one element satisfies the inner predicate. */
export interface Exists {
  readonly kind: "exists";
  readonly hops: readonly Hop[];
  readonly collection: Hop;
  readonly predicate: Predicate;
}

export interface Junction {
  readonly kind: "and" | "or";
  readonly items: readonly Predicate[];
}

export type Predicate = Comparison | Exists | Junction;

export interface OrderKey {
  readonly value: ValueRef;
  readonly direction: Direction;
}

/** Where a cursor page starts (plan/seek.ts): after (forward) or before a row whose sort keys are `values`; null values: the first (forward) or last page. */
export interface Seek {
  readonly forward: boolean;
  /** One value per key of seekKeys, as the cursor carried them; null: no position yet. */
  readonly values: readonly unknown[] | null;
}

/**
 * How a page with count "estimated" is counted: exactly up to `exactBelow` rows, then by the
 * planner's estimate ("planner") or not at all ("bounded": where an estimate would be computed
 * from rows the caller may not count, or the family has no estimate).
 */
export interface Estimate {
  readonly by: "planner" | "bounded";
  readonly exactBelow: number;
}

export interface FilterPlan {
  readonly root: EntityModel;
  readonly where: Predicate | null;
  readonly orders: readonly OrderKey[];
  readonly page: PageBy | null;
  /** A cursor page's position (null or absent: a numbered page, or none). */
  readonly seek?: Seek | null;
  /** A page with count "estimated". */
  readonly estimate?: Estimate | null;
  /** null: whole entities. */
  readonly selects: readonly ResolvedPath[] | null;
  /**
   * The keys a typed result adds below the root (plan/projection.ts SelectKeys): "all" for an
   * unguarded plan, the caller's selectable ones (by key path) for a guarded one. Required, so no
   * plan falls back to every key by leaving it out.
   */
  readonly selectKeys: SelectKeys;
}

export interface SegmentPlan {
  readonly root: EntityModel;
  readonly sets: readonly { readonly intersection: Intersection | null; readonly where: Predicate | null }[];
  readonly orders: readonly OrderKey[];
  readonly page: PageBy | null;
  readonly seek?: Seek | null;
  readonly estimate?: Estimate | null;
  readonly selects: readonly ResolvedPath[] | null;
  /** As FilterPlan.selectKeys. */
  readonly selectKeys: SelectKeys;
}

/** Which keys a typed Select adds below the root (ProjectionNode.keys): every one, or those whose path (keyPathOf) a guard granted. */
export type SelectKeys = ReadonlySet<string> | "all";

/** A Segment's rows as a Filter's (its sets compiled apart): the same orders, page, selects and keys. */
export const segmentRows = (plan: SegmentPlan): FilterPlan =>
  ({ root: plan.root, where: null, orders: plan.orders, page: plan.page, seek: plan.seek ?? null, estimate: plan.estimate ?? null, selects: plan.selects, selectKeys: plan.selectKeys });

export interface GroupKey {
  readonly value: ColumnRef;
  /** Output name: the path with dots removed and later segments capitalised. */
  readonly name: string;
}

export interface Aggregate {
  readonly alias: string;
  readonly aggregator: Aggregator;
  /** null for Count without a field. */
  readonly value: ColumnRef | null;
  /**
   * Set by a guard's plan pass on a Sumation or Average of a private field (#45): each row's
   * contribution is clamped to [lower, upper] before it is summed, in SQL and in memory alike.
   */
  readonly clamp?: { readonly lower: number; readonly upper: number } | null;
}

/** A Having comparison: the left side is a declared aggregate. */
export interface HavingComparison {
  readonly kind: "compare-aggregate";
  readonly aggregate: Aggregate;
  readonly operator: Operator;
  readonly dataType: DataType;
  readonly values: readonly TypedValue[];
}

export type HavingPredicate = HavingComparison | { readonly kind: "and" | "or"; readonly items: readonly HavingPredicate[] };

export interface SummaryOrder {
  readonly target: GroupKey | Aggregate;
  readonly direction: Direction;
}

export interface SummaryPlan {
  readonly root: EntityModel;
  readonly where: Predicate | null;
  readonly keys: readonly GroupKey[];
  readonly aggregates: readonly Aggregate[];
  readonly having: HavingPredicate | null;
  readonly orders: readonly SummaryOrder[];
  readonly page: PageBy | null;
}

/** A shape's plan, tagged with its kind: what the policy transforms and the targets run. */
export type ShapePlan =
  | { readonly kind: "filter"; readonly plan: FilterPlan }
  | { readonly kind: "segment"; readonly plan: SegmentPlan }
  | { readonly kind: "summary"; readonly plan: SummaryPlan };
