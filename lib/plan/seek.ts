// A cursor page's position in the plan (issue #44): the rows strictly after (or before) one row
// in the request's order, the primary key appended as the tie-break, so that every row has one
// place and a walk by cursors meets each row once. The SQL compilers write it as a seek
// predicate (compile/compile-seek.ts) and the in-memory target compares the same keys.
import { Codes, fail } from "../errors/codes.js";
import { isCursorPage, type PageBy } from "../shapes/shapes.js";
import type { EntityModel } from "../model/entity-model.js";
import type { OrderKey, Seek } from "./nodes.js";
import { primaryKeyOrder } from "./projection.js";
import { Direction } from "../shapes/enums.js";

/**
 * The keys a cursor page is ordered and sought by: the request's orders, then each primary key
 * column not already among them, in the direction of the last order (ascending without one). A
 * numbered page breaks ties by the primary key ascending (the spec); a cursor page's tie-break
 * follows the last key, so that an index on that key, which holds the primary key after it, serves
 * the whole order: `createdAt DESC, id DESC` is one backward index scan, where `createdAt DESC,
 * id ASC` made MariaDB sort every matching row for each page (no incremental sort there).
 */
export function seekKeys(root: EntityModel, orders: readonly OrderKey[]): OrderKey[] {
  const keys = [...orders];
  const direction = orders.at(-1)?.direction ?? Direction.Ascending;
  for (const pk of primaryKeyOrder(root)) {
    const key = { ...pk, direction };
    const ordered = orders.some((o) => o.value.kind === "column" && o.value.hops.length === 0 && o.value.column.column === key.value.column.column && o.value.column.propertyPath === key.value.column.propertyPath);
    if (!ordered) keys.push(key);
  }
  return keys;
}

/** A key can be NULL: a nullable column, or a column reached through a reference that may be missing. */
export const nullableKey = (key: OrderKey): boolean =>
  key.value.kind === "reduced" || key.value.column.nullable || key.value.hops.length > 0;

/**
 * The seek of a page: null for a numbered page. `values`: the cursor's, opened by the pipeline
 * (null for an empty cursor, the first or last page). Orders across a collection (MIN/MAX of
 * its elements) are refused: a seek on a correlated aggregate can use no index and would run it
 * per row twice; and a page's keys must be the very values its rows sort by.
 */
export function seekOf(root: EntityModel, orders: readonly OrderKey[], page: PageBy | null, values: readonly unknown[] | null | undefined): Seek | null {
  if (!page || !isCursorPage(page)) return null;
  const at = orders.findIndex((o) => o.value.kind === "reduced");
  if (at >= 0) fail(Codes.CursorOrderAcrossCollection, "a cursor page cannot be ordered by a value across a collection; use pageNumber, or order by a value of the entity or its references", "orders");
  const forward = page.after !== undefined && page.after !== null;
  if (values && values.length !== seekKeys(root, orders).length) {
    fail(Codes.CursorMismatch, "the cursor was made for other orders: start again from the first page", forward ? "page.after" : "page.before");
  }
  return { forward, values: values ?? null };
}
