// Shared helpers of the policy tests: engines, prepared contexts, request builders, error
// assertions and the oracle (plain JS over policyData(), never the engine).
import assert from "node:assert/strict";
import {
  LogicException, PolicyErrorCode, PolicyException, QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTier,
  type FilterResult, type PolicyTrace, type PolicyTraceEntry, type QpPolicyOptionsInput,
} from "../../lib/index.js";
import { policyData } from "./domain.js";
import { wardData } from "./more-domain.js";

export type Shape = Record<string, unknown>;

/** A guarded result: always carries its policy trace. */
export type Guarded<T = Record<string, unknown>> = FilterResult<T> & { policy: PolicyTrace };

export const convenience = new QpPolicyEngine({});
export const strict = new QpPolicyEngine({ tier: QpTier.Strict });
export const bothTiers = [
  { tier: "Convenience", engine: convenience },
  { tier: "Strict", engine: strict },
] as const;

export function engineWith(options: QpPolicyOptionsInput): QpPolicyEngine {
  return new QpPolicyEngine(options);
}

/** A context for a tenant, prepared by `engine` (the usual request context of these tests). */
export function tenantContext(engine: QpPolicyEngine = convenience, tenant = "t-1"): Promise<QpPolicyContext> {
  return engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Tenant, tenant).withValue("tenantId", tenant));
}

/** A condition; dataType Number when every value is a JS number, else the given one (default Text). */
export function cond(field: string, operator: string, values: unknown[] = [], sort = 1, dataType?: string): Shape {
  const type = dataType ?? (values.length > 0 && values.every((v) => typeof v === "number") ? "Number" : undefined);
  return { sort, field, operator, values, ...(type ? { dataType: type } : {}) };
}

export function and(...conditions: Shape[]): Shape {
  return { connector: "And", conditions };
}

export function or(...conditions: Shape[]): Shape {
  return { connector: "Or", conditions };
}

export function group(connector: "And" | "Or", conditions: Shape[], subConditionGroups: Shape[] = [], sort = 1): Shape {
  return { sort, connector, conditions, subConditionGroups };
}

export function whereShape(...conditions: Shape[]): Shape {
  return { conditionGroup: and(...conditions) };
}

/** Awaits `action` and asserts it fails with the PolicyException of `code` (and its spec name). */
export async function expectPolicyError(action: () => Promise<unknown>, code: PolicyErrorCode, messagePart?: string | RegExp): Promise<PolicyException> {
  let caught: unknown;
  try {
    const result = await action();
    assert.fail(`expected PolicyException ${PolicyErrorCode[code]} (${code}), got a result: ${JSON.stringify(result, replacer).slice(0, 600)}`);
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    caught = error;
  }
  assert.ok(caught instanceof PolicyException, `expected a PolicyException ${PolicyErrorCode[code]}, got ${String(caught)}`);
  assert.ok(caught instanceof LogicException, "a PolicyException is a LogicException");
  assert.equal(caught.errorCode, code, `expected error code ${code} (${PolicyErrorCode[code]}), got ${caught.errorCode} (${caught.message})`);
  assert.equal(caught.code, PolicyErrorCode[code]);
  if (messagePart !== undefined) {
    if (typeof messagePart === "string") assert.ok(caught.message.includes(messagePart), `message "${caught.message}" should mention "${messagePart}"`);
    else assert.match(caught.message, messagePart);
  }
  return caught;
}

/** Awaits `action` and asserts it fails with a (non-policy) LogicException of `code`. */
export async function expectLogicError(action: () => Promise<unknown>, code: string): Promise<LogicException> {
  let caught: unknown;
  try {
    const result = await action();
    assert.fail(`expected LogicException ${code}, got a result: ${JSON.stringify(result, replacer).slice(0, 600)}`);
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    caught = error;
  }
  assert.ok(caught instanceof LogicException, `expected a LogicException ${code}, got ${String(caught)}`);
  assert.ok(!(caught instanceof PolicyException) || caught.code === code, `expected ${code}, got the PolicyException ${(caught as PolicyException).code}`);
  assert.equal(caught.code, code, caught.message);
  return caught;
}

function replacer(_key: string, value: unknown) {
  return typeof value === "bigint" ? String(value) : value;
}

/** The trace entries for one public field path and feature. */
export function entriesFor(trace: PolicyTrace, field: string, feature: string): PolicyTraceEntry[] {
  return trace.entries.filter((e) => e.field === field && e.feature === feature);
}

