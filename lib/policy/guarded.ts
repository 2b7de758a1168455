// applyPolicy(source, context): the only entry point of the policy layer. The guarded handle
// mirrors the query functions; each request is parsed, checked for shape, sanitized under the
// context's engine, run by the ordinary engine, renamed to public names and traced.
import type { ObjectLiteral } from "typeorm";
import { modelOfArray } from "../api/to-list.js";
import { parseShape } from "../api/to-list-async.js";
import { type ParsedShape, parseFilter, runParsedAsync, runParsedInMemory, shapeKindOf } from "../api/run-shape.js";
import { type QuerySource, resolveSource } from "../api/source.js";
import type { EntityModel } from "../model/entity-model.js";
import type { ShapeKind } from "../parse/parse-shapes.js";
import type { FilterResult, SummaryResult } from "../shapes/results.js";
import type { Filter, FilterInput, Segment, Summary } from "../shapes/shapes.js";
import { Codes, fail } from "../errors/codes.js";
import type { QpPolicyContext } from "./context.js";
import { QpPolicyEngine } from "./engine.js";
import { type SanitizeResult, Sanitizer, sanitizeFilter, sanitizeSegment, sanitizeSummary } from "./sanitize.js";
import { applyRenames, renameKeys } from "./renames.js";
import { applyTransforms } from "../transform/apply.js";
import type { PolicyTrace } from "./trace.js";

export interface GuardedResult<T> extends FilterResult<T> {
  policy: PolicyTrace;
}

export async function sanitize(engine: QpPolicyEngine, context: QpPolicyContext, model: EntityModel, kind: ShapeKind, shape: ParsedShape, getQueryString: boolean, audit = true): Promise<SanitizeResult<ParsedShape>> {
  const sanitizer = new Sanitizer(engine.options, context, model, await engine.decisionsAsync(context));
  sanitizer.audit = audit;
  if (kind === "segment") return sanitizeSegment(sanitizer, shape as Segment, getQueryString);
  if (kind === "summary") return sanitizeSummary(sanitizer, shape as Summary, getQueryString);
  return sanitizeFilter(sanitizer, shape as Filter, getQueryString);
}

async function finish<R extends FilterResult<unknown>>(result: R, kind: ShapeKind, sanitized: SanitizeResult<ParsedShape>, engine: QpPolicyEngine, context: QpPolicyContext): Promise<R & { policy: PolicyTrace }> {
  const rows = result.data as Record<string, unknown>[];
  for (const row of sanitized.hiddenKeys.length ? rows : []) for (const key of sanitized.hiddenKeys) delete row[key];
  await applyTransforms(rows, sanitized.transforms, { hashSalt: engine.options.hashSalt, vault: engine.options.tokenVault, context });
  if (kind === "summary") renameKeys(rows, sanitized.keyRenames);
  else applyRenames(rows, sanitized.renames);
  result.policy = sanitized.trace;
  return result as R & { policy: PolicyTrace };
}

export class GuardedQuery<T extends ObjectLiteral> {
  private readonly engine: QpPolicyEngine;

  constructor(private readonly source: QuerySource<T> | readonly T[], private readonly context: QpPolicyContext) {
    this.engine = QpPolicyEngine.of(context);
  }

  private async run(kind: ShapeKind, parsed: ParsedShape, typed: boolean, getQueryString: boolean) {
    if (Array.isArray(this.source)) return this.runInMemory(kind, parsed, typed, getQueryString);
    const resolved = resolveSource(this.source as QuerySource<T>);
    const sanitized = await sanitize(this.engine, this.context, resolved.model, kind, parsed, getQueryString);
    return finish(await runParsedAsync<T>(resolved, kind, sanitized.shape, typed, getQueryString), kind, sanitized, this.engine, this.context);
  }

  private async runInMemory(kind: ShapeKind, parsed: ParsedShape, typed: boolean, getQueryString: boolean) {
    const rows = this.source as readonly T[];
    const model = modelOfArray(rows) ?? fail(Codes.EntityNotSupported, "a guarded in-memory source needs entity instances, or inMemory(Entity, rows)");
    const sanitized = await sanitize(this.engine, this.context, model, kind, parsed, getQueryString);
    return finish(runParsedInMemory<T>(rows, model, kind, sanitized.shape, typed, getQueryString), kind, sanitized, this.engine, this.context);
  }

  /** Filter, Segment or Summary, told apart by their members. */
  async toListAsync(shape: unknown, getQueryString = false): Promise<GuardedResult<T> | (SummaryResult & { policy: PolicyTrace })> {
    const kind = shapeKindOf(shape);
    return this.run(kind, parseShape(kind, shape), true, getQueryString) as Promise<GuardedResult<T>>;
  }

  async toListAsyncDynamic(filter?: FilterInput | string | null, getQueryString = false): Promise<GuardedResult<Record<string, unknown>>> {
    return this.run("filter", parseFilter(filter), false, getQueryString) as Promise<GuardedResult<Record<string, unknown>>>;
  }

  /**
   * The in-memory forms. Transforms may need a token vault, which answers asynchronously, so the
   * guarded in-memory forms return promises too.
   */
  toList(shape: unknown, getQueryString = false): Promise<GuardedResult<T> | (SummaryResult & { policy: PolicyTrace })> {
    if (!Array.isArray(this.source)) fail(Codes.EntityNotSupported, "toList runs on in-memory arrays; use toListAsync on a database source");
    const kind = shapeKindOf(shape);
    return this.runInMemory(kind, parseShape(kind, shape), true, getQueryString) as Promise<GuardedResult<T>>;
  }

  toListDynamic(filter?: FilterInput | string | null, getQueryString = false): Promise<GuardedResult<Record<string, unknown>>> {
    if (!Array.isArray(this.source)) fail(Codes.EntityNotSupported, "toListDynamic runs on in-memory arrays; use toListAsyncDynamic on a database source");
    return this.runInMemory("filter", parseFilter(filter), false, getQueryString) as Promise<GuardedResult<Record<string, unknown>>>;
  }
}

/** The guarded handle for a source (Repository, SelectQueryBuilder or array) and a prepared context. */
export function applyPolicy<T extends ObjectLiteral>(source: QuerySource<T> | readonly T[], context: QpPolicyContext): GuardedQuery<T> {
  return new GuardedQuery(source, context);
}
