// Copies of the policy trace (its shape: shapes/policy-trace.ts).
import type { PolicyTrace, PolicyTraceEntry } from "../shapes/policy-trace.js";

/** An entry a caller may change without touching the one it was copied from. */
export const copyEntry = (e: PolicyTraceEntry): PolicyTraceEntry => (e.transforms ? { ...e, transforms: e.transforms.map((t) => ({ ...t })) } : { ...e });

/** A trace of its own for each result: a cached plan's trace is shared. */
export const copyTrace = (trace: PolicyTrace): PolicyTrace => ({ ...trace, entries: trace.entries.map(copyEntry) });