/** Asserts exactly one entry for (field, feature) with the given members. */
export function expectEntry(trace: PolicyTrace, field: string, feature: string, expected: Partial<PolicyTraceEntry>): PolicyTraceEntry {
  const found = entriesFor(trace, field, feature);
  assert.equal(found.length, 1, `expected one trace entry for ${field}/${feature}, got ${JSON.stringify(trace.entries)}`);
  const entry = found[0]!;
  for (const [key, value] of Object.entries(expected)) assert.deepEqual((entry as unknown as Record<string, unknown>)[key], value, `trace ${field}/${feature}.${key}: ${JSON.stringify(entry)}`);
  return entry;
}

// ---- the oracle -----------------------------------------------------------------------------

export const oracle = policyData();
export const patientsOf = (tenant: string) => oracle.patients.filter((p) => p.tenantId === tenant);
export const t1 = patientsOf("t-1");
export const t2 = patientsOf("t-2");
export const idsOf = (rows: readonly { id: number }[]) => rows.map((r) => r.id);
export const byId = <T extends { id: number }>(rows: readonly T[]) => [...rows].sort((a, b) => a.id - b.id);
/** The default projection of Patient under a guard: every root column but ssn and internalNote, email as "mail". */
export const patientDefaultKeys = ["id", "tenantId", "name", "mail", "diagnosis", "age", "salary", "ward", "notes", "doctorId"];
export function patientDefaultRow(p: (typeof oracle.patients)[number]): Record<string, unknown> {
  return { id: p.id, tenantId: p.tenantId, name: p.name, mail: p.email, diagnosis: p.diagnosis, age: p.age, salary: p.salary, ward: p.ward, notes: p.notes, doctorId: p.doctorId };
}

/**
 * The trace source (and error text) of the fail-closed decision: a path that navigates into an
 * entity scoped by QpForceWhere (Patient) is denied for whatever feature it is used for.
 */
export const scopedNavigationSource = "QpForceWhere on Patient.tenantId (rows of Patient are reachable only as the query's root)";

/**
 * The whole trace source of such a refusal in this domain: the rule's words, then why the hop is
 * not proven tenant-safe (lib/decisions/tenant-navigation.ts): Doctor.patients or Visit.patient,
 * neither of which is scoped.
 */
export function scopedNavigationTrace(path: string): string {
  const [from, member] = /(^|\.)patients(\.|$)/i.test(path) ? ["Doctor", "patients"] : ["Visit", "patient"];
  return `${scopedNavigationSource}; not proven tenant-safe: ${from}.${member} → Patient: ${from} has no QpForceWhere, so nothing confines its rows to the caller's "tenantId"`;
}

/** The unscoped Ward/Bed pair (more-domain.ts), for navigation tests that must not cross Patient. */
export const wardOracle = wardData();
export const bedsOf = (...wardIds: number[]) => wardOracle.beds.filter((b) => wardIds.includes(b.wardId));
/** The default projection of Ward under a guard: accessCode left out, phoneNumber as "phone". */
export function wardDefaultRow(w: (typeof wardOracle.wards)[number]): Record<string, unknown> {
  return { id: w.id, name: w.name, phone: w.phoneNumber };
}
/** The default projection of Bed under a guard: lockCode left out, serialNo as "tag". */
export function bedDefaultRow(b: (typeof wardOracle.beds)[number]): Record<string, unknown> {
  return { id: b.id, wardId: b.wardId, label: b.label, tag: b.serialNo };
}

/** Asserts no row of another tenant: every row's tenantId (when present) is `tenant`. */
export function assertTenant(rows: readonly Record<string, unknown>[], tenant = "t-1"): void {
  for (const row of rows) if ("tenantId" in row) assert.equal(row.tenantId, tenant, `row ${JSON.stringify(row)} belongs to another tenant`);
}

/** Plain copies (own enumerable members), to compare typed results structurally. */
export const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Hits a cache counted while `action` runs (0 on the in-memory target, which has nothing to cache). */
/** The guarded plans and sanitized shapes of the engine that prepared `context` (guarded-caches.ts). */
export const guardedCaches = (context: QpPolicyContext) => QpPolicyEngine.of(context).caches;

export async function hitsDuring(cache: { readonly stats: { readonly hits: number } }, action: () => Promise<unknown>): Promise<number> {
  const before = cache.stats.hits;
  await action();
  return cache.stats.hits - before;
}
