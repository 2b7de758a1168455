// OpenTelemetry metrics (lib/telemetry/metrics.ts, docs/OPERATIONS.md "Metrics"), with the SDK's
// MeterProvider and a pull reader registered for this file only (no tracer provider: the
// metrics are recorded without spans). The values after a scripted sequence of guarded requests
// on every target (a Filter, a Segment, a Summary, a refusal, the same Filter three times for a
// plan-cache hit); the decisions by entity, field, feature and action as the results' policy
// traces list them; fields only for an exposed entity; the rule snapshot gauges; a vault that
// fails; budget charges (guesses and privacy); the audit drain (written, failed, no sink); an export; and nothing
// recorded without an SDK.
import assert from "node:assert/strict";
import { metrics } from "@opentelemetry/api";
import { Column, Entity, PrimaryColumn } from "typeorm";
import {
  type IQpBudgetLedger, type IQpTokenVault, MaskStrategy, PolicyErrorCode, type PolicyTrace, QpEntityCatalogue, QpInMemoryBudgetLedger, QpInMemoryTokenVault, QpMask,
  QpInMemoryRuleStore, QpPolicyContext, QpPolicyEngine, QpSubjectKind, applyPolicy, type QpAuditEvent, QpAudit, PolicyFeature, LogicException, PolicyException,
} from "../../lib/index.js";
import { MetricAttr, MetricNames, forgetSnapshots, meters, observeSnapshots, outcomeOf, refusalCode } from "../../lib/telemetry/metrics.js";
import { drainAuditEvents } from "../../nest-module/audit.js";
import { type QpRequestScope, scopeOf } from "../../nest-module/request-scope.js";
import { type Dialect, openIsolatedDatabase } from "../support/databases.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { memberData } from "../transform/domain.js";
import { privacyCatalogue, privacyData, scoreBounds } from "../privacy/domain.js";
import { Patient } from "../policy/domain.js";
import { cond, expectPolicyError, tenantContext, whereShape } from "../policy/helpers.js";
import { forEachPolicyTarget } from "../policy/policy-targets.js";
import { type Point, PullReader, captureMetrics, grew, total } from "./metric-capture.js";
import { MeterProvider } from "@opentelemetry/sdk-metrics";

const page = { pageNumber: 1, pageSize: 7 };
const requests = {
  filter: () => ({ ...whereShape(cond("name", "IsNotNull")), page }),
  segment: () => ({ conditionSets: [{ sort: 1, conditionGroup: { connector: "And", conditions: [cond("name", "IsNotNull")] } }, { sort: 2, intersection: "Union", conditionGroup: { connector: "And", conditions: [cond("diagnosis", "Equal", ["flu"])] } }], page }),
  summary: () => ({ groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, page }),
} as const;

const PATIENTS = "patients";
const key = (field: unknown, feature: unknown, action: unknown) => `${String(field)}|${String(feature)}|${String(action)}`;

/** The decision points that grew from `before` to `after` for one entity, by field, feature and action. */
function decisionsGrown(before: readonly Point[], after: readonly Point[], entity: string): Map<string, number> {
  const grown = new Map<string, number>();
  for (const point of after) {
    if (point.name !== MetricNames.decisions || point.attributes[MetricAttr.entity] !== entity) continue;
    const earlier = before.find((p) => p.name === point.name && JSON.stringify(p.attributes) === JSON.stringify(point.attributes))?.value ?? 0;
    if (point.value > earlier) grown.set(key(point.attributes[MetricAttr.field], point.attributes[MetricAttr.feature], point.attributes[MetricAttr.action]), point.value - earlier);
  }
  return grown;
}

/** An account with a tokenized number and an audited name: a vault round trip and audit events on every target. */
@Entity("mt_account")
class MtAccount {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpAudit(PolicyFeature.Select) @Column({ type: "varchar", length: 40 }) holder!: string;
  @QpMask({ strategy: MaskStrategy.Tokenize, tokenScope: "account-number" }) @Column({ type: "varchar", length: 20 }) number!: string;
}

