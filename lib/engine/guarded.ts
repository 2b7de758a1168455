// applyPolicy(source, context): the only entry point of the policy layer. The guarded handle
// mirrors the query functions. Every form runs the one pipeline (pipeline/driver.ts) with the
// policy as its guard (policy-guard.ts): parse → sanitize (the caller's decisions on every field
// reference, resolved by public names) → plan (built once) → transformPlan (forced predicates,
// group floor) → compile → execute → transformResult (hidden columns, transformations, public
// names, trace); the builders stop after compile. A repeated request for the same caller starts
// at execute (the engine's caches: guard/guarded-caches.ts).
import { refusePrivateOnBuilder } from "../guard/private-release.js";
import type { ObjectLiteral, SelectQueryBuilder } from "typeorm";
import type { ShapeStatements } from "../pipeline/stages.js";
import { type AnySource, type Built, type PipelineRequest, runBuild, runExport, runRows, runStatements } from "../pipeline/driver.js";
import { type QpExportOptions, exportOptionsOf } from "../api/export.js";
import type { QuerySource } from "../pipeline/source.js";
import { shapeKindOf } from "../parse/parse-shapes.js";
import type { ShapeKind } from "../parse/parse-shapes.js";
import type { FilterResult, SummaryResult } from "../shapes/results.js";
import type { FilterInput, SegmentInput, SummaryInput } from "../shapes/shapes.js";
import { Codes, fail } from "../errors/codes.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import { QpPolicyEngine } from "./engine.js";
import type { SanitizeResult } from "../guard/sanitize-result.js";
import { copyTrace } from "../guard/trace.js";
import type { PolicyTrace } from "../shapes/policy-trace.js";
import { dropHiddenKeys, renameToPublic } from "../guard/row-pass.js";
import { type RowsFinish, dynamicFilter, filterBuilderOf, isGroupInput, summaryQueryOf } from "../api/query-functions.js";
import type { DynamicQuery } from "../api/dynamic-query.js";
import { fromJson } from "../parse/reader.js";
import type { FilterPlan, SummaryPlan } from "../plan/nodes.js";
import type { DeepPartialShape, Condition, ConditionGroup, GroupBy, OrderBy, PageBy } from "../shapes/shapes.js";
import { refuseMaterialized, refuseUnprotected } from "../guard/guarded-builders.js";
import { PolicyGuard, builtTraces } from "../guard/policy-guard.js";
import type { GuardDecision } from "../guard/guarded-caches.js";

/** The policy trace of a builder made by a guarded query (filter, where, summary, …): decided when it was built. */
export function policyTraceOf(built: SelectQueryBuilder<ObjectLiteral> | DynamicQuery): PolicyTrace | undefined {
  const trace = builtTraces.get(built);
  return trace && copyTrace(trace);
}

export interface GuardedResult<T> extends FilterResult<T> {
  policy: PolicyTrace;
}

/** What a guarded untyped query does to its rows: the transform's hidden columns go, names become public (transforms are refused up front). */
const finishRowsOf = (kind: ShapeKind, sanitized: SanitizeResult): RowsFinish => (rows) => {
  dropHiddenKeys(rows, kind, sanitized);
  renameToPublic(rows, kind, sanitized);
  return rows;
};

const request = (kind: ShapeKind, shape: unknown, typed: boolean, getQueryString: boolean): PipelineRequest => ({ kind, shape, typed, getQueryString, learnSchema: true });

export class GuardedQuery<T extends ObjectLiteral> {
  private readonly engine: QpPolicyEngine;

  constructor(private readonly source: QuerySource<T> | readonly T[], private readonly context: QpPolicyContext) {
    this.engine = QpPolicyEngine.of(context);
  }

  private guard(kind: ShapeKind, shape: unknown, reads = true): PolicyGuard {
    return new PolicyGuard(this.engine, this.context, kind, shape, { reads });
  }

  private run(kind: ShapeKind, shape: unknown, typed: boolean, getQueryString: boolean) {
    return runRows<T, GuardDecision>(this.source as AnySource, request(kind, shape, typed, getQueryString), this.guard(kind, shape));
  }

