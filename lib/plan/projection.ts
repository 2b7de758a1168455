// What a query reads and how rows become objects: a tree of nodes, one per entity reached.
// Reference nodes read through joins of the main statement; collection nodes are loaded by
// one more statement per collection level, keyed by their parents' keys (no join fan-out).
import { type ColumnMember, type EntityModel, type MemberScope, columnPathsOf } from "../model/entity-model.js";
import type { Hop, ResolvedPath } from "../resolve/resolved-path.js";
import type { OrderKey } from "./nodes.js";
import { Direction } from "../shapes/enums.js";

/** Ties are broken by primary key ascending, so paging is deterministic on every target. */
export function primaryKeyOrder(root: EntityModel): OrderKey[] {
  return root.primaryKeys.map((column) => ({ value: { kind: "column", hops: [], column }, direction: Direction.Ascending }));
}

export interface ProjectedColumn {
  readonly member: ColumnMember;
  /** Result column alias; hidden columns (keys) are read but not returned unless selected. */
  alias: string;
  readonly hidden: boolean;
}

export class ProjectionNode {
  whole = false;
  /**
   * The primary keys a typed result returns beside this node's explicit members (2.1.5 §4.1:
   * `contact.email` gives a contact with its email and its id; a collection's elements carry
   * theirs; at every level below the root, never on the root, never in a dynamic row). Under a
   * guard only the keys the caller may select as stored (buildProjection's `keys`).
   */
  keys: readonly ColumnMember[] = [];
  readonly explicit = new Map<string, ColumnMember>();
  readonly references = new Map<string, { hop: Hop; node: ProjectionNode }>();
  readonly collections = new Map<string, { hop: Hop; node: ProjectionNode }>();
  /** Filled by the compiler: every column read for this node, including hidden keys. */
  columns: ProjectedColumn[] = [];

  constructor(readonly model: EntityModel) {}

  child(hop: Hop): ProjectionNode {
    const map = hop.kind === "reference" ? this.references : this.collections;
    let entry = map.get(hop.member.name);
    if (!entry) map.set(hop.member.name, (entry = { hop, node: new ProjectionNode(hop.to) }));
    return entry.node;
  }

  /** Columns returned to the caller: explicit selections win over a whole-object request (2.1.5). */
  visibleColumns(): readonly ColumnMember[] {
    if (this.explicit.size > 0) return [...this.explicit.values()];
    return this.whole ? allColumns(this.model.scope) : [];
  }

  /** Columns returned in a typed result: the visible ones, then the keys 2.1.5 adds (§4.1). */
  typedColumns(): readonly ColumnMember[] {
    const visible = this.visibleColumns();
    const added = this.keys.filter((key) => !visible.some((column) => column === key || (column.column !== null && column.column === key.column)));
    return added.length === 0 ? visible : [...visible, ...added];
  }
}

/**
 * Which keys a typed Select adds (ProjectionNode.keys): every one (undefined, unguarded), or
 * those whose path (keyPathOf) a guard lets the caller select as stored.
 */
export type SelectKeys = ReadonlySet<string> | undefined;

/** The canonical path of a key below the root: the relations crossed, then the key ("orders.items.id"). */
export function keyPathOf(hops: readonly Hop[], key: ColumnMember): string {
  return [...hops.map((hop) => hop.member.name), key.propertyPath].join(".");
}

const scopeColumns = new WeakMap<MemberScope, readonly ColumnMember[]>();

/** Every column of a scope, embedded members flattened (columnPathsOf), as a list kept per scope. */
export function allColumns(scope: MemberScope): readonly ColumnMember[] {
  let columns = scopeColumns.get(scope);
  if (!columns) scopeColumns.set(scope, (columns = columnPathsOf(scope).map((c) => c.column)));
  return columns;
}

/**
 * The projection tree of a select list; no list means the whole root entity, without relations.
 * `keys`: which keys a typed result adds below the root (SelectKeys; undefined: all of them).
 */
export function buildProjection(root: EntityModel, selects: readonly ResolvedPath[] | null, keys?: SelectKeys): ProjectionNode {
  const top = new ProjectionNode(root);
  if (!selects) {
    top.whole = true;
    return top;
  }
  for (const path of selects) {
    let node = top;
    path.hops.forEach((hop, i) => {
      node = node.child(hop);
      if (node.keys.length === 0) node.keys = grantedKeys(node.model, path.hops.slice(0, i + 1), keys);
    });
    const end = path.end;
    if (end.kind === "column") node.explicit.set(end.column.propertyPath, end.column);
    else if (end.kind === "embedded") {
      for (const column of allColumns(end.embedded.scope)) node.explicit.set(column.propertyPath, column);
    } else node.child(end.hop).whole = true;
  }
  return top;
}

function grantedKeys(model: EntityModel, hops: readonly Hop[], keys: SelectKeys): readonly ColumnMember[] {
  return keys === undefined ? model.primaryKeys : model.primaryKeys.filter((key) => keys.has(keyPathOf(hops, key)));
}
