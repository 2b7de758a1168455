import { BoundedCache, cacheBudgets, estimateBytes } from "../cache/bounded-cache.js";
import { Codes, fail } from "../errors/codes.js";
import type { EmbeddedMember, EntityModel, Member, MemberScope } from "../model/entity-model.js";
import type { Hop, PathEnd, ResolvedPath } from "./resolved-path.js";

/** Raised for a path segment matching two members case-insensitively; the policy layer maps it to code 13. */
export const AmbiguousSegment = "AmbiguousFieldName";

/**
 * Resolves a dotted path. Segments are trimmed and empty segments dropped (as 2.1.5); each one
 * matches a property exactly, else its single case-insensitive match.
 */
export const resolvedPaths = new BoundedCache<ResolvedPath>(cacheBudgets.paths, (path) => estimateBytes(path));

/** Texts longer than this are resolved every time: no real path is, and padding would only fill the cache. */
export const maxCachedPathLength = 256;

/**
 * How a segment names a member of `scope` (owned by the class `owner`: an entity, or an embedded
 * object's class): the one place where the two spellings of a path differ. Unguarded, a segment
 * is a property name (findDeclared); under a guard, the policy's public names (aliases) are
 * (decisions/references.ts). It returns the member or throws, naming the path as written.
 */
export type SegmentFinder = (owner: Function, ownerName: string, scope: MemberScope, segment: string, raw: string, where: string) => Member;

/** A member crossed or reached by a path, with the class that declares it. */
export interface PathStep {
  readonly owner: Function;
  readonly scope: MemberScope;
  readonly member: Member;
}

/** Property names as declared: exactly, else the single case-insensitive match. */
export const findDeclared: SegmentFinder = (_owner, ownerName, scope, segment, raw, where) => {
  const found = scope.find(segment);
  if (found === "ambiguous") fail(AmbiguousSegment, `"${segment}" matches more than one member of ${ownerName} case-insensitively; use the exact name`, where);
  if (!found) fail(Codes.InvalidField, `${ownerName} has no member "${segment}" (path "${raw}")`, where);
  return found;
};

/** Resolved paths are pure functions of (model, text): cached per model, so repeated requests skip the walk. */
export function resolvePath(root: EntityModel, raw: string | null | undefined, where: string): ResolvedPath {
  const cacheable = typeof raw === "string" && raw.length <= maxCachedPathLength;
  const hit = cacheable ? resolvedPaths.get(root, raw) : undefined;
  if (hit) return hit;
  const { path } = walkPath(root, raw, where);
  if (cacheable) resolvedPaths.set(root, raw, path);
  return path;
}

/**
 * The one walk of a path: segment by segment, each named as `find` says, through embedded
 * objects and relations. Returns the resolved path (canonical: property names as declared) and
 * each member on the way with its declaring class, from which the policy reads public names
 * and decisions.
 */
export function walkPath(root: EntityModel, raw: string | null | undefined, where: string, find: SegmentFinder = findDeclared): { path: ResolvedPath; steps: PathStep[] } {
  if (raw === null || raw === undefined || raw.trim() === "") fail(Codes.InvalidField, "a field path is required", where);
  const segments = raw.split(".").map((s) => s.trim()).filter((s) => s !== "");
  const hops: Hop[] = [];
  const names: string[] = [];
  const steps: PathStep[] = [];
  let owner = root;
  let ownerClass: Function = root.target;
  let scope: MemberScope = root.scope;
  let embedded: EmbeddedMember | null = null;
  let prefix = "";
  const done = (end: PathEnd) => ({ path: { path: names.join("."), root, hops, end, owner }, steps });
  for (let i = 0; i < segments.length; i++) {
    const found = find(ownerClass, owner.name, scope, segments[i]!, raw, where);
    names.push(found.name);
    steps.push({ owner: ownerClass, scope, member: found });
    const last = i === segments.length - 1;
    if (found.kind === "column") {
      if (!last) fail(Codes.InvalidField, `"${found.name}" is a value; "${segments.slice(i + 1).join(".")}" cannot follow it (path "${raw}")`, where);
      return done({ kind: "column", column: found });
    }
    if (found.kind === "embedded") {
      embedded = found;
      prefix += `${found.name}.`;
      scope = found.scope;
      ownerClass = found.target;
      if (last) return done({ kind: "embedded", embedded, prefix });
      continue;
    }
    const hop: Hop = { kind: found.kind, member: found, from: owner, to: found.target() };
    if (last) return done({ kind: "relation", hop });
    hops.push(hop);
    owner = hop.to;
    ownerClass = owner.target;
    scope = owner.scope;
    embedded = null;
    prefix = "";
  }
  return fail(Codes.InvalidField, `path "${raw}" names nothing`, where);
}
