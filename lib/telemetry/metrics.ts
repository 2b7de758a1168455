// OpenTelemetry metrics of QueryLib, through @opentelemetry/api only (issue #47): the host's SDK,
// if it registered one, aggregates and exports them; without one every call below returns at its
// first line (the API's no-op meter). Names, units and attributes are listed in
// docs/OPERATIONS.md ("Metrics").
//
// Each metric is recorded once, where the code decides it: the driver (request duration,
// refusals, plan-cache lookups, through spans.ts's queryRun and the driver's cache lookup), the
// stages (spans.ts's stage: stage durations), the row pass (vault round trips), the guard (decisions, budget
// charges), the engine (rule snapshots, observed), the Nest module (audit events).
//
// What never goes into a metric: a value the caller sent, a stored value, a user or subject id,
// an error's message. Attributes are names from bounded sets: shapes, stages, outcomes, codes,
// actions, features, entity names, and field paths of exposed entities only (a path the entity
// model resolved, never a text the caller chose freely).
//
// The instruments are created once per meter provider, lazily, from
// metrics.getMeter("querylib", version): a host (or a test) may register, disable and register a
// provider again, and instruments of the first one would stay bound to it.
import { type Attributes, type Counter, type Histogram, type Meter, type MeterProvider, type ObservableResult, ValueType, createNoopMeter, metrics } from "@opentelemetry/api";
import { cacheBudgets } from "../cache/bounded-cache.js";
import { LogicException } from "../errors/logic-exception.js";
import { libraryVersion } from "./version.js";

/** Metric names. */
export const MetricNames = {
  /** Histogram (s): one query run (toListAsync, a guarded run, statements, an export), by shape and outcome. */
  requestDuration: "querylib.request.duration",
  /** Histogram (s): one stage of a run (rules, policy, plan, statement, transform, vault), by stage and outcome. */
  stageDuration: "querylib.stage.duration",
  /** Counter: the guard's decisions, by entity, field (exposed entities only), feature and action. */
  decisions: "querylib.policy.decisions",
  /** Counter: refused runs, by shape and code. */
  refusals: "querylib.refusals",
  /** Counter: plan-cache lookups of database requests, by result (hit or miss). */
  planCacheLookups: "querylib.plan_cache.lookups",
  /** Observable gauge (By): the estimated bytes the plan caches hold. */
  planCacheUsage: "querylib.plan_cache.usage",
  /** Observable gauge (s): age of the oldest rule snapshot in use among the process's live engines. */
  snapshotAge: "querylib.rules.snapshot.age",
  /** Observable gauge: the lowest rule snapshot version in use among the process's live engines. */
  snapshotVersion: "querylib.rules.snapshot.version",
  /** Observable gauge: how many live engines are in each notification channel state (by state). */
  notificationState: "querylib.rules.notifications.state",
  /** Counters: audit events handed to the sink, written by it, whose write failed, and drained with no sink to write them. */
  auditQueued: "querylib.audit.events.queued",
  auditWritten: "querylib.audit.events.written",
  auditFailed: "querylib.audit.events.failed",
  auditDropped: "querylib.audit.events.dropped",
  /** Counters: token vault round trips, and those that failed. */
  vaultRoundTrips: "querylib.vault.round_trips",
  vaultFailures: "querylib.vault.failures",
  /** Counter: budget ledger charges, by kind (guesses, privacy) and outcome (charged, exhausted, unavailable); never an amount. */
  budgetCharges: "querylib.budget.charges",
} as const;

/** Metric attribute names (querylib.shape, querylib.entity and querylib.error.code as on the spans). */
export const MetricAttr = {
  shape: "querylib.shape",
  outcome: "querylib.outcome",
  errorCode: "querylib.error.code",
  stage: "querylib.stage",
  entity: "querylib.entity",
  field: "querylib.field",
  feature: "querylib.feature",
  action: "querylib.action",
  cacheResult: "querylib.plan_cache.result",
  notificationState: "querylib.rules.notifications.state",
  budgetKind: "querylib.budget.kind",
  budgetOutcome: "querylib.budget.outcome",
} as const;

/** How a run or a stage ended: returned, refused with a code (LogicException, PolicyException), or failed otherwise. */
export type Outcome = "ok" | "refused" | "error";

/**
 * The code of a refusal: a LogicException's (PolicyException's included), QueryLib's own closed
 * set of codes; null for anything else (a driver's error carries a `code` too, a SQLSTATE or an
 * errno, but it is a failure, not a refusal).
 */
export function refusalCode(error: unknown): string | null {
  return error instanceof LogicException ? error.code : null;
}

export const outcomeOf = (error: unknown): Outcome => (error === undefined ? "ok" : refusalCode(error) !== null ? "refused" : "error");