  /**
   * Every row of a Filter or Segment this caller may read, in batches (api/export.ts): the
   * forced predicates, drops and masks of toListAsync on every batch, decided and charged once,
   * audited once when the export ends; the request's page is ignored. At most MaxExportRows rows,
   * or CapExceeded before the first batch. Stop reading (break, `return()`) to stop the export.
   */
  exportAsync(shape?: FilterInput | SegmentInput | string | null, options?: QpExportOptions): AsyncGenerator<T[], void, undefined> {
    const kind = shapeKindOf(shape);
    return runExport<T, GuardDecision>(this.source as AnySource, request(kind, shape, true, false), this.guard(kind, shape), exportOptionsOf(options, this.engine.options.caps));
  }

  /**
   * The SQL and bound parameters toListAsync would send for this caller (a Filter, Segment or
   * Summary), and the policy trace, without running them; records no audit event and charges no
   * budget (nothing is read). Database sources only.
   */
  async toStatementsAsync(shape?: FilterInput | SegmentInput | SummaryInput | string | null): Promise<ShapeStatements & { policy: PolicyTrace }> {
    if (Array.isArray(this.source)) fail(Codes.EntityNotSupported, "toStatementsAsync needs a database source; an in-memory array has no SQL");
    const kind = shapeKindOf(shape);
    const { statements, decided } = await runStatements(this.source as AnySource, request(kind, shape, true, false), this.guard(kind, shape, false));
    return { ...statements, policy: copyTrace(decided.sanitized.trace) };
  }

  // ---- builders: the plan after the policy's transform, compiled, not run (guarded-builders.ts) --

  /**
   * The pipeline stopped at the plan, for the builder `make` compiles; its trace is kept for
   * policyTraceOf and its audit events are recorded now, when it is built (the host runs it
   * later, or never). Errors come in the order of the executing forms.
   */
  private build<R extends object>(kind: ShapeKind, shape: unknown, make: (built: Built<GuardDecision>, guard: PolicyGuard) => R): Promise<R> {
    const guard = this.guard(kind, shape);
    return runBuild(this.source as AnySource, request(kind, shape, true, false), guard, (built) => make(built, guard));
  }

  /** A guarded Filter as a TypeORM builder of entities (the unguarded filter's builder, after the policy). */
  private typedBuilder(filter: unknown, what: string): Promise<SelectQueryBuilder<T>> {
    return this.build("filter", filter, ({ resolved, planned, decided: { sanitized } }, guard) => {
      refuseUnprotected(planned.plan as FilterPlan, sanitized.transforms, guard.decisionTable, what);
      return filterBuilderOf<T>(resolved, planned.plan as FilterPlan);
    });
  }

  /** A guarded Filter as an untyped query; its rows come back under public names. */
  private dynamicBuilder(filter: unknown, what: string): Promise<DynamicQuery> {
    return this.build("filter", filter, ({ resolved, planned, decided: { sanitized } }, guard) => {
      refuseUnprotected(planned.plan as FilterPlan, sanitized.transforms, guard.decisionTable, what);
      return dynamicFilter(resolved, planned.plan as FilterPlan, finishRowsOf("filter", sanitized));
    });
  }

  /** Filter(filter) under the policy: a TypeORM SelectQueryBuilder to run with TypeORM. Like every guarded request it pages (page 1 of MaxPageSize without a page). */
  filter(filter?: FilterInput | string | null): Promise<SelectQueryBuilder<T>> {
    return this.typedBuilder(filter, "filter");
  }

  /** FilterDynamic(filter) under the policy: an untyped query (getRows returns public names). */
  filterDynamic(filter?: FilterInput | string | null): Promise<DynamicQuery> {
    return this.dynamicBuilder(filter, "filterDynamic");
  }

  /** Where(Condition | ConditionGroup) under the policy: the guarded Filter of that group (forced predicates, the default projection, page 1 of MaxPageSize). */
  where(conditionOrGroup: DeepPartialShape<Condition> | DeepPartialShape<ConditionGroup> | string): Promise<SelectQueryBuilder<T>> {
    const input = fromJson(conditionOrGroup);
    return this.typedBuilder({ conditionGroup: isGroupInput(input) ? input : { connector: "And", conditions: [input] } }, "where");
  }

  /** Order(OrderBy | list) under the policy: the guarded Filter of those orders. */
  order(orderByOrList: DeepPartialShape<OrderBy> | readonly DeepPartialShape<OrderBy>[] | string): Promise<SelectQueryBuilder<T>> {
    const input = fromJson(orderByOrList);
    return this.typedBuilder({ orders: Array.isArray(input) ? input : [input] }, "order");
  }

