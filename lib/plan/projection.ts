// What a query reads and how rows become objects: a tree of nodes, one per entity reached.
// Reference nodes read through joins of the main statement; collection nodes are loaded by
// one more statement per collection level, keyed by their parents' keys (no join fan-out).
import { type ColumnMember, type EntityModel, type MemberScope, columnPathsOf } from "../model/entity-model.js";
import type { Hop, ResolvedPath } from "../resolve/resolved-path.js";
import type { OrderKey, SelectKeys } from "./nodes.js";
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

  private typed: readonly ColumnMember[] | undefined;

  /** Columns returned in a typed result: the visible ones, then the keys 2.1.5 adds (§4.1); computed once, when the tree is built. */
  typedColumns(): readonly ColumnMember[] {
    if (this.typed) return this.typed;
    const visible = this.visibleColumns();
    const added = this.keys.filter((key) => !visible.some((column) => sameColumn(column, key)));
    return (this.typed = added.length === 0 ? visible : [...visible, ...added]);
  }
}

/** Whether two members read the same stored column (an embedded column is reached by more than one member object). */
export const sameColumn = (a: ColumnMember, b: ColumnMember): boolean => a === b || (a.column !== null && a.column === b.column);

/** The canonical path of a key below the root: `prefix` is the relations crossed, each followed by "." ("orders.items."), then the key. */
export const keyPathOf = (prefix: string, key: ColumnMember): string => prefix + key.propertyPath;

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
export function buildProjection(root: EntityModel, selects: readonly ResolvedPath[] | null, keys: SelectKeys): ProjectionNode {
  const top = new ProjectionNode(root);
  if (!selects) {
    top.whole = true;
    return top;
  }
  const decided = new Set<ProjectionNode>();
  for (const path of selects) {
    let node = top;
    let prefix = "";
    for (const hop of path.hops) {
      node = node.child(hop);
      prefix += `${hop.member.name}.`;
      if (decided.has(node)) continue;
      decided.add(node);
      node.keys = keys === "all" ? node.model.primaryKeys : node.model.primaryKeys.filter((key) => keys.has(keyPathOf(prefix, key)));
    }
    const end = path.end;
    if (end.kind === "column") node.explicit.set(end.column.propertyPath, end.column);
    else if (end.kind === "embedded") {
      for (const column of allColumns(end.embedded.scope)) node.explicit.set(column.propertyPath, column);
    } else node.child(end.hop).whole = true;
  }
  return top;
}

