// The policy's pass over the rows a guarded plan returned, the last stage of a guarded request
// (after transformPlan, compile and execute): the hidden columns the plan transform added go,
// transformed members are transformed (transform/apply.ts), members with an alias get their
// public names, and the result carries its trace.
import type { ShapeKind } from "../parse/parse-shapes.js";
import type { FilterResult } from "../shapes/results.js";
import { applyTransforms } from "../transform/apply.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import type { QpPolicyOptions } from "../decisions/options.js";
import { applyRenames, renameKeys } from "./renames.js";
import type { SanitizeResult } from "./sanitize-result.js";
import type { PolicyTrace } from "../shapes/policy-trace.js";
import { hiddenKeysOf } from "./plan-pass.js";
import { noisePrivateAggregates } from "./private-release.js";

/** `sanitized.trace` must be the caller's own copy (copyTrace): it becomes the result's. */
export async function transformResult<R extends FilterResult<unknown>>(
  result: R, kind: ShapeKind, sanitized: SanitizeResult, options: QpPolicyOptions, context: QpPolicyContext,
): Promise<R & { policy: PolicyTrace }> {
  const rows = result.data as Record<string, unknown>[];
  // First: nothing after this sees a private aggregate's exact value (it needs the hidden count).
  if (kind === "summary") noisePrivateAggregates(rows, sanitized.privateAggregates);
  dropHiddenKeys(rows, kind, sanitized);
  await applyTransforms(rows, sanitized.transforms, { hashSalt: options.hashSalt, vault: options.tokenVault, context });
  renameToPublic(rows, kind, sanitized);
  result.policy = sanitized.trace;
  return result as R & { policy: PolicyTrace };
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
