// The driver's cursor step (issue #44): a cursor page's cursor is opened before the plan is
// built (its values become the plan's seek), and the result's next and previous cursors are
// sealed from the sort keys of its first and last rows, before the guard's row pass.
//
// A cursor is bound to everything that decides which rows come in which order: the entity, the
// source (a database family, or memory), the request as parsed with its page left out (its
// conditions with their values, orders, selects), and what the guard names as the caller's scope
// (under a policy: the rule snapshot's identity, the caller's subjects and context values). A
// cursor for any other binding is refused (CursorMismatch), so a cursor can neither be replayed
// by another caller or tenant, nor outlive a policy change, nor graft one request's position onto
// another's conditions; it carries only sort keys, encrypted, whatever the caller may see.
import type { EntityModel } from "../model/entity-model.js";
import type { ParsedShape, ShapeKind } from "../parse/parse-shapes.js";
import { type CursorKeyring, type CursorValue } from "../cursor/cursor-codec.js";
import { keyOf } from "../execute/sql-texts.js";
import { type FilterResult, type PageEdges, pageEdges } from "../shapes/results.js";
import type { PageBy } from "../shapes/shapes.js";
import { isCursorPage } from "../shapes/shapes.js";

/** What a guard gives a cursor page: the scope cursors are bound to, and the keyring that seals them. */
export interface CursorScope {
  /** The caller as cursors tell callers apart ("" for no caller: the unguarded functions). */
  readonly scope: string;
  readonly keyring: CursorKeyring;
}

/** A cursor page's binding and keyring; null for any other request. */
export interface CursorBinding {
  readonly binding: string;
  readonly keyring: CursorKeyring;
  readonly page: PageBy;
}

/** `scopeOf` is asked only for a cursor page: a guard's scope (subjects sorted, values keyed) is no work for every request. */
export function cursorBindingOf(model: EntityModel, kind: ShapeKind, parsed: ParsedShape, source: string, scopeOf: () => CursorScope): CursorBinding | null {
  const page = (parsed as { page?: PageBy | null }).page ?? null;
  if (!page || !isCursorPage(page)) return null;
  const scope = scopeOf();
  const request = stableText({ ...parsed, page: null });
  const table = model.metadata?.tablePath ?? "";
  return { binding: keyOf(["querylib cursor", model.name, table, source, kind, request, scope.scope]), keyring: scope.keyring, page };
}

/** The values of the request's cursor, or null for an empty one (the first or the last page). */
export function openCursor(cursor: CursorBinding | null): CursorValue[] | null {
  if (!cursor) return null;
  const { page } = cursor;
  const forward = page.after !== undefined && page.after !== null;
  const text = forward ? page.after! : page.before!;
  if (text === "") return null;
  return cursor.keyring.open(text, cursor.binding, forward ? "page.after" : "page.before");
}

/**
 * The result's nextCursor and previousCursor, sealed from its edge rows' keys. A page with no row
 * keeps the position it was asked for (the same cursor, towards where rows may be); the end the
 * walk reached has none.
 */
export function withCursors<R extends FilterResult<unknown>>(result: R, cursor: CursorBinding | null): R {
  const record = result as unknown as Record<symbol, PageEdges | undefined>;
  const edges = record[pageEdges];
  delete record[pageEdges];
  if (!cursor || !edges) return result;
  const seal = (values: readonly unknown[] | null) => (values === null ? null : cursor.keyring.seal(cursor.binding, values as CursorValue[]));
  const given = cursor.page.after ?? cursor.page.before ?? "";
  const position = given === "" ? null : given;
  result.nextCursor = result.hasNextPage ? (edges.last ? seal(edges.last) : position) : null;
  result.previousCursor = result.hasPreviousPage ? (edges.first ? seal(edges.first) : position) : null;
  return result;
}

/**
 * A parsed request as one text, the same for the same request: members in the order the parser
 * built them, big integers and dates spelled out (JSON.stringify alone throws on a bigint).
 */
function stableText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? `${v}n` : v));
}
