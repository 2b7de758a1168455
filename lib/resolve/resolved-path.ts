// A field path resolved against the model: the relations it crosses and what it ends on.
// Only names found in metadata survive resolution; the request's spelling never reaches SQL.
import type { ColumnMember, EmbeddedMember, EntityModel, RelationMember } from "../model/entity-model.js";
import type { Predicate } from "../plan/nodes.js";

export interface Hop {
  readonly kind: "reference" | "collection";
  readonly member: RelationMember;
  readonly from: EntityModel;
  readonly to: EntityModel;
  /**
   * The forced predicates (QpForceWhere) of `to`, on `to`'s own columns, that every row this hop
   * reaches must satisfy: a guarded plan puts them on each hop into a scoped entity
   * (policy/tenant-navigation.ts); the join's ON, the EXISTS' WHERE and the in-memory evaluator
   * apply them, so a row outside the caller's scope is as absent as a missing one.
   */
  readonly scope?: readonly Predicate[];
}

export type PathEnd =
  | { readonly kind: "column"; readonly column: ColumnMember }
  | { readonly kind: "embedded"; readonly embedded: EmbeddedMember; readonly prefix: string }
  | { readonly kind: "relation"; readonly hop: Hop };

export interface ResolvedPath {
  /** Canonical path: property names as declared, joined by dots ("contact.email"). */
  readonly path: string;
  readonly root: EntityModel;
  /** Relations crossed before the end, in order. */
  readonly hops: readonly Hop[];
  readonly end: PathEnd;
  /** The entity that owns the end (root when no hop). */
  readonly owner: EntityModel;
}

export const crossesCollection = (path: ResolvedPath) => path.hops.some((h) => h.kind === "collection");
export const endsOnColumn = (path: ResolvedPath): path is ResolvedPath & { end: { kind: "column"; column: ColumnMember } } =>
  path.end.kind === "column";
