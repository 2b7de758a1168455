// simulate(entity, filter, context, dataSource): the sanitized clause, the SQL that would run and
// its parameters, executing nothing and writing no audit event. "Nothing executes" is measured
// on the DataSource itself (its query method, every query runner its driver creates and a
// subscriber listening to queries count), with a guarded query of the same filter as the control that the probe sees queries;
// the SQL is then run by the test itself and must return the rows the oracle expects.
import assert from "node:assert/strict";
import type { DataSource, QueryRunner } from "typeorm";
import {
  PolicyAction, PolicyEffect, PolicyErrorCode, PolicyFeature, QpSubjectKind, QpTier, applyPolicy, type QpPolicyEngine, type SimulateResponse,
} from "../../lib/index.js";
import { type Dialect, dialects, skipIfUnavailable } from "../support/databases.js";
import { Employee, STAFF, oracleData } from "./domain.js";
import { cond, engine, expectLogicError, expectPolicyError, prepare, role, rulesDatabase } from "./support.js";

type Row = Record<string, unknown>;

/** Counts every statement the DataSource runs while installed. */
function probe(dataSource: DataSource) {
  const counts = { query: 0, runners: 0, statements: [] as string[] };
  const originalQuery = dataSource.query.bind(dataSource);
  const driver = dataSource.driver as unknown as { createQueryRunner(mode: string): QueryRunner };
  const originalRunner = driver.createQueryRunner.bind(driver);
  (dataSource as unknown as { query: unknown }).query = (sql: string, ...rest: unknown[]) => {
    counts.query++;
    counts.statements.push(sql);
    return (originalQuery as (...args: unknown[]) => Promise<unknown>)(sql, ...rest);
  };
  driver.createQueryRunner = (mode: string) => {
    counts.runners++;
    const runner = originalRunner(mode);
    const runQuery = runner.query.bind(runner);
    runner.query = ((sql: string, ...rest: unknown[]) => {
      counts.statements.push(sql);
      return (runQuery as (...args: unknown[]) => Promise<unknown>)(sql, ...rest);
    }) as QueryRunner["query"];
    return runner;
  };
  // A subscriber listening to queries sees every statement, QueryLib's SQLite reads too (which
  // otherwise run on the driver's connection without a runner: lib/dialect/sqlite/read-rows.ts).
  const listener = { beforeQuery: (event: { query: string }) => void counts.statements.push(event.query) };
  dataSource.subscribers.push(listener as never);
  return {
    counts,
    restore() {
      dataSource.subscribers.splice(dataSource.subscribers.indexOf(listener as never), 1);
      delete (dataSource as unknown as { query?: unknown }).query;
      (driver as unknown as { createQueryRunner: unknown }).createQueryRunner = originalRunner;
    },
  };
}

const limaNotA1 = {
  conditionGroup: { connector: "And", conditions: [cond("city", "Equal", ["Lima"], 1), cond("audited", "NotEqual", ["a1"], 2)] },
  orders: [{ sort: 1, field: "salary", direction: "Descending" }],
  selects: ["id", "audited", "email"],
};
const expectedIds = oracleData.employees.filter((e) => e.city === "Lima" && e.audited !== "a1").sort((a, b) => b.salary - a.salary).map((e) => e.id);

