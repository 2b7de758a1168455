// OpenTelemetry spans of guarded query runs (lib/telemetry/spans.ts, docs/OPERATIONS.md
// "Telemetry"), with the SDK's in-memory exporter registered for this file only: the span tree
// of a Filter, a Segment and a Summary on each target (names, parent links, attributes, the
// statements' database conventions and text), a refused request (ERROR, its code, nothing of its
// values), a plan-cache hit (no plan span), and what a run without an SDK leaves (nothing).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { type IQpAuditSink, type IQpTokenVault, type QpAuditEvent, PolicyErrorCode, type PolicyTrace, type PolicyTraceEntry, QpInMemoryTokenVault, QpPolicyContext, QpPolicyEngine, applyPolicy, toList } from "../../lib/index.js";
import { memberData } from "../transform/domain.js";
import { drainAuditEvents } from "../../nest-module/audit.js";
import { scopeOf } from "../../nest-module/request-scope.js";
import { libraryVersion } from "../../lib/telemetry/spans.js";
import type { Dialect } from "../support/target-list.js";
import { repoRoot, sourceFiles } from "../support/source-files.js";
import { Doctor, Patient } from "../policy/domain.js";
import { convenience, cond, expectPolicyError, tenantContext, whereShape } from "../policy/helpers.js";
import { forEachPolicyTarget } from "../policy/policy-targets.js";
import { type ReadableSpan, captureSpans, idOf, parentOf, querylibSpans } from "./span-capture.js";

/** db.system per test database (OpenTelemetry's names; MariaDB runs the MySQL family). */
const dbSystems: Record<Dialect, string> = {
  sqlite: "sqlite",
  postgres: "postgresql",
  mariadb: "mysql",
};

