// The policy's pass over the rows a guarded plan returned, the last stage of a guarded request
// (after transformPlan, compile and execute): the hidden columns the plan transform added go,
// transformed members are transformed (transform/apply.ts), members with an alias get their
// public names, and the result carries its trace.
import type { ShapeKind } from "../parse/parse-shapes.js";
import type { FilterResult, PrivacyBlock, SummaryResult } from "../shapes/results.js";
import { applyTransforms } from "../transform/apply.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import type { QpPolicyOptions } from "../decisions/options.js";
import { applyRenames, renameKeys } from "./renames.js";
import type { SanitizeResult } from "./sanitize-result.js";
import type { PolicyTrace } from "../shapes/policy-trace.js";
import { hiddenKeysOf } from "./plan-pass.js";
import { type PrivacyCharge, noisePrivateAggregates, privacyBlock, releaseGroups, releasedPage } from "./private-release.js";
import { PolicyAction } from "../shapes/policy-enums.js";
import type { ReleaseParts } from "./plan-pass.js";

/** `sanitized.trace` must be the caller's own copy (copyTrace): it becomes the result's. */
export async function transformResult<R extends FilterResult<unknown>>(
  result: R, kind: ShapeKind, sanitized: SanitizeResult, options: QpPolicyOptions, context: QpPolicyContext, release: ReleaseParts | null = null,
  charge: PrivacyCharge | null = null,
): Promise<R & { policy: PolicyTrace }> {
  let rows = result.data as Record<string, unknown>[];
  const { privateRelease } = sanitized.additions;
  let privacy: PrivacyBlock | null = null;
  if (kind === "summary" && privateRelease && release) {
    // A private Summary (#45): its groups released (declared keys, or a noisy count), noised, then
    // its Having, orders and page applied to the noisy values; nothing exact reaches the caller.
    const released = releaseGroups(rows, privateRelease, release.aggregates);
    const intervals = noisePrivateAggregates(released, sanitized.privateAggregates);
    result = releasedPage(result as SummaryResult, released, release) as unknown as R;
    rows = result.data as Record<string, unknown>[];
    privacy = privacyBlock(rows, sanitized.privateAggregates, privateRelease, charge, false, options.privacyBudget.delta, intervals);
    recordCharge(sanitized.trace, privacy);
  } else if (kind === "summary") noisePrivateAggregates(rows, sanitized.privateAggregates);
  // From here nothing sees a private aggregate's exact value (the noise needed the hidden count).
  dropHiddenKeys(rows, kind, sanitized);
  await applyTransforms(rows, sanitized.transforms, { hashSalt: options.hashSalt, vault: options.tokenVault, context });
  renameToPublic(rows, kind, sanitized);
  result.policy = sanitized.trace;
  if (privacy) result.privacy = privacy;
  return result as R & { policy: PolicyTrace };
}

/** The trace's entry for the budget: Charged with the ε this answer cost, or Cached for a stored answer (no count of anything). */
export function recordCharge(trace: PolicyTrace, privacy: PrivacyBlock): void {
  trace.entries.push({
    field: "privacyBudget", feature: "Aggregate", action: privacy.cached ? PolicyAction.Cached : PolicyAction.Charged, level: null, source: "privacyBudget", enforced: true,
    reason: privacy.cached ? "the stored answer of the same Summary in this window, at no cost" : `ε ${privacy.epsilonCharged} charged`,
  });
}

/** Removes the columns the plan transform added for itself (the group floor's count). */
export function dropHiddenKeys(rows: Record<string, unknown>[], kind: ShapeKind, sanitized: SanitizeResult): void {
  const hiddenKeys = hiddenKeysOf(kind, sanitized.additions);
  for (const row of hiddenKeys.length ? rows : []) for (const key of hiddenKeys) delete row[key];
}

/** Members with an alias, and Summary keys, under their public names. */
export function renameToPublic(rows: Record<string, unknown>[], kind: ShapeKind, sanitized: SanitizeResult): void {
  if (kind === "summary") renameKeys(rows, sanitized.keyRenames);
  else applyRenames(rows, sanitized.renames);
}
