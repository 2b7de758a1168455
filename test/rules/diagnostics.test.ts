// A guarded request's trace entries and audit events come from one list of diagnostics
// (lib/guard/diagnostics.ts), so they cannot disagree: every audit event is the trace entry of
// the same use of an audited field, in the same order, with the same action and enforcement —
// whether the use was allowed, dropped by the Convenience tier, denied in a dry run, or replayed
// from a cached plan.
import assert from "node:assert/strict";
import {
  PolicyAction, PolicyEffect, PolicyFeature, QpInMemoryRuleStore, QpSubjectKind, QpTier, QpTypeOrmRuleStore,
  type PolicyTraceEntry, type QpAuditEvent, type QpPolicyOptionsInput, type QpRuleInput,
} from "../../lib/index.js";
import { auditEventsOf, traceEntryOf, type PolicyDiagnostic } from "../../lib/guard/diagnostics.js";
import { STAFF } from "./domain.js";
import { clearRuleTables, cond, engine, forEachRulesTarget, prepare, runDynamic, where } from "./support.js";

const auditedFeatures = new Set(["Where", "Select", "Order"]);
const denyAudited = (features: PolicyFeature): QpRuleInput =>
  ({ subjectKind: QpSubjectKind.Global, entity: STAFF, field: "audited", features, effect: PolicyEffect.Deny }) as QpRuleInput;

/** The trace entries an audit event must mirror: uses of `audited` for an audited feature. */
const auditedEntries = (entries: readonly PolicyTraceEntry[]) =>
  entries.filter((e) => e.field === "audited" && auditedFeatures.has(e.feature)).map((e) => [e.feature, e.action, e.enforced]);
const eventsOf = (events: readonly QpAuditEvent[]) => events.map((e) => [e.feature, e.action, e.enforced]);

forEachRulesTarget("Policy diagnostics: the trace and the audit events from one list", (ctx) => {
  const newEngine = (options: QpPolicyOptionsInput = {}) =>
    engine(options, { ruleStore: ctx.target === "memory" ? new QpInMemoryRuleStore() : new QpTypeOrmRuleStore(ctx.dataSource()) });

  beforeEach(async () => {
    if (ctx.target !== "memory") await clearRuleTables(ctx.dataSource());
  });

  const request = () => ({
    ...where(cond("audited", "IsNotNull"), cond("city", "Equal", ["Lima"], 2)),
    orders: [{ sort: 1, field: "audited", direction: "Ascending" }],
    selects: ["id", "audited"],
  });

  const cases: [string, QpPolicyOptionsInput, PolicyFeature | null, PolicyAction][] = [
    ["allowed", {}, null, PolicyAction.Allowed],
    ["a select and an order dropped in a dry run (Convenience)", { dryRun: true }, PolicyFeature.Order | PolicyFeature.Select, PolicyAction.Dropped],
    ["an order dropped by the Convenience tier", {}, PolicyFeature.Order, PolicyAction.Dropped],
    ["a select and an order denied in a dry run (Strict)", { dryRun: true, tier: QpTier.Strict }, PolicyFeature.Order | PolicyFeature.Select, PolicyAction.Denied],
  ];
  for (const [title, options, denied, action] of cases) {
    it(`${title}: each audit event is the trace entry of the same use, in order (a cached plan's replay too)`, async () => {
      const e = newEngine(options);
      if (denied !== null) await e.upsertRuleAsync(denyAudited(denied));
      for (let run = 0; run < 3; run++) { // the third run is a cached plan on the database targets
        const context = await prepare(e);
        const result = await runDynamic(ctx, context, request());
        const events = context.auditEvents as QpAuditEvent[];
        assert.ok(events.length >= 3, `run ${run}: ${JSON.stringify(events)}`);
        assert.deepEqual(eventsOf(events), auditedEntries(result.policy.entries), `run ${run}`);
        assert.ok(events.some((x) => x.action === action), `run ${run}: no ${action} event`);
        assert.ok(events.every((x) => x.field === "audited" && x.entity === STAFF));
      }
    });
  }
});

describe("Policy diagnostics: derivation", () => {
  const member = (features: PolicyFeature) => ({ policy: { attributes: [{ kind: "audit", features }] } }) as unknown as PolicyDiagnostic["member"];
  const diagnostic = (field: string, feature: string, extra: Partial<PolicyDiagnostic> = {}): PolicyDiagnostic =>
    ({ field, feature, action: PolicyAction.Allowed, level: null, source: "policy", enforced: true, ...extra });

  it("an audit event only for a member audited for that use's feature; request-wide steps and unaudited members make none", () => {
    const diagnostics = [
      diagnostic("page", "Page", { action: PolicyAction.Injected }),
      diagnostic("a", "Where", { member: member(PolicyFeature.Select) }),
      diagnostic("a", "Select", { member: member(PolicyFeature.Select), action: PolicyAction.Masked }),
      diagnostic("b", "Order", { member: member(PolicyFeature.Order), action: PolicyAction.Dropped, enforced: false }),
    ];
    const events = auditEventsOf(diagnostics, "things", []);
    assert.deepEqual(events.map((x) => [x.field, x.feature, x.action, x.enforced]), [["a", "Select", "Masked", true], ["b", "Order", "Dropped", false]]);
    assert.equal(new Set(events.map((x) => x.at)).size, 1, "one request, one time");
  });

  it("a trace entry carries the transform steps' actions and sources only, never the member", () => {
    const steps = [{ action: PolicyAction.Masked, level: 1, source: "QpMask on x" }] as unknown as PolicyDiagnostic["transforms"];
    const entry = traceEntryOf(diagnostic("x", "Select", { member: member(PolicyFeature.Select), transforms: steps, reason: "why" }));
    assert.deepEqual(entry, { field: "x", feature: "Select", action: PolicyAction.Allowed, level: null, source: "policy", enforced: true, reason: "why", transforms: [{ action: PolicyAction.Masked, source: "QpMask on x" }] });
    assert.ok(!("member" in entry));
  });
});