const page = { pageNumber: 1, pageSize: 7 };
const requests = {
  filter: () => ({ ...whereShape(cond("name", "IsNotNull")), page }),
  segment: () => ({ conditionSets: [{ sort: 1, conditionGroup: { connector: "And", conditions: [cond("name", "IsNotNull")] } }, { sort: 2, intersection: "Union", conditionGroup: { connector: "And", conditions: [cond("diagnosis", "Equal", ["flu"])] } }], page }),
  summary: () => ({ groupBy: { fields: ["diagnosis"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, page }),
} as const;

/** The number of trace entries per action, under the span attributes' names. */
function countsOf(entries: readonly PolicyTraceEntry[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { action } of entries) counts[`querylib.policy.decisions.${action.toLowerCase()}`] = (counts[`querylib.policy.decisions.${action.toLowerCase()}`] ?? 0) + 1;
  return counts;
}

const named = (spans: readonly ReadableSpan[], name: string) => spans.filter((span) => span.name === name);
const one = (spans: readonly ReadableSpan[], name: string) => {
  const found = named(spans, name);
  assert.equal(found.length, 1, `one ${name} span, got ${found.length}: ${spans.map((s) => s.name).join(", ")}`);
  return found[0]!;
};

describe("Telemetry: spans", () => {
  const capture = captureSpans();

  forEachPolicyTarget("Telemetry: the span tree of a guarded run", (ctx) => {
    for (const kind of ["filter", "segment", "summary"] as const) {
      it(`${kind}: one querylib.${kind} span; the rule load, the decisions, the plan, each statement and the row pass its children; the attributes`, async function () {
        const context = await tenantContext(convenience, "t-1");
        const result = (await ctx.guard(Patient, context).toListAsync(requests[kind]())) as unknown as { data: unknown[]; pageSize: number; policy: PolicyTrace };
        const spans = querylibSpans(capture);
        const root = one(spans, `querylib.${kind}`);
        assert.equal(parentOf(root), undefined, "the query run is a root span here (no host span is active)");
        assert.equal(root.status.code, SpanStatusCode.UNSET);
        assert.equal(root.instrumentationScope.version, libraryVersion);
        assert.equal(root.attributes["querylib.shape"], kind);
        assert.equal(root.attributes["querylib.entity"], "Patient");
        assert.equal(root.attributes["querylib.row_count"], result.data.length);
        assert.equal(root.attributes["querylib.page.size"], 7);
        assert.equal(root.attributes["querylib.policy.tier"], "Convenience");
        // The decisions counted per action, as the result's policy trace lists them (the forced tenant predicate is Injected).
        const counts = countsOf(result.policy.entries);
        assert.ok(counts["querylib.policy.decisions.allowed"]! >= 1 && counts["querylib.policy.decisions.injected"]! >= 1, JSON.stringify(counts));
        assert.deepEqual(Object.fromEntries(Object.entries(root.attributes).filter(([key]) => key.startsWith("querylib.policy.decisions."))), counts);
        if (ctx.target !== "memory") assert.equal(root.attributes["querylib.plan_cache.hit"], false);

        const children = spans.filter((span) => span !== root);
        for (const child of children) {
          assert.equal(child.spanContext().traceId, root.spanContext().traceId, `${child.name} in the run's trace`);
          assert.equal(parentOf(child), idOf(root), `${child.name} is a child of the run's span`);
          assert.equal(child.status.code, SpanStatusCode.UNSET, child.name);
          assert.ok(child.startTime[0] * 1e9 + child.startTime[1] >= root.startTime[0] * 1e9 + root.startTime[1], `${child.name} starts within the run`);
        }
        one(children, "querylib.policy.rules");
        const policy = one(children, "querylib.policy");
        assert.equal(policy.attributes["querylib.policy.tier"], "Convenience");
        assert.deepEqual(Object.fromEntries(Object.entries(policy.attributes).filter(([key]) => key.startsWith("querylib.policy.decisions."))), counts);
        one(children, "querylib.plan");
        one(children, "querylib.transform");
        const statements = named(children, "querylib.statement");
        if (ctx.target === "memory") {
          assert.deepEqual(children.map((s) => s.name).sort(), ["querylib.plan", "querylib.policy", "querylib.policy.rules", "querylib.transform"]);
          return;
        }
        // The page and its COUNT: the very texts toStatementsAsync compiles, placeholders and all.
        const compiled = await ctx.guard(Patient, context).toStatementsAsync(requests[kind]());
        assert.equal(statements.length, 2);
        assert.deepEqual(statements.map((s) => s.attributes["db.query.text"]).sort(), [compiled.data.sql, compiled.count!.sql].sort());
        const dbSystem = dbSystems[ctx.target as Dialect];
        for (const statement of statements) {
          assert.equal(statement.kind, SpanKind.CLIENT);
          assert.equal(statement.attributes["db.system"], dbSystem);
          assert.equal(statement.attributes["db.system.name"], dbSystem);
          assert.equal(statement.attributes["db.operation"], "SELECT");
          assert.equal(statement.attributes["db.operation.name"], "SELECT");
          assert.equal(statement.attributes["db.statement"], statement.attributes["db.query.text"]);
          assert.equal(typeof statement.attributes["db.response.returned_rows"], "number");
        }
        const data = statements.find((s) => s.attributes["db.query.text"] === compiled.data.sql)!;
        assert.equal(data.attributes["db.response.returned_rows"], result.data.length);
      });
    }

    it("a refused request: the run's span and the policy span end with ERROR and the refusal's code; no value, no message, no event", async () => {
      const context = await tenantContext(convenience, "t-1");
      const secret = "SSN-telemetry-7f3a";
      await expectPolicyError(() => ctx.guard(Patient, context).toListAsync(whereShape(cond("ssn", "Equal", [secret]))), PolicyErrorCode.FieldDeniedForWhere);
      const spans = querylibSpans(capture);
      const root = one(spans, "querylib.filter");
      const policy = one(spans, "querylib.policy");
      for (const span of [root, policy]) {
        assert.equal(span.status.code, SpanStatusCode.ERROR, span.name);
        assert.equal(span.status.message, "FieldDeniedForWhere", span.name);
        assert.equal(span.attributes["querylib.error.code"], "FieldDeniedForWhere", span.name);
      }
      assert.equal(parentOf(policy), idOf(root));
      assert.deepEqual(named(spans, "querylib.plan"), [], "refused before a plan");
      assert.deepEqual(named(spans, "querylib.statement"), [], "nothing ran");
      for (const span of spans) {
        assert.deepEqual(span.events, [], `${span.name} records no exception event (its message may quote a value)`);
        assert.ok(!JSON.stringify(span.attributes).includes(secret) && !(span.status.message ?? "").includes(secret), `${span.name} holds no value`);
      }
    });

    if (ctx.target !== "memory") {
      it("a plan-cache hit: querylib.plan_cache.hit true, no plan span and no policy span (the decisions are the cached plan's); the counts still on the run's span", async () => {
        const context = await tenantContext(convenience, "t-1");
        const shape = { ...whereShape(cond("name", "IsNotNull")), page: { pageNumber: 1, pageSize: 5 } };
        // The guarded plan cache keeps a request from its second sighting (test/policy/plan-cache.test.ts).
        for (let i = 0; i < 2; i++) await ctx.guard(Patient, context).toListAsync(shape);
        capture.reset();
        await ctx.guard(Patient, context).toListAsync(shape);
        const spans = querylibSpans(capture);
        const root = one(spans, "querylib.filter");
        assert.equal(root.attributes["querylib.plan_cache.hit"], true);
        assert.ok((root.attributes["querylib.policy.decisions.injected"] as number) >= 1);
        assert.deepEqual(named(spans, "querylib.plan"), []);
        assert.deepEqual(named(spans, "querylib.policy"), []);
        assert.equal(named(spans, "querylib.statement").length, 2);
      });
    }
  });

  forEachPolicyTarget("Telemetry: an export's span", (ctx) => {
    const shape = () => whereShape(cond("name", "IsNotNull"));
    const exportOf = async (options: { batchSize: number; maxExportRows?: number }) => {
      const engine = new QpPolicyEngine({ lint: "off", ...(options.maxExportRows ? { caps: { maxExportRows: options.maxExportRows } } : {}) });
      return ctx.guard(Patient, await tenantContext(engine, "t-1")).exportAsync(shape(), { batchSize: options.batchSize });
    };

    it("read to its end: one querylib.export span over every batch, its rows and batches; the stages of each batch its children", async () => {
      let rows = 0;
      let batches = 0;
      for await (const batch of await exportOf({ batchSize: 2 })) {
        rows += batch.length;
        batches++;
        assert.equal(named(querylibSpans(capture), "querylib.export").length, 0, "not ended while batches are read");
      }
      const spans = querylibSpans(capture);
      const root = one(spans, "querylib.export");
      assert.ok(rows > 2 && batches >= 2);
      assert.equal(root.status.code, SpanStatusCode.UNSET);
      assert.equal(parentOf(root), undefined);
      assert.equal(root.attributes["querylib.shape"], "filter");
      assert.equal(root.attributes["querylib.entity"], "Patient");
      assert.equal(root.attributes["querylib.row_count"], rows);
      assert.equal(root.attributes["querylib.export.batches"], batches);
      const children = spans.filter((span) => span !== root);
      assert.ok(children.length > 0);
      for (const child of children) assert.equal(parentOf(child), idOf(root), child.name);
      assert.equal(named(children, "querylib.transform").length, batches, "one row pass per batch");
      if (ctx.target !== "memory") assert.ok(named(children, "querylib.statement").length >= batches);
    });

    it("returned early by its reader (break after the first batch): the span ends at once, with the rows handed out", async () => {
      let rows = 0;
      for await (const batch of await exportOf({ batchSize: 2 })) {
        rows += batch.length;
        break;
      }
      const root = one(querylibSpans(capture), "querylib.export");
      assert.equal(root.status.code, SpanStatusCode.UNSET);
      assert.equal(root.attributes["querylib.row_count"], rows);
      assert.equal(root.attributes["querylib.export.batches"], 1);
    });

    it("thrown into by its reader after the first batch: the error is rethrown, the export is over, the span ends with ERROR", async () => {
      const batches = await exportOf({ batchSize: 2 });
      const first = await batches.next();
      assert.equal(first.done, false);
      await assert.rejects(() => batches.throw(new TypeError("the reader failed")), TypeError);
      assert.deepEqual(await batches.next(), { done: true, value: undefined });
      const root = one(querylibSpans(capture), "querylib.export");
      assert.equal(root.status.code, SpanStatusCode.ERROR);
      assert.equal(root.attributes["querylib.error.code"], "TypeError");
      assert.equal(root.attributes["querylib.export.batches"], 1);
    });

    it("refused (more rows than MaxExportRows): the span ends with ERROR and the code, no batch", async () => {
      const batches = await exportOf({ batchSize: 2, maxExportRows: 2 });
      await expectPolicyError(async () => {
        for await (const batch of batches) void batch;
      }, PolicyErrorCode.CapExceeded);
      const root = one(querylibSpans(capture), "querylib.export");
      assert.equal(root.status.code, SpanStatusCode.ERROR);
      assert.equal(root.attributes["querylib.error.code"], "CapExceeded");
      assert.equal(root.attributes["querylib.export.batches"], 0);
      assert.deepEqual(root.events, []);
    });
  });

  describe("the token vault", () => {
    const vaults = {
      working: () => new QpInMemoryTokenVault(),
      failing: (): IQpTokenVault => ({ tokenize: async () => { throw new Error("vault down: 756.1234.5678.97"); } }),
    };
    const run = async (vault: IQpTokenVault) => {
      const engine = new QpPolicyEngine({ hashSalt: "0123456789abcdef-span-salt", tokenVault: vault });
      const context = await engine.prepareAsync(new QpPolicyContext());
      return applyPolicy(memberData(), context).toListAsync({ selects: ["id", "nationalId"], page });
    };

    it("each round trip is a querylib.vault span under the row pass, with the number of values it tokenized", async () => {
      const result = await run(vaults.working());
      const spans = querylibSpans(capture);
      const transform = one(spans, "querylib.transform");
      const vault = one(spans, "querylib.vault");
      assert.equal(parentOf(vault), idOf(transform));
      assert.equal(parentOf(transform), idOf(one(spans, "querylib.filter")));
      assert.equal(vault.attributes["querylib.vault.values"], new Set(result.data.map((m) => (memberData().find((r) => r.id === (m as { id: number }).id)!).nationalId)).size);
      assert.equal(vault.status.code, SpanStatusCode.UNSET);
    });

    it("a vault that fails: the vault span, the row pass and the run end with ERROR; the run's code is StoreUnavailable; no message", async () => {
      await expectPolicyError(() => run(vaults.failing()), PolicyErrorCode.StoreUnavailable);
      const spans = querylibSpans(capture);
      for (const name of ["querylib.vault", "querylib.transform", "querylib.filter"]) assert.equal(one(spans, name).status.code, SpanStatusCode.ERROR, name);
      assert.equal(one(spans, "querylib.vault").attributes["querylib.error.code"], "Error", "a vault's own error has no code: its class name, never its message");
      assert.equal(one(spans, "querylib.filter").attributes["querylib.error.code"], "StoreUnavailable");
      for (const span of spans) assert.ok(!JSON.stringify([span.attributes, span.status, span.events]).includes("756.1234"), span.name);
    });
  });

  describe("the audit write", () => {
    const event = (field: string): QpAuditEvent => ({ at: new Date(0).toISOString(), entity: "Patient", field, feature: "Where", action: "Allowed", subjects: [], enforced: true });
    const drainIn = (sink: IQpAuditSink, events: QpAuditEvent[]) => trace.getTracer("host").startActiveSpan("POST /patients/query", async (host) => {
      const scope = scopeOf({ method: "POST", url: "/patients/query" });
      const context = new QpPolicyContext();
      (context.auditEvents as unknown[]).push(...events);
      scope.contexts.push(context);
      try {
        await drainAuditEvents(scope, sink);
      } finally {
        host.end();
      }
    });

    it("a write: one querylib.audit span under the host's span, with the number of events", async () => {
      await drainIn({ write: async () => {} }, [event("name"), event("diagnosis")]);
      const audit = one(querylibSpans(capture), "querylib.audit");
      assert.equal(parentOf(audit), idOf(capture.spans().find((span) => span.name === "POST /patients/query")!));
      assert.equal(audit.attributes["querylib.audit.events"], 2);
      assert.equal(audit.status.code, SpanStatusCode.UNSET);
    });

    it("a sink that fails: the span ends with ERROR and the error's class name, never its message", async () => {
      await drainIn({ write: async () => { throw new Error("sink down: 756.1234.5678.97"); } }, [event("name")]);
      const audit = one(querylibSpans(capture), "querylib.audit");
      assert.equal(audit.status.code, SpanStatusCode.ERROR);
      assert.equal(audit.attributes["querylib.error.code"], "Error");
      assert.ok(!JSON.stringify([audit.attributes, audit.status, audit.events]).includes("756.1234"));
    });
  });

  describe("unguarded runs, and a host's span", () => {
    it("an unguarded Filter on an array (synchronous toList): one run span, its plan span, no policy span", () => {
      const rows = [Object.assign(new Doctor(), { id: 1, name: "a" }), Object.assign(new Doctor(), { id: 2, name: "b" })];
      const result = toList(rows, { ...whereShape(cond("name", "IsNotNull")), page });
      const spans = querylibSpans(capture);
      const root = one(spans, "querylib.filter");
      assert.equal(root.status.code, SpanStatusCode.UNSET);
      assert.equal(root.attributes["querylib.entity"], "Doctor");
      assert.equal(root.attributes["querylib.row_count"], result.data.length);
      assert.equal(parentOf(one(spans, "querylib.plan")), idOf(root));
      assert.deepEqual(spans.map((span) => span.name).sort(), ["querylib.filter", "querylib.plan"]);
    });

    it("an unguarded request on an entity that requires a policy: ERROR with PolicyRequired", () => {
      const rows = [Object.assign(new Patient(), { id: 1, name: "a" })];
      assert.throws(() => toList(rows, whereShape(cond("name", "IsNotNull"))));
      const root = one(querylibSpans(capture), "querylib.filter");
      assert.equal(root.status.code, SpanStatusCode.ERROR);
      assert.equal(root.attributes["querylib.error.code"], "PolicyRequired");
    });

    it("the run's span is a child of the host's active span (an HTTP request's, say)", async () => {
      const context = await tenantContext(convenience, "t-1");
      const rows = [Object.assign(new Patient(), { id: 1, tenantId: "t-1", name: "a" })];
      await trace.getTracer("host").startActiveSpan("GET /patients", async (host) => {
        await applyPolicy(rows, context).toListAsync(whereShape(cond("name", "IsNotNull")));
        host.end();
      });
      const root = one(querylibSpans(capture), "querylib.filter");
      const host = capture.spans().find((span) => span.name === "GET /patients")!;
      assert.equal(parentOf(root), idOf(host));
      assert.equal(root.spanContext().traceId, host.spanContext().traceId);
    });
  });
});

describe("Telemetry: the package", () => {
  it("lib/ imports @opentelemetry/api only, and only in lib/telemetry/ (a library never depends on an SDK)", () => {
    const offenders: string[] = [];
    for (const path of sourceFiles(join(repoRoot, "lib"))) {
      const file = relative(repoRoot, path);
      for (const [, specifier] of readFileSync(path, "utf8").matchAll(/(?:from\s*|import\s*\(\s*|require\s*\(\s*|import\s+)["'](@opentelemetry\/[^"']*)["']/g)) {
        if (specifier !== "@opentelemetry/api" || !file.startsWith(join("lib", "telemetry"))) offenders.push(`${file}: ${specifier}`);
      }
    }
    assert.deepEqual(offenders, []);
    const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    assert.ok(manifest.dependencies["@opentelemetry/api"], "the API is a dependency");
    assert.deepEqual(Object.keys(manifest.dependencies).filter((name) => name.startsWith("@opentelemetry/")), ["@opentelemetry/api"], "and the only OpenTelemetry one");
  });

  it("the tracer's version is the package's", () => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string };
    assert.equal(libraryVersion, manifest.version);
  });
});