interface Instruments {
  readonly requestDuration: Histogram;
  readonly stageDuration: Histogram;
  readonly decisions: Counter;
  readonly refusals: Counter;
  readonly planCacheLookups: Counter;
  readonly auditQueued: Counter;
  readonly auditWritten: Counter;
  readonly auditFailed: Counter;
  readonly auditDropped: Counter;
  readonly vaultRoundTrips: Counter;
  readonly vaultFailures: Counter;
  readonly budgetCharges: Counter;
}

/** What a rule snapshot source reports (the engine's health()). */
export interface ObservedSnapshots {
  health(): { readonly snapshotVersion: number; readonly snapshotAgeMs: number; readonly notifications: string };
}

/**
 * Engines whose snapshots the gauges report, held weakly: an engine dropped by its host leaves the
 * gauges. The gauges report the process as a whole (the oldest snapshot, the lowest version, the
 * number of engines per channel state), never one series per engine: a host (or a test run) that
 * makes thousands of engines would otherwise grow the series without bound, and a metric's
 * attributes must stay few (the SDK folds the excess into an overflow series).
 */
const observed = new Set<WeakRef<ObservedSnapshots>>();

/** Reports an engine's rule snapshot (age, version, notification state) on the observable gauges. */
export function observeSnapshots(source: ObservedSnapshots): void {
  for (const ref of observed) if (ref.deref() === undefined) observed.delete(ref);
  observed.add(new WeakRef(source));
}

/** Stops reporting a source (tests that observe a stand-in engine; an engine is forgotten when collected). */
export function forgetSnapshots(source: ObservedSnapshots): void {
  for (const ref of observed) if (ref.deref() === source || ref.deref() === undefined) observed.delete(ref);
}

function liveSnapshots(): ReturnType<ObservedSnapshots["health"]>[] {
  const health: ReturnType<ObservedSnapshots["health"]>[] = [];
  for (const ref of observed) {
    const source = ref.deref();
    if (source) health.push(source.health());
    else observed.delete(ref);
  }
  return health;
}

const bucketsSeconds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function create(meter: Meter): Instruments {
  const seconds = (name: string, description: string) => meter.createHistogram(name, { description, unit: "s", valueType: ValueType.DOUBLE, advice: { explicitBucketBoundaries: bucketsSeconds } });
  const count = (name: string, description: string, unit = "{event}") => meter.createCounter(name, { description, unit, valueType: ValueType.INT });
  const usage = meter.createObservableGauge(MetricNames.planCacheUsage, { description: "Estimated bytes the plan caches hold", unit: "By", valueType: ValueType.INT });
  usage.addCallback((result) => result.observe(cacheBudgets.plans.used));
  const age = meter.createObservableGauge(MetricNames.snapshotAge, { description: "Age of the oldest rule snapshot in use", unit: "s", valueType: ValueType.DOUBLE });
  const version = meter.createObservableGauge(MetricNames.snapshotVersion, { description: "Lowest rule snapshot version in use", unit: "{version}", valueType: ValueType.INT });
  const state = meter.createObservableGauge(MetricNames.notificationState, { description: "Live engines in each rule change channel state", unit: "{engine}", valueType: ValueType.INT });
  age.addCallback((result) => {
    const live = liveSnapshots();
    if (live.length > 0) result.observe(Math.max(...live.map((h) => h.snapshotAgeMs)) / 1000);
  });
  version.addCallback((result) => {
    const live = liveSnapshots();
    if (live.length > 0) result.observe(Math.min(...live.map((h) => h.snapshotVersion)));
  });
  state.addCallback((result) => {
    const engines = new Map<string, number>();
    for (const h of liveSnapshots()) engines.set(h.notifications, (engines.get(h.notifications) ?? 0) + 1);
    for (const [channel, count] of engines) result.observe(count, { [MetricAttr.notificationState]: channel });
  });
  return {
    requestDuration: seconds(MetricNames.requestDuration, "Duration of a QueryLib query run"),
    stageDuration: seconds(MetricNames.stageDuration, "Duration of one stage of a query run"),
    decisions: count(MetricNames.decisions, "The policy's decisions on the fields of guarded requests", "{decision}"),
    refusals: count(MetricNames.refusals, "Query runs refused, by code", "{request}"),
    planCacheLookups: count(MetricNames.planCacheLookups, "Plan-cache lookups, by result", "{lookup}"),
    auditQueued: count(MetricNames.auditQueued, "Audit events handed to the audit sink"),
    auditWritten: count(MetricNames.auditWritten, "Audit events the sink wrote"),
    auditFailed: count(MetricNames.auditFailed, "Audit events whose write failed"),
    auditDropped: count(MetricNames.auditDropped, "Audit events drained with no sink to write them"),
    vaultRoundTrips: count(MetricNames.vaultRoundTrips, "Token vault round trips", "{call}"),
    vaultFailures: count(MetricNames.vaultFailures, "Token vault round trips that failed", "{call}"),
    budgetCharges: count(MetricNames.budgetCharges, "Budget ledger charges, by kind and outcome", "{charge}"),
  };
}

