// The policy trace every guarded result carries: for each field touched, what was done, at
// which level, by which source — enough to answer "why is this column missing?". A result shape
// (the browser client reads it too); guard/trace.ts copies it.
import type { PolicyAction, PolicyLevel, QpTier } from "./policy-enums.js";

export interface PolicyTraceEntry {
  /** The public path as the caller sees it. */
  readonly field: string;
  /** Where, Select, Order, Group, Aggregate, Segment; "Page" and "Query" for request-wide steps. */
  readonly feature: string;
  readonly action: PolicyAction;
  readonly level: PolicyLevel | null;
  readonly source: string;
  /** false only in dry run, for an action that would have been taken. */
  readonly enforced: boolean;
  readonly reason?: string;
  /** For a member whose values are transformed by its decorators: each step that applies, in chain order. */
  readonly transforms?: readonly { readonly action: PolicyAction; readonly source: string }[];
}

export interface PolicyTrace {
  readonly tier: QpTier;
  readonly dryRun: boolean;
  readonly snapshotVersion: number;
  readonly cost: number;
  readonly entries: PolicyTraceEntry[];
}
