import { BoundedCache, cacheBudgets, estimateBytes } from "../api/bounded-cache.js";
import { Codes, fail } from "../errors/codes.js";
import type { EmbeddedMember, EntityModel, MemberScope } from "../model/entity-model.js";
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

/** Resolved paths are pure functions of (model, text): cached per model, so repeated requests skip the walk. */
export function resolvePath(root: EntityModel, raw: string | null | undefined, where: string): ResolvedPath {
  const cacheable = typeof raw === "string" && raw.length <= maxCachedPathLength;
  const hit = cacheable ? resolvedPaths.get(root, raw) : undefined;
  if (hit) return hit;
  const path = walkPath(root, raw, where);
  if (cacheable) resolvedPaths.set(root, raw, path);
  return path;
}

function walkPath(root: EntityModel, raw: string | null | undefined, where: string): ResolvedPath {
  if (raw === null || raw === undefined || raw.trim() === "") fail(Codes.InvalidField, "a field path is required", where);
  const segments = raw.split(".").map((s) => s.trim()).filter((s) => s !== "");
  const hops: Hop[] = [];
  const names: string[] = [];
  let owner = root;
  let scope: MemberScope = root.scope;
  let embedded: EmbeddedMember | null = null;
  let prefix = "";
  for (let i = 0; i < segments.length; i++) {
    const found = scope.find(segments[i]!);
    if (found === "ambiguous") fail(AmbiguousSegment, `"${segments[i]}" matches more than one member of ${owner.name} case-insensitively; use the exact name`, where);
    if (!found) fail(Codes.InvalidField, `${owner.name} has no member "${segments[i]}" (path "${raw}")`, where);
    names.push(found.name);
    const last = i === segments.length - 1;
    if (found.kind === "column") {
      if (!last) fail(Codes.InvalidField, `"${found.name}" is a value; "${segments.slice(i + 1).join(".")}" cannot follow it (path "${raw}")`, where);
      return { path: names.join("."), root, hops, end: { kind: "column", column: found }, owner };
    }
    if (found.kind === "embedded") {
      embedded = found;
      prefix += `${found.name}.`;
      scope = found.scope;
      if (last) return done(root, names, hops, { kind: "embedded", embedded, prefix }, owner);
      continue;
    }
    const hop: Hop = { kind: found.kind, member: found, from: owner, to: found.target() };
    if (last) return done(root, names, hops, { kind: "relation", hop }, owner);
    hops.push(hop);
    owner = hop.to;
    scope = owner.scope;
    embedded = null;
    prefix = "";
  }
  return fail(Codes.InvalidField, `path "${raw}" names nothing`, where);
}

const done = (root: EntityModel, names: string[], hops: Hop[], end: PathEnd, owner: EntityModel): ResolvedPath => ({
  path: names.join("."),
  root,
  hops,
  end,
  owner,
});
