// The audit events of a refused guarded query, on every target: it returned no data, so none of
// its events says Allowed; every audited use the request names (however far sanitizing got) has
// one, Denied or Dropped as the policy decided, otherwise Refused, each with the refusal's code.
// Paths that do not resolve, and requests that do not parse, name nothing that can be audited.
import assert from "node:assert/strict";
import { LogicException, PolicyEffect, PolicyFeature, QpSubjectKind, type QpAuditEvent } from "../../lib/index.js";
import { STAFF } from "./domain.js";
import { cond, engine, forEachRulesTarget, prepare, role, runDynamic, where } from "./support.js";

type Row = Record<string, unknown>;

/** The audit events a run records, as [field, feature, action, refusal, enforced]. */
const summary = (events: unknown[]) => (events as QpAuditEvent[]).map((e) => [e.field, e.feature, e.action, e.refusal, e.enforced]);

forEachRulesTarget("Audit: a refused request's events", (ctx) => {
  /** Runs the request, expects it refused, and returns the error and the events it recorded. */
  async function refused(request: Row, subjects = [role("analyst")], options = {}) {
    const e = engine(options);
    await e.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "no-audited-where", entity: STAFF, field: "audited", features: PolicyFeature.Where, effect: PolicyEffect.Deny });
    const context = await prepare(e, ...subjects);
    const error = await ctx.guard(context).toListAsync(request).then(() => assert.fail("expected the request to be refused"), (caught: unknown) => caught);
    assert.ok(error instanceof LogicException, String(error));
    return { error, events: summary(context.auditEvents) };
  }

  it("control: a request that returns data records Allowed events, without a refusal", async () => {
    const context = await prepare(engine(), role("analyst"));
    const result = await runDynamic(ctx, context, { ...where(cond("audited", "NotEqual", ["x"])), selects: ["id", "audited"] });
    assert.ok(result.data.length > 0);
    assert.deepEqual(summary(context.auditEvents), [["audited", "Where", "Allowed", undefined, true], ["audited", "Select", "Allowed", undefined, true]]);
  });

  it("an unknown field before the audited one: a Refused event for each audited use named (the unknown field names nothing)", async () => {
    const { error, events } = await refused({ ...where(cond("noSuchField", "Equal", ["x"]), cond("audited", "Equal", ["a1"], 2)), selects: ["id", "alsoMissing", "audited"] });
    assert.equal(error.code, "ConditionMustHasValidFieldName");
    assert.deepEqual(events, [["audited", "Where", "Refused", error.code, true], ["audited", "Select", "Refused", error.code, true]]);
  });

  it("a refusal after the audited Where was allowed (a value that is no number): no Allowed event is left", async () => {
    const { error, events } = await refused({ ...where(cond("audited", "Equal", ["a1"]), cond("salary", "GreaterThan", ["lots"], 2, "Number")), selects: ["id", "audited"] });
    assert.deepEqual(events, [["audited", "Where", "Refused", error.code, true], ["audited", "Select", "Refused", error.code, true]]);
  });

  it("a cap exceeded between the Where and the selects: both audited uses are Refused with CapExceeded", async () => {
    const { error, events } = await refused({ ...where(cond("audited", "Equal", ["a1"])), page: { pageNumber: 1, pageSize: 1_000_000 }, selects: ["audited"] });
    assert.equal(error.code, "CapExceeded");
    assert.deepEqual(events, [["audited", "Where", "Refused", "CapExceeded", true], ["audited", "Select", "Refused", "CapExceeded", true]]);
  });

  it("the use the policy denied stays Denied; the request's other audited uses are Refused", async () => {
    const { error, events } = await refused({ ...where(cond("audited", "Equal", ["a1"])), selects: ["id", "audited"] }, [role("no-audited-where")]);
    assert.equal(error.code, "FieldDeniedForWhere");
    assert.deepEqual(events, [["audited", "Where", "Denied", "FieldDeniedForWhere", true], ["audited", "Select", "Refused", "FieldDeniedForWhere", true]]);
  });

  it("in a dry run a denial is only decided (enforced: false) and stays so when the request is refused for another reason", async () => {
    const { error, events } = await refused({ ...where(cond("audited", "Equal", ["a1"])), selects: ["nope", "audited"] }, [role("no-audited-where")], { dryRun: true });
    assert.equal(error.code, "ConditionMustHasValidFieldName");
    assert.deepEqual(events, [["audited", "Where", "Denied", error.code, false], ["audited", "Select", "Refused", error.code, true]]);
  });

  it("a Segment without selects names the default projection: its audited column is Refused too", async () => {
    const segment = {
      conditionSets: [
        { sort: 1, conditionGroup: where(cond("audited", "Equal", ["a1"])).conditionGroup },
        { sort: 2, intersection: "Union", conditionGroup: where(cond("nope", "Equal", ["x"])).conditionGroup },
      ],
    };
    const { error, events } = await refused(segment);
    assert.deepEqual(events, [["audited", "Where", "Refused", error.code, true], ["audited", "Select", "Refused", error.code, true]]);
  });

  it("a Summary refused at its groupBy: the audited Where it names is Refused", async () => {
    const { error, events } = await refused({ ...where(cond("audited", "NotEqual", ["x"])), groupBy: { fields: ["nope"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });
    assert.deepEqual(events, [["audited", "Where", "Refused", error.code, true]]);
  });

  it("a Summary order on an aggregate alias is an Order use of the aggregated field: Refused with the request", async () => {
    const summaryOf = (having: Row | null) => ({
      groupBy: { fields: ["departmentId"], aggregateBy: [{ field: "audited", alias: "top", aggregator: "Maximum" }] },
      orders: [{ field: "top", direction: "Descending" }],
      ...(having ? { having } : {}),
    });
    const { error, events } = await refused(summaryOf(where(cond("nope", "Equal", ["x"])).conditionGroup as Row));
    assert.deepEqual(events, [["audited", "Order", "Refused", error.code, true]]);
    // Control: the same Summary without the bad Having runs and records the Order use as Allowed.
    const context = await prepare(engine({ caps: { minGroupSize: 1 } }), role("analyst"));
    await ctx.guard(context).toListAsync(summaryOf(null));
    assert.deepEqual(summary(context.auditEvents), [["audited", "Order", "Allowed", undefined, true]]);
  });

  it("a request that does not parse names no field: no event", async () => {
    const { error, events } = await refused({ ...where({ ...cond("audited", "Equal", ["a1"]), operator: "NoSuchOperator" }), selects: ["audited"] });
    assert.ok(error.path?.includes("operator"), error.message);
    assert.deepEqual(events, []);
  });

  it("a refused request after the same request was served (a cached plan) still records Refused, not the plan's Allowed", async () => {
    const context = await prepare(engine(), role("analyst"));
    const request = { ...where(cond("audited", "NotEqual", ["x"])), selects: ["id", "audited"] };
    for (let i = 0; i < 3; i++) await runDynamic(ctx, context, request);
    context.auditEvents.length = 0;
    const tooLarge = { ...request, page: { pageNumber: 1, pageSize: 1_000_000 } };
    await ctx.guard(context).toListAsync(tooLarge).then(() => assert.fail("expected CapExceeded"), () => undefined);
    assert.deepEqual(summary(context.auditEvents), [["audited", "Where", "Refused", "CapExceeded", true], ["audited", "Select", "Refused", "CapExceeded", true]]);
  });
});