for (const dialect of dialects) {
  describe(`Rules: simulate [${dialect}]`, function () {
    let dataSource: DataSource;
    let e: QpPolicyEngine;
    let denyEmail: string;

    before(async function () {
      this.timeout(120_000);
      try {
        dataSource = await rulesDatabase(dialect);
      } catch (error) {
        skipIfUnavailable(this, error);
      }
      e = engine();
      denyEmail = (await e.upsertRuleAsync({ subjectKind: QpSubjectKind.Global, entity: STAFF, field: "email", features: PolicyFeature.Select, effect: PolicyEffect.Deny })).id;
      await e.upsertRuleAsync({ subjectKind: QpSubjectKind.Global, entity: STAFF, field: "team", features: PolicyFeature.Where, effect: PolicyEffect.Deny });
    });

    it("returns the sanitized clause, the SQL and its parameters, runs no statement and records no audit event", async () => {
      const context = await prepare(e);
      const p = probe(dataSource);
      let response: SimulateResponse;
      try {
        response = await e.simulateAsync(STAFF, limaNotA1, context, dataSource);
      } finally {
        p.restore();
      }
      assert.deepEqual(p.counts, { query: 0, runners: 0, statements: [] }, "simulate executed something");
      assert.deepEqual(context.auditEvents, [], "simulate wrote an audit event");

      // The sanitized request: the denied select dropped, the page a guard injects, real names.
      assert.deepEqual(response.filter.selects, ["id", "audited"]);
      assert.deepEqual(response.filter.page, { pageNumber: 1, pageSize: 1000 });
      const clause = response.clause as { conditions: { field: string; values: unknown[] }[] };
      assert.deepEqual(clause.conditions.map((c) => [c.field, c.values]), [["city", ["Lima"]], ["audited", ["a1"]]]);
      const dropped = response.policy.entries.find((x) => x.field === "email" && x.feature === "Select")!;
      assert.equal(dropped.action, PolicyAction.Dropped);
      assert.equal(dropped.source, `rule ${denyEmail}`);
      assert.equal(response.policy.snapshotVersion, e.health().snapshotVersion);

      // The SQL: placeholders, never the values; the values are parameters.
      assert.match(response.sql, /rul_employee/);
      assert.ok(!response.sql.includes("Lima") && !response.sql.includes("'a1'"), response.sql);
      assert.ok(response.parameters.includes("Lima") && response.parameters.includes("a1"), JSON.stringify(response.parameters));

      // Run by the test, the SQL returns the rows the oracle expects, in the requested order.
      const rows = (await dataSource.query(response.sql, response.parameters)) as Row[];
      // (The first column is the first select, id.)
      assert.deepEqual(rows.map((r) => Number(Object.values(r)[0])), expectedIds, JSON.stringify(rows.slice(0, 2)));
    });

    it("hands out a trace of its own: changing one response's trace (default projection included) changes no later one", async () => {
      const context = await prepare(e);
      const noSelects = { conditionGroup: limaNotA1.conditionGroup };
      const first = await e.simulateAsync(STAFF, noSelects, context, dataSource);
      const before = JSON.stringify(first.policy);
      assert.ok(first.policy.entries.some((x) => x.feature === "Select"), "the default projection is traced");
      for (const entry of first.policy.entries) Object.assign(entry, { field: "tampered", action: PolicyAction.Allowed });
      for (const response of [await e.simulateAsync(STAFF, noSelects, context, dataSource), await e.simulateAsync(STAFF, noSelects, await prepare(e), dataSource)]) {
        assert.equal(JSON.stringify(response.policy), before);
      }
    });

    it("control: the same filter as a guarded query runs statements and records audit events", async () => {
      const context = await prepare(e);
      const p = probe(dataSource);
      let result: { data: Row[] };
      try {
        result = (await applyPolicy(dataSource.getRepository(Employee), context).toListAsyncDynamic(limaNotA1 as never)) as unknown as { data: Row[] };
      } finally {
        p.restore();
      }
      assert.ok(p.counts.query + p.counts.runners > 0 && p.counts.statements.length > 0, "the probe sees a guarded query");
      assert.deepEqual(result.data.map((r) => Number(r.id)), expectedIds);
      assert.ok(context.auditEvents.length > 0, "a guarded query on the audited field records events");
      const fields = new Set((context.auditEvents as { field: string }[]).map((x) => x.field));
      assert.ok(fields.has("audited"));
    });

    it("refuses what a guarded query refuses (a rule-denied Where, Strict selects), still executing nothing", async () => {
      const context = await prepare(e);
      const p = probe(dataSource);
      try {
        await expectPolicyError(() => e.simulateAsync(STAFF, { conditionGroup: { connector: "And", conditions: [cond("team", "Equal", ["red"])] } }, context, dataSource), PolicyErrorCode.FieldDeniedForWhere);
        const strict = engine({ tier: QpTier.Strict });
        await strict.upsertRuleAsync({ subjectKind: QpSubjectKind.Global, entity: STAFF, field: "email", features: PolicyFeature.Select, effect: PolicyEffect.Deny });
        await expectPolicyError(async () => strict.simulateAsync(STAFF, { selects: ["id", "email"] }, await prepare(strict), dataSource), PolicyErrorCode.FieldDeniedForSelect);
        await expectLogicError(() => e.simulateAsync("Employee", {}, context, dataSource), "UnknownEntity");
        // A path across more navigations than MaxNavigationDepth (4): CapExceeded, as for a guarded query.
        await expectPolicyError(() => e.simulateAsync(STAFF, { conditionGroup: { connector: "And", conditions: [cond("manager.manager.manager.manager.manager.name", "Equal", ["Emp 01"])] } }, context, dataSource), PolicyErrorCode.CapExceeded);
      } finally {
        p.restore();
      }
      assert.deepEqual(p.counts, { query: 0, runners: 0, statements: [] });
      assert.deepEqual(context.auditEvents, []);
    });

    it("a refused condition on an audited field writes no audit event either", async () => {
      const local = engine();
      await local.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "restricted", entity: STAFF, field: "audited", features: PolicyFeature.Where, effect: PolicyEffect.Deny });
      const context = await prepare(local, role("restricted"));
      const filter = { conditionGroup: { connector: "And", conditions: [cond("audited", "Equal", ["a3"])] }, selects: ["id"] };
      await expectPolicyError(() => local.simulateAsync(STAFF, filter, context, dataSource), PolicyErrorCode.FieldDeniedForWhere);
      assert.deepEqual(context.auditEvents, [], "simulate wrote an audit event for the refused use");
      // Control: the guarded query records the refused use.
      const control = await prepare(local, role("restricted"));
      await expectPolicyError(() => applyPolicy(dataSource.getRepository(Employee), control).toListAsyncDynamic(filter as never), PolicyErrorCode.FieldDeniedForWhere);
      assert.equal(control.auditEvents.length, 1);
    });

    it("a filter across navigations: the SQL joins and, run by the test, matches the oracle", async () => {
      const context = await prepare(e);
      const filter = { conditionGroup: { connector: "And", conditions: [cond("manager.city", "Equal", ["Lima"], 1), cond("reports.grade", "Equal", ["lead"], 2)] }, selects: ["id"] };
      const p = probe(dataSource);
      let response: SimulateResponse;
      try {
        response = await e.simulateAsync(STAFF, filter, context, dataSource);
      } finally {
        p.restore();
      }
      assert.equal(p.counts.statements.length, 0);
      const rows = (await dataSource.query(response.sql, response.parameters)) as Row[];
      const expected = oracleData.employees.filter((x) => x.manager?.city === "Lima" && x.reports.some((r) => r.grade === "lead")).map((x) => x.id);
      assert.deepEqual(expected, [3, 4, 12]);
      assert.deepEqual(rows.map((r) => Number(Object.values(r)[0])), expected);
    });
  });
}
