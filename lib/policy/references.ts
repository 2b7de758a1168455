// Field references under a guard: a path is read segment by segment against each class's
// aliases and members, so a case variant, an alias or any navigation path that reaches a
// member is the same member, with the same decision.
import { qpRegistry } from "../registry/qp-registry.js";
import { BoundedCache, cacheBudgets, estimateBytes } from "../api/bounded-cache.js";
import { Codes, fail } from "../errors/codes.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import type { EntityModel, Member, MemberScope } from "../model/entity-model.js";
import { maxCachedPathLength, resolvePath } from "../resolve/resolve-path.js";
import type { ResolvedPath } from "../resolve/resolved-path.js";
import { type MemberPolicy, checkAliasCollisions, classPolicyOf } from "./entity-policy.js";

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

function resolveReference(root: EntityModel, raw: string | null | undefined, where: string): Reference {
  if (raw === null || raw === undefined || raw.trim() === "") fail(Codes.InvalidField, "a field path is required", where);
  const segments = raw.split(".").map((s) => s.trim()).filter((s) => s !== "");
  let scope = root.scope;
  let owner = root.target;
  const crossed: PolicyMember[] = [];
  const real: string[] = [];
  const publicNames: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const classPolicy = classPolicyOf(owner);
    checkAliasCollisions(classPolicy, scope);
    const aliased = classPolicy.aliases.get(segment.toLowerCase());
    let member: Member;
    if (aliased) member = scope.find(aliased) as Member;
    else {
      const found = scope.find(segment);
      if (found === "ambiguous") policyError(PolicyErrorCode.AmbiguousFieldName, `"${segment}" matches more than one member case-insensitively`, where);
      // A member with a public alias is reachable only by that alias under a guard.
      if (!found || classPolicy.members.get(found.name)?.alias) fail(Codes.InvalidField, `no member "${segment}" (path "${raw}")`, where);
      member = found;
    }
    const step = policyMember(owner, scope, member);
    real.push(member.name);
    publicNames.push(step.publicName);
    if (i === segments.length - 1) {
      return { canonical: real.join("."), publicPath: publicNames.join("."), path: resolvePath(root, real.join("."), where), end: step, crossed };
    }
    crossed.push(step);
    if (member.kind === "column") resolvePath(root, real.concat(segments.slice(i + 1)).join("."), where); // throws: nothing follows a value
    else if (member.kind === "embedded") {
      scope = member.scope;
      owner = member.target;
    } else {
      const target = member.target();
      scope = target.scope;
      owner = target.target;
    }
  }
  return fail(Codes.InvalidField, `path "${raw}" names nothing`, where);
}

/** Relation hops in a path (embeddeds are not navigation). */
export const navigationDepth = (ref: Reference) => ref.path.hops.length + (ref.path.end.kind === "relation" ? 1 : 0);