const accounts = () => [1, 2, 3, 4].map((id) => Object.assign(new MtAccount(), { id, holder: `holder ${id}`, number: `AC-${id % 3}` }));

@Entity("mt_customer")
class MtCustomer {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Email }) @Column({ type: "varchar", length: 120 }) email!: string;
}

describe("Telemetry: metrics", () => {
  const capture = captureMetrics();

  forEachPolicyTarget("Telemetry: metrics of a scripted sequence", (ctx) => {
    it("request durations by shape and outcome, refusals by code, plan-cache lookups, stage durations, decisions as the traces list them, the snapshot gauges", async function () {
      const engine = new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(Patient, PATIENTS), lint: "off" });
      const context = await tenantContext(engine, "t-1");
      const before = await capture.collect();
      const traces: PolicyTrace[] = [];
      const run = async (shape: object) => traces.push(((await ctx.guard(Patient, context).toListAsync(shape)) as unknown as { policy: PolicyTrace }).policy);
      for (const kind of ["filter", "segment", "summary"] as const) await run(requests[kind]());
      await expectPolicyError(() => ctx.guard(Patient, context).toListAsync(whereShape(cond("ssn", "Equal", ["SSN-metric-51b2"]))), PolicyErrorCode.FieldDeniedForWhere);
      // The guarded plan cache keeps a request from its second sighting: the third is a hit (a database source only).
      const repeated = { ...whereShape(cond("name", "IsNotNull")), page: { pageNumber: 1, pageSize: 5 } };
      for (let i = 0; i < 3; i++) await run(repeated);
      const after = await capture.collect();

      const runs = (shape: string, outcome: string) => grew(before, after, MetricNames.requestDuration, { [MetricAttr.shape]: shape, [MetricAttr.outcome]: outcome });
      assert.equal(runs("filter", "ok"), 4);
      assert.equal(runs("segment", "ok"), 1);
      assert.equal(runs("summary", "ok"), 1);
      assert.equal(runs("filter", "refused"), 1);
      assert.equal(grew(before, after, MetricNames.requestDuration), 7, "no other run recorded");
      const durations = after.filter((p) => p.name === MetricNames.requestDuration);
      assert.ok(durations.every((p) => p.unit === "s" && (p.sum ?? -1) >= 0));
      assert.equal(grew(before, after, MetricNames.refusals, { [MetricAttr.shape]: "filter", [MetricAttr.errorCode]: "FieldDeniedForWhere" }), 1);
      assert.equal(grew(before, after, MetricNames.refusals), 1);

      const lookups = (result: string) => grew(before, after, MetricNames.planCacheLookups, { [MetricAttr.cacheResult]: result });
      if (ctx.target === "memory") assert.deepEqual([lookups("hit"), lookups("miss")], [0, 0], "an array has no plan cache");
      else {
        // filter, segment, summary, the refused filter (looked up before it was decided), the repeat twice: misses; its third run: the hit.
        assert.deepEqual([lookups("hit"), lookups("miss")], [1, 6]);
        assert.ok(total(after, MetricNames.planCacheUsage) > 0, "the plan caches hold bytes");
      }

      const stages = (stage: string) => grew(before, after, MetricNames.stageDuration, { [MetricAttr.stage]: stage });
      assert.equal(stages("rules"), 7, "one rule load per run");
      assert.equal(stages("transform"), 6, "one row pass per run that returned");
      assert.equal(grew(before, after, MetricNames.stageDuration, { [MetricAttr.stage]: "policy", [MetricAttr.outcome]: "refused" }), 1);
      assert.equal(stages("policy"), ctx.target === "memory" ? 7 : 6, "decided once per run, but not on the hit");
      assert.equal(stages("plan"), ctx.target === "memory" ? 6 : 5);
      assert.equal(stages("statement"), ctx.target === "memory" ? 0 : 12, "a page and its COUNT per run that returned");

      // The decisions: one count per entry of each result's policy trace (a hit's are its cached plan's), by field, feature and action.
      const expected = new Map<string, number>();
      for (const trace of traces) for (const entry of trace.entries) expected.set(key(entry.field, entry.feature, entry.action), (expected.get(key(entry.field, entry.feature, entry.action)) ?? 0) + 1);
      assert.ok([...expected.keys()].some((k) => k.endsWith("|Injected")) && [...expected.keys()].some((k) => k.endsWith("|Allowed")), [...expected.keys()].join(", "));
      assert.deepEqual(decisionsGrown(before, after, PATIENTS), expected);

      // The rule snapshot gauges report the process's live engines as a whole (this one among
      // them): no attribute but the channel state, whatever the number of engines.
      const gauges = after.filter((p) => p.name === MetricNames.snapshotAge || p.name === MetricNames.snapshotVersion || p.name === MetricNames.notificationState);
      assert.ok(gauges.every((p) => Object.keys(p.attributes).every((k) => k === MetricAttr.notificationState)), JSON.stringify(gauges.map((p) => p.attributes)));
      assert.equal(after.filter((p) => p.name === MetricNames.snapshotVersion).length, 1);
      assert.ok(total(after, MetricNames.notificationState, { [MetricAttr.notificationState]: "polling-only" }) >= 1, "this engine polls only");
    });

    it("an entity that is not exposed: its decisions by its class name, without fields", async () => {
      const engine = new QpPolicyEngine({ lint: "off" });
      const context = await tenantContext(engine, "t-1");
      const before = await capture.collect();
      const result = (await ctx.guard(Patient, context).toListAsync(requests.filter())) as unknown as { policy: PolicyTrace };
      const after = await capture.collect();
      const grown = after.filter((p) => p.name === MetricNames.decisions && p.attributes[MetricAttr.entity] === "Patient");
      assert.ok(grown.length > 0);
      assert.ok(grown.every((p) => !(MetricAttr.field in p.attributes)), "no field attribute");
      assert.equal(grew(before, after, MetricNames.decisions, { [MetricAttr.entity]: "Patient" }), result.policy.entries.length);
    });

    it("an export: its duration under the shape export, its batches' stages", async () => {
      const engine = new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(Patient, PATIENTS), lint: "off" });
      const context = await tenantContext(engine, "t-1");
      const before = await capture.collect();
      let rows = 0;
      for await (const batch of ctx.guard(Patient, context).exportAsync(whereShape(cond("name", "IsNotNull")), { batchSize: 2 })) rows += batch.length;
      const after = await capture.collect();
      assert.ok(rows > 2);
      assert.equal(grew(before, after, MetricNames.requestDuration, { [MetricAttr.shape]: "export", [MetricAttr.outcome]: "ok" }), 1);
      assert.ok(grew(before, after, MetricNames.stageDuration, { [MetricAttr.stage]: "transform" }) >= Math.ceil(rows / 2));
    });
  });

  describeOnTargets("Telemetry: metrics of a vault that fails and an audit sink that fails", targets, async (dialect: Dialect) => {
    const dataSource = await openIsolatedDatabase(dialect, "querylib_telemetry", [MtAccount]);
    await dataSource.getRepository(MtAccount).insert(accounts());
    return dataSource;
  }, (target, dataSource) => {
    const source = () => (target === "memory" ? accounts() : dataSource().getRepository(MtAccount));
    const engineWith = (vault: IQpTokenVault) => new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(MtAccount, "accounts"), hashSalt: "0123456789abcdef-metric-salt", tokenVault: vault, lint: "off" });
    const run = async (vault: IQpTokenVault, scope: QpRequestScope) => {
      const context = await engineWith(vault).prepareAsync(new QpPolicyContext());
      scope.contexts.push(context);
      return applyPolicy(source() as never, context).toListAsync({ selects: ["id", "holder", "number"], page });
    };

    it("a working vault and a failing one: round trips, failures, the refusal; the runs' audit events to a sink that fails, then to one that writes", async () => {
      const before = await capture.collect();
      const failing = scopeOf({ method: "POST", url: "/accounts/query" });
      const written = scopeOf({ method: "POST", url: "/accounts/query" });
      await run(new QpInMemoryTokenVault(), failing);
      await expectPolicyError(() => run({ tokenize: async () => { throw new Error("vault down"); } }, written), PolicyErrorCode.StoreUnavailable);
      const failed = failing.contexts.reduce((n, c) => n + c.auditEvents.length, 0);
      const refusedEvents = written.contexts.reduce((n, c) => n + c.auditEvents.length, 0);
      assert.ok(failed >= 1 && refusedEvents >= 1, `audit events ${failed} and ${refusedEvents}`);
      await drainAuditEvents(failing, { write: async () => { throw new Error("sink down"); } });
      await drainAuditEvents(written, { write: async () => {} });
      const after = await capture.collect();
      assert.equal(grew(before, after, MetricNames.vaultRoundTrips), 2);
      assert.equal(grew(before, after, MetricNames.vaultFailures), 1);
      assert.equal(grew(before, after, MetricNames.refusals, { [MetricAttr.shape]: "filter", [MetricAttr.errorCode]: "StoreUnavailable" }), 1);
      assert.equal(grew(before, after, MetricNames.requestDuration, { [MetricAttr.shape]: "filter", [MetricAttr.outcome]: "ok" }), 1);
      assert.deepEqual(
        [MetricNames.auditQueued, MetricNames.auditWritten, MetricNames.auditFailed, MetricNames.auditDropped].map((name) => grew(before, after, name)),
        [failed + refusedEvents, refusedEvents, failed, 0],
      );
      assert.equal(grew(before, after, MetricNames.decisions, { [MetricAttr.entity]: "accounts", [MetricAttr.field]: "number", [MetricAttr.action]: "Masked" }), 2, "decided on both runs, refused or not");
    });
  });

  describe("the token vault, the budget ledger, the audit drain", () => {
    const vaultRun = async (vault: IQpTokenVault) => {
      const engine = new QpPolicyEngine({ hashSalt: "0123456789abcdef-metric-salt", tokenVault: vault, lint: "off" });
      const context = await engine.prepareAsync(new QpPolicyContext());
      return applyPolicy(memberData(), context).toListAsync({ selects: ["id", "nationalId"], page });
    };

    it("vault round trips and failures; a failing vault's run refused with StoreUnavailable", async () => {
      const before = await capture.collect();
      await vaultRun(new QpInMemoryTokenVault());
      await expectPolicyError(() => vaultRun({ tokenize: async () => { throw new Error("vault down"); } }), PolicyErrorCode.StoreUnavailable);
      // A vault that throws before returning a promise fails the same way, and is counted the same way.
      await expectPolicyError(() => vaultRun({ tokenize: () => { throw new Error("vault down at once"); } }), PolicyErrorCode.StoreUnavailable);
      const after = await capture.collect();
      assert.equal(grew(before, after, MetricNames.vaultRoundTrips), 3);
      assert.equal(grew(before, after, MetricNames.vaultFailures), 2);
      assert.equal(grew(before, after, MetricNames.stageDuration, { [MetricAttr.stage]: "vault", [MetricAttr.outcome]: "error" }), 2);
      assert.equal(grew(before, after, MetricNames.refusals, { [MetricAttr.errorCode]: "StoreUnavailable" }), 2);
    });

    it("budget charges by kind and outcome: charged, exhausted, unavailable (no amount, no caller)", async () => {
      const rows = [1, 2, 3].map((id) => Object.assign(new MtCustomer(), { id, email: `c${id}@example.com` }));
      const engineOf = (ledger: IQpBudgetLedger) => new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(MtCustomer, "mt_customers"), inferenceProtection: true, lint: "off", guessBudget: { ledger, limit: 1 } });
      const guess = async (engine: QpPolicyEngine, value: string) => applyPolicy(rows, await engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.User, "u-metrics-7"))).toListAsync(whereShape(cond("email", "Equal", [value])));
      const before = await capture.collect();
      const engine = engineOf(new QpInMemoryBudgetLedger());
      await guess(engine, "c1@example.com");
      await expectPolicyError(() => guess(engine, "c2@example.com"), PolicyErrorCode.GuessBudgetExhausted);
      await expectPolicyError(() => guess(engineOf({ charge: async () => { throw new Error("ledger down"); } }), "c3@example.com"), PolicyErrorCode.StoreUnavailable);
      const after = await capture.collect();
      const charges = (outcome: string) => grew(before, after, MetricNames.budgetCharges, { [MetricAttr.budgetKind]: "guesses", [MetricAttr.budgetOutcome]: outcome });
      assert.deepEqual([charges("charged"), charges("exhausted"), charges("unavailable")], [1, 1, 1]);
      for (const point of after.filter((p) => p.name === MetricNames.budgetCharges)) assert.deepEqual(Object.keys(point.attributes).sort(), [MetricAttr.budgetKind, MetricAttr.budgetOutcome].sort());
    });

    it("privacy budget charges (#45's private aggregates): charged until the ε runs out, then exhausted; never the ε", async () => {
      const engine = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", caps: { minGroupSize: 1 }, privacyBudget: { limit: 0.5 } }, { ruleStore: new QpInMemoryRuleStore() });
      await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "accounts", field: "score", effect: "Private" as never, private: scoreBounds });
      const context = await engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, "analyst").withSubject(QpSubjectKind.User, "u-metrics-8"));
      // Each Summary another (its alias): the same one again would be its sticky answer, free.
      const summary = (i: number) => ({ groupBy: { fields: ["segment"], aggregateBy: [{ field: "score", alias: `total${i}`, aggregator: "Sumation" }] } });
      const run = (i: number) => () => applyPolicy(privacyData().accounts as unknown as object[], context).toListAsync(summary(i) as never);
      const before = await capture.collect();
      // 0.25 ε a Summary (scoreBounds): two fit in 0.5, the third is refused.
      await run(1)();
      await run(2)();
      await expectPolicyError(run(3), PolicyErrorCode.PrivacyBudgetExhausted);
      const after = await capture.collect();
      const charges = (outcome: string) => grew(before, after, MetricNames.budgetCharges, { [MetricAttr.budgetKind]: "privacy", [MetricAttr.budgetOutcome]: outcome });
      assert.deepEqual([charges("charged"), charges("exhausted"), charges("unavailable")], [2, 1, 0]);
      assert.equal(grew(before, after, MetricNames.refusals, { [MetricAttr.shape]: "summary", [MetricAttr.errorCode]: "PrivacyBudgetExhausted" }), 1);
    });

    it("the audit drain: events queued then written, queued then failed, dropped without a sink", async () => {
      const event = (field: string): QpAuditEvent => ({ at: new Date(0).toISOString(), entity: "Patient", field, feature: "Where", action: "Allowed", subjects: [], enforced: true });
      const scopeWith = (events: QpAuditEvent[]) => {
        const scope = scopeOf({ method: "POST", url: "/patients/query" });
        const context = new QpPolicyContext();
        (context.auditEvents as unknown[]).push(...events);
        scope.contexts.push(context);
        return scope;
      };
      const before = await capture.collect();
      const written: unknown[] = [];
      await drainAuditEvents(scopeWith([event("name"), event("diagnosis")]), { write: async (events) => void written.push(...events) });
      await drainAuditEvents(scopeWith([event("name"), event("diagnosis"), event("doctor.name")]), { write: async () => { throw new Error("sink down"); } });
      await drainAuditEvents(scopeWith([event("name")]), null);
      const after = await capture.collect();
      assert.equal(written.length, 2);
      assert.deepEqual(
        [MetricNames.auditQueued, MetricNames.auditWritten, MetricNames.auditFailed, MetricNames.auditDropped].map((name) => grew(before, after, name)),
        [5, 2, 3, 1],
      );
      assert.equal(grew(before, after, MetricNames.stageDuration, { [MetricAttr.stage]: "audit", [MetricAttr.outcome]: "error" }), 1);
    });
  });
});

