// toListAsync / toListAsyncDynamic / toStatements: the unguarded pipeline (pipeline/driver.ts)
// on a Repository or SelectQueryBuilder: parse and validate the shape, resolve it against the
// entity's metadata, plan it, compile it for the dialect, run it, and shape the rows.
import type { ObjectLiteral } from "typeorm";
import type { FilterResult, SegmentResult, SummaryResult } from "../shapes/results.js";
import type { FilterInput, SegmentInput, SummaryInput } from "../shapes/shapes.js";
import { shapeKindOf } from "../parse/parse-shapes.js";
import type { QuerySource } from "../pipeline/source.js";
import { runRows, runStatementsSync } from "../pipeline/driver.js";
import type { ShapeStatements } from "../pipeline/stages.js";
import { unguarded } from "../pipeline/unguarded.js";


export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, segment: SegmentInput & { conditionSets: unknown }, getQueryString?: boolean): Promise<SegmentResult<T>>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, summary: SummaryInput & ({ groupBy: unknown } | { having: unknown }), getQueryString?: boolean): Promise<SummaryResult>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, filter?: FilterInput | string | null, getQueryString?: boolean): Promise<FilterResult<T>>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, shape: unknown, getQueryString?: boolean): Promise<FilterResult<T> | SummaryResult>;
export function toListAsync<T extends ObjectLiteral>(source: QuerySource<T>, shape: unknown, getQueryString = false): Promise<FilterResult<T> | SummaryResult> {
  return runRows<T, null>(source, { kind: shapeKindOf(shape), shape, typed: true, getQueryString, learnSchema: true }, unguarded);
}

export function toListAsyncDynamic<T extends ObjectLiteral>(
  source: QuerySource<T>, filter?: FilterInput | string | null, getQueryString = false,
): Promise<FilterResult<Record<string, unknown>>> {
  return runRows(source, { kind: "filter", shape: filter, typed: false, getQueryString, learnSchema: true }, unguarded) as Promise<FilterResult<Record<string, unknown>>>;
}

/**
 * The SQL and bound parameters toListAsync would send for a Filter, Segment or Summary, without
 * running them (for logs, EXPLAIN, or measuring the build). A cached plan is used and kept as
 * toListAsync does.
 */
export function toStatements<T extends ObjectLiteral>(source: QuerySource<T>, shape?: FilterInput | SegmentInput | SummaryInput | string | null): ShapeStatements {
  return runStatementsSync(source, { kind: shapeKindOf(shape), shape, typed: true, getQueryString: false, learnSchema: false }, unguarded).statements;
}
