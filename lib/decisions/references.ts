// Field references under a guard: a path is read segment by segment against each class's
// aliases and members, so a case variant, an alias or any navigation path that reaches a
// member is the same member, with the same decision.
import { qpRegistry } from "../registry/qp-registry.js";
import { BoundedCache, cacheBudgets, estimateBytes } from "../cache/bounded-cache.js";
import { Codes, fail } from "../errors/codes.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import type { EntityModel, Member, MemberScope } from "../model/entity-model.js";
import { type SegmentFinder, maxCachedPathLength, walkPath } from "../resolve/resolve-path.js";
import type { ResolvedPath } from "../resolve/resolved-path.js";
import { checkAliasCollisions, classPolicyOf } from "./entity-policy.js";
import type { MemberPolicy } from "../registry/qp-registry.js";

export interface PolicyMember {
  readonly owner: Function;
  readonly member: Member;
  readonly policy: MemberPolicy | undefined;
  readonly publicName: string;
}

export interface Reference {
  /** Real property names: what the engine resolves. */
  readonly canonical: string;
  /** Public names (aliases applied): what the caller sees. */
  readonly publicPath: string;
  readonly path: ResolvedPath;
  /** The member the path ends on: it decides. */
  readonly end: PolicyMember;
  /** Navigation members crossed (relations and embeddeds). */
  readonly crossed: readonly PolicyMember[];
}

export function policyMember(owner: Function, scope: MemberScope, member: Member): PolicyMember {
  const policy = classPolicyOf(owner).members.get(member.name);
  return { owner, member, policy, publicName: policy?.alias ?? member.name };
}

/**
 * References already resolved, per root model and text as the caller wrote it: a path resolves
 * the same way until the decorator registry changes (its change count picks the memo's owner
 * object, so a change leaves the old entries to age out). Only successful ones are kept, never a
 * failure (its message names where it was written), texts of at most maxCachedPathLength, within
 * cacheBudgets.paths, since case variants of one path are each a text of their own.
 */
export const references = new BoundedCache<Reference>(cacheBudgets.paths, (reference) => estimateBytes(reference));
const referenceOwners = new WeakMap<EntityModel, { readonly version: number }>();

/** The member a field path names under a guard (aliases, case variants, navigations); shared and never to be changed. */
export function reference(root: EntityModel, raw: string | null | undefined, where: string): Reference {
  let owner = referenceOwners.get(root);
  if (!owner || owner.version !== qpRegistry.changeCount) referenceOwners.set(root, (owner = { version: qpRegistry.changeCount }));
  const cacheable = typeof raw === "string" && raw.length <= maxCachedPathLength;
  let known = cacheable ? references.get(owner, raw) : undefined;
  if (known === undefined) {
    known = resolveReference(root, raw, where);
    if (cacheable) references.set(owner, raw, known);
  }
  return known;
}

/**
 * Under a guard a segment is a public name: an alias (case-insensitive), else a member's own name
 * (exactly, else its single case-insensitive match) unless that member has an alias, which makes
 * it reachable only by the alias.
 */
const findPublic: SegmentFinder = (owner, _ownerName, scope, segment, raw, where) => {
  const classPolicy = classPolicyOf(owner);
  checkAliasCollisions(classPolicy, scope);
  const aliased = classPolicy.aliases.get(segment.toLowerCase());
  if (aliased) return scope.find(aliased) as Member;
  const found = scope.find(segment);
  if (found === "ambiguous") policyError(PolicyErrorCode.AmbiguousFieldName, `"${segment}" matches more than one member case-insensitively`, where);
  if (!found || classPolicy.members.get(found.name)?.alias) fail(Codes.InvalidField, `no member "${segment}" (path "${raw}")`, where);
  return found;
};

/** The one resolver (resolve/resolve-path.ts), reading segments as public names. */
function resolveReference(root: EntityModel, raw: string | null | undefined, where: string): Reference {
  const { path, steps } = walkPath(root, raw, where, findPublic);
  const members = steps.map((step) => policyMember(step.owner, step.scope, step.member));
  const end = members.pop()!;
  return { canonical: path.path, publicPath: [...members, end].map((m) => m.publicName).join("."), path, end, crossed: members };
}

/** Relation hops in a path (embeddeds are not navigation). */
export const navigationDepth = (ref: Reference) => ref.path.hops.length + (ref.path.end.kind === "relation" ? 1 : 0);