describe("Telemetry: the rule snapshot gauges", () => {
  const capture = captureMetrics();
  it("report the process's engines as a whole (oldest snapshot, lowest version, engines per channel state), one series each however many engines live", async () => {
    const standIns = Array.from({ length: 3000 }, (_, i) => ({ health: () => ({ snapshotVersion: 1_000_000 + i, snapshotAgeMs: i, notifications: "stand-in" }) }));
    const oldest = { health: () => ({ snapshotVersion: -7, snapshotAgeMs: 9e12, notifications: "stand-in-oldest" }) };
    for (const s of [...standIns, oldest]) observeSnapshots(s);
    assert.ok(meters(), "the instruments, made for this file's provider");
    try {
      const points = await capture.collect();
      const of = (name: string) => points.filter((p) => p.name === name);
      assert.deepEqual(of(MetricNames.snapshotVersion).map((p) => p.value), [-7], "the lowest version in use");
      assert.deepEqual(of(MetricNames.snapshotAge).map((p) => p.value), [9e9], "the oldest snapshot, in seconds");
      assert.equal(total(points, MetricNames.notificationState, { [MetricAttr.notificationState]: "stand-in" }), 3000);
      assert.equal(total(points, MetricNames.notificationState, { [MetricAttr.notificationState]: "stand-in-oldest" }), 1);
      assert.ok(points.every((p) => !Object.keys(p.attributes).some((k) => k.startsWith("otel."))), "no overflow series");
    } finally {
      // (A cumulative reader keeps a series' last value once seen: the channel states are few.)
      for (const s of [...standIns, oldest]) forgetSnapshots(s);
    }
  });
});