let boundTo: MeterProvider | null = null;
let instruments: Instruments | null = null;
/** Each provider's instruments, made once: a provider registered again (a host, a test, the bench's A/B) gets the same ones back. */
const byProvider = new WeakMap<MeterProvider, Instruments | null>();
/** Bypasses every recording call, as if no SDK were registered and the API not asked (bench/ only: the A/B of the calls' own cost). */
let bypassed = false;

/** For bench/telemetry only: true skips every metric and span call of QueryLib. */
export function bypassTelemetry(on: boolean): void {
  bypassed = on;
}

export const telemetryBypassed = (): boolean => bypassed;

/** The instruments of the registered provider, created on its first use; null when no SDK is registered (the no-op meter). */
export function meters(): Instruments | null {
  if (bypassed) return null;
  const provider = metrics.getMeterProvider();
  if (provider !== boundTo) {
    boundTo = provider;
    let made = byProvider.get(provider);
    if (made === undefined) {
      const meter = provider.getMeter("querylib", libraryVersion);
      made = meter === createNoopMeter() ? null : create(meter);
      byProvider.set(provider, made);
    }
    instruments = made;
  }
  return instruments;
}

/** Seconds since `start` (performance.now()). */
export const secondsSince = (start: number): number => (performance.now() - start) / 1000;

/** A query run ended (spans.ts queryRun): its duration by shape and outcome, and a refusal by code. */
export function recordRun(shape: string, seconds: number, error: unknown): void {
  const m = meters();
  if (!m) return;
  const outcome = outcomeOf(error);
  m.requestDuration.record(seconds, { [MetricAttr.shape]: shape, [MetricAttr.outcome]: outcome });
  if (outcome === "refused") m.refusals.add(1, { [MetricAttr.shape]: shape, [MetricAttr.errorCode]: refusalCode(error)! });
}

/** A stage ended (spans.ts stage): its duration by stage (the span name's last part) and outcome. */
export function recordStage(stage: string, seconds: number, error: unknown): void {
  const m = meters();
  if (!m) return;
  m.stageDuration.record(seconds, { [MetricAttr.stage]: stage, [MetricAttr.outcome]: outcomeOf(error) });
}

/** One plan-cache lookup of a database request (the driver). */
export function recordPlanCache(hit: boolean): void {
  meters()?.planCacheLookups.add(1, { [MetricAttr.cacheResult]: hit ? "hit" : "miss" });
}

/** A decision as the policy trace lists it: its public field path, feature and action. */
export interface DecisionEntry {
  readonly field: string;
  readonly feature: string;
  readonly action: string;
}

/**
 * The guard's decisions on one request: one count per trace entry. `entity` is the exposed
 * entity's public name, or null for an entity not exposed: then its class name, without fields.
 */
export function recordDecisions(entity: string | null, className: string, entries: readonly DecisionEntry[]): void {
  const m = meters();
  if (!m || entries.length === 0) return;
  for (const entry of entries) {
    const attributes: Attributes = { [MetricAttr.entity]: entity ?? className, [MetricAttr.feature]: entry.feature, [MetricAttr.action]: entry.action };
    if (entity !== null) attributes[MetricAttr.field] = entry.field;
    m.decisions.add(1, attributes);
  }
}

/**
 * One token vault round trip, counted, and counted as failed when it throws or rejects. Without
 * an SDK the call is made as it is: no promise is added.
 */
export function vaultRoundTrip<T>(call: () => Promise<T>): Promise<T> {
  const m = meters();
  if (!m) return call();
  m.vaultRoundTrips.add(1);
  const failed = (error: unknown): never => {
    m.vaultFailures.add(1);
    throw error;
  };
  let pending: Promise<T>;
  try {
    pending = call();
  } catch (error) {
    return failed(error);
  }
  return pending.then(undefined, failed);
}

/** One budget ledger charge: its kind and outcome, never its amount or whose budget. */
export function recordBudgetCharge(kind: string, outcome: "charged" | "exhausted" | "unavailable"): void {
  meters()?.budgetCharges.add(1, { [MetricAttr.budgetKind]: kind, [MetricAttr.budgetOutcome]: outcome });
}

/** Audit events drained from a request: handed to a sink (then written or failed), or dropped for want of one. */
export function recordAudit(step: "queued" | "written" | "failed" | "dropped", events: number): void {
  const m = meters();
  if (!m || events === 0) return;
  (step === "queued" ? m.auditQueued : step === "written" ? m.auditWritten : step === "failed" ? m.auditFailed : m.auditDropped).add(events);
}
