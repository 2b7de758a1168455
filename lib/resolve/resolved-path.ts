// A field path resolved against the model: the relations it crosses and what it ends on.
// Only names found in metadata survive resolution; the request's spelling never reaches SQL.
import type { ColumnMember, EmbeddedMember, EntityModel, RelationMember } from "../model/entity-model.js";

export interface Hop {
  readonly kind: "reference" | "collection";
  readonly member: RelationMember;
  readonly from: EntityModel;
  readonly to: EntityModel;
  // `scope`, the forced predicates a guarded plan puts on the hop, is declared by plan/nodes.ts
  // (a plan node, so this stage does not read the plan).
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