  /** Page(PageBy) under the policy: the guarded Filter of that page (a page size above MaxPageSize is refused). */
  page(pageBy: DeepPartialShape<PageBy> | string): Promise<SelectQueryBuilder<T>> {
    return this.typedBuilder({ page: fromJson(pageBy) }, "page");
  }

  /** Select(paths) under the policy: the guarded Filter of those selects (denied ones dropped or refused per tier). */
  select(paths: readonly string[] | string): Promise<SelectQueryBuilder<T>> {
    return this.typedBuilder({ selects: fromJson(paths) }, "select");
  }

  /** SelectDynamic(paths) under the policy. */
  selectDynamic(paths: readonly string[] | string): Promise<DynamicQuery> {
    return this.dynamicBuilder({ selects: fromJson(paths) }, "selectDynamic");
  }

  /**
   * Summary(summary) under the policy: an untyped query whose SQL holds the forced predicates and
   * the group floor (a hidden COUNT(*) column, __qlGroupFloor, that getRows removes); getRows
   * names group keys by their public paths.
   */
  summary(summary: SummaryInput | string): Promise<DynamicQuery> {
    return this.build("summary", summary, ({ resolved, planned, decided: { sanitized } }) => {
      refuseMaterialized(sanitized.transforms, "summary");
      refusePrivateOnBuilder(sanitized.privateAggregates);
      return summaryQueryOf(resolved, planned.plan as SummaryPlan, finishRowsOf("summary", sanitized));
    });
  }

  /** Group(groupBy) under the policy: the guarded Summary of that groupBy alone. */
  group(groupBy: DeepPartialShape<GroupBy> | string): Promise<DynamicQuery> {
    return this.summary({ groupBy: fromJson(groupBy) } as SummaryInput);
  }

  /** Filter, Segment or Summary, told apart by their members. */
  async toListAsync(shape: unknown, getQueryString = false): Promise<GuardedResult<T> | (SummaryResult & { policy: PolicyTrace })> {
    return this.run(shapeKindOf(shape), shape, true, getQueryString) as Promise<GuardedResult<T>>;
  }

  /**
   * A request of a kind the caller already knows (a route's), as JSON: parsed as that kind, and
   * only when no cached plan answers it (plans are kept from a request's second sighting). The refusals
   * are toListAsync's, in its order. QueryLibModule.forFeature's POST routes run their bodies here.
   */
  async toListAsyncOf(kind: ShapeKind, json: unknown, getQueryString = false): Promise<GuardedResult<T> | (SummaryResult & { policy: PolicyTrace })> {
    // The kind becomes part of the plan cache's key and picks the parser: only the three there are.
    if (kind !== "filter" && kind !== "segment" && kind !== "summary") fail(Codes.InvalidEnumValue, `toListAsyncOf: kind "${String(kind)}" must be "filter", "segment" or "summary"`, "kind");
    return this.run(kind, json, true, getQueryString) as Promise<GuardedResult<T>>;
  }

  async toListAsyncDynamic(filter?: FilterInput | string | null, getQueryString = false): Promise<GuardedResult<Record<string, unknown>>> {
    return this.run("filter", filter, false, getQueryString) as Promise<GuardedResult<Record<string, unknown>>>;
  }

  /**
   * The in-memory forms. Transforms may need a token vault, which answers asynchronously, so the
   * guarded in-memory forms return promises too.
   */
  toList(shape: unknown, getQueryString = false): Promise<GuardedResult<T> | (SummaryResult & { policy: PolicyTrace })> {
    if (!Array.isArray(this.source)) fail(Codes.EntityNotSupported, "toList runs on in-memory arrays; use toListAsync on a database source");
    return this.run(shapeKindOf(shape), shape, true, getQueryString) as Promise<GuardedResult<T>>;
  }

  toListDynamic(filter?: FilterInput | string | null, getQueryString = false): Promise<GuardedResult<Record<string, unknown>>> {
    if (!Array.isArray(this.source)) fail(Codes.EntityNotSupported, "toListDynamic runs on in-memory arrays; use toListAsyncDynamic on a database source");
    return this.run("filter", filter, false, getQueryString) as Promise<GuardedResult<Record<string, unknown>>>;
  }
}

/** The guarded handle for a source (Repository, SelectQueryBuilder or array) and a prepared context. */
export function applyPolicy<T extends ObjectLiteral>(source: QuerySource<T> | readonly T[], context: QpPolicyContext): GuardedQuery<T> {
  return new GuardedQuery(source, context);
}