describe("Telemetry: what counts as a refusal", () => {
  it("a LogicException or PolicyException is refused with its code; a driver's error with a code of its own (SQLSTATE, errno) is an error", () => {
    assert.equal(outcomeOf(undefined), "ok");
    assert.equal(outcomeOf(new LogicException("InvalidFormat", "bad")), "refused");
    assert.equal(refusalCode(new PolicyException(PolicyErrorCode.FieldDeniedForWhere, "denied")), "FieldDeniedForWhere");
    for (const error of [Object.assign(new Error("relation does not exist"), { code: "42P01" }), Object.assign(new Error("reset"), { code: "ECONNRESET" }), "a string", null]) {
      assert.equal(outcomeOf(error), "error", String(error));
      assert.equal(refusalCode(error), null);
    }
  });
});

describe("Telemetry: metrics without an SDK, and a provider registered again", () => {
  it("a provider registered, unregistered and registered again gets its instruments back (no second set, no second gauge callback)", async () => {
    const reader = new PullReader();
    const provider = new MeterProvider({ readers: [reader] });
    try {
      assert.ok(metrics.setGlobalMeterProvider(provider));
      const first = meters();
      assert.notEqual(first, null);
      metrics.disable();
      assert.equal(meters(), null);
      assert.ok(metrics.setGlobalMeterProvider(provider));
      assert.equal(meters(), first);
      const { resourceMetrics } = await reader.collect();
      const usage = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).filter((metric) => metric.descriptor.name === MetricNames.planCacheUsage);
      assert.equal(usage.length, 1);
      assert.equal(usage[0]!.dataPoints.length, 1, "one observation: one callback");
    } finally {
      metrics.disable();
      await provider.shutdown();
    }
  });


  it("no meter provider registered: no instruments (every recording call returns at once)", async () => {
    assert.equal(meters(), null);
    const context = await tenantContext(new QpPolicyEngine({ lint: "off" }), "t-1");
    const rows = [Object.assign(new Patient(), { id: 1, tenantId: "t-1", name: "a" })];
    await applyPolicy(rows, context).toListAsync(requests.filter());
    assert.equal(meters(), null);
  });
});
