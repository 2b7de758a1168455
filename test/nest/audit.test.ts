// The audit flow: QpAudit events recorded on the request's context are drained once at the end
// of the request (QpAuditInterceptor or useQpPolicyAudit), also when the handler throws, never
// for simulate, never without the interceptor/middleware; the MaxAuditEvents cap; no sharing
// between concurrent requests; the in-memory, Logger and relational sinks.
import { expect } from "chai";
import { DataSource } from "typeorm";
import { PolicyEffect, PolicyFeature, QpSubjectKind, type QpAuditEvent } from "../../lib/index.js";
import {
  QpAuditEventRecord, QpInMemoryAuditSink, QpLoggerAuditSink, QpTypeOrmAuditSink, type QpRequestAuditEvent, drainAuditEvents, scopeOf, useQpPolicyAudit,
} from "../../nest-module/index.js";
import { type Dialect, dialects, openIsolatedDatabase, skipIfUnavailable } from "../support/databases.js";
import { type TestApp, Account, accountsDatabase, call, callers, closeDatabases, expectedIds, startTestApp, tenants } from "./support.js";

/** Where salary > 0, select id and salary, order by salary: one event each for Where, Select and Order. */
const salaryQuery = {
  conditionGroup: { conditions: [{ sort: 1, field: "salary", dataType: "Number", operator: "GreaterThan", values: [0] }] },
  selects: ["id", "salary"], orders: [{ sort: 1, field: "salary" }],
};
const plainQuery = { selects: ["id", "name"] };

const waitFor = async (predicate: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error("timed out waiting for the audit events");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe("querylib/nest audit", function () {
  after(closeDatabases);

  describe("QpAuditInterceptor (audit: { sink })", () => {
    let t: TestApp;
    const sink = new QpInMemoryAuditSink();
    before(async () => (t = await startTestApp({ module: { audit: { sink } } })));
    after(() => t.close());
    beforeEach(() => sink.clear());

    it("writes the request's events once, at its end, with the request, the field and the caller", async () => {
      const reply = await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-2", "uma"), body: salaryQuery, headers: { "x-request-id": "req-one" } });
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body.data.map((r: { id: number }) => r.id).sort((a: number, b: number) => a - b)).to.deep.equal(expectedIds("t-2"));
      expect(sink.writes).to.equal(1);
      expect(sink.events.map((e) => e.feature).sort()).to.deep.equal(["Order", "Select", "Where"]);
      for (const event of sink.events) {
        expect(event).to.include({ entity: "accounts", field: "salary", action: "Allowed", enforced: true, clientRequestId: "req-one", method: "POST", path: "/accounts/query" });
        expect(event.refusal).to.equal(undefined);
        expect(event.subjects).to.deep.equal([{ kind: QpSubjectKind.User, value: "uma" }, { kind: QpSubjectKind.Tenant, value: "t-2" }, { kind: QpSubjectKind.Role, value: "member" }]);
        expect(Date.parse(event.at)).to.be.closeTo(Date.now(), 5000);
      }
    });

    it("writes nothing for a query without audited fields", async () => {
      const reply = await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-1"), body: plainQuery });
      expect(reply.status).to.equal(200);
      expect(sink.writes).to.equal(0);
      expect(sink.events).to.deep.equal([]);
    });

    it("records a refused use (Denied), every other audited use of the refused request as Refused, and drains them although the query failed", async () => {
      const rule = await t.service.engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "member", entity: "accounts", field: "salary", features: PolicyFeature.Where, effect: PolicyEffect.Deny });
      try {
        const reply = await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-1", "dora"), body: salaryQuery, headers: { "x-request-id": "req-denied" } });
        expect(reply.status).to.equal(403);
        expect(reply.body).to.include({ code: "FieldDeniedForWhere", errorCode: 1 });
        expect(sink.writes).to.equal(1);
        expect(sink.events.map((e) => [e.feature, e.action, e.refusal, e.clientRequestId])).to.deep.equal([
          ["Where", "Denied", "FieldDeniedForWhere", "req-denied"], ["Order", "Refused", "FieldDeniedForWhere", "req-denied"], ["Select", "Refused", "FieldDeniedForWhere", "req-denied"],
        ]);
      } finally {
        await t.service.engine.deleteRuleAsync(rule.id);
      }
    });

    it("a request refused for an unknown field named before an audited one records a Refused event for every audited use it names", async () => {
      const body = {
        conditionGroup: { conditions: [{ sort: 1, field: "noSuchField", dataType: "Number", operator: "GreaterThan", values: [0] }, { sort: 2, field: "salary", dataType: "Number", operator: "GreaterThan", values: [0] }] },
        selects: ["id", "salary", "alsoUnknown"], orders: [{ sort: 1, field: "salary" }],
      };
      const reply = await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-1", "ivy"), body, headers: { "x-request-id": "req-unknown" } });
      expect(reply.status, reply.text).to.equal(400);
      expect(reply.body.data).to.equal(undefined);
      expect(sink.events.map((e) => [e.field, e.feature, e.action, e.refusal, e.enforced])).to.deep.equal([
        ["salary", "Where", "Refused", reply.body.code, true], ["salary", "Order", "Refused", reply.body.code, true], ["salary", "Select", "Refused", reply.body.code, true],
      ]);
      expect(sink.events.every((e) => e.clientRequestId === "req-unknown" && e.subjects[0]!.value === "ivy")).to.equal(true);
    });

    it("a request refused with QueryStringDenied after its fields were allowed leaves no Allowed event: each says Refused", async () => {
      const reply = await call(t.url, "POST", "/accounts/query-sql", { claims: callers.tenant("t-2"), body: salaryQuery, headers: { "x-request-id": "req-sql" } });
      expect(reply.status, reply.text).to.equal(403);
      expect(reply.body).to.include({ code: "QueryStringDenied", errorCode: 14 });
      expect(sink.events.map((e) => [e.feature, e.action, e.refusal])).to.deep.equal([
        ["Where", "Refused", "QueryStringDenied"], ["Order", "Refused", "QueryStringDenied"], ["Select", "Refused", "QueryStringDenied"],
      ]);
    });

    it("a refused request naming an audited field hundreds of times writes one event per (field, feature, action) with the count, not one per use (#42)", async () => {
      // The flood of the issue: 250 conditions on salary (over MaxConditions, 50: refused after parsing), 100 selects of it and 10 orders on it.
      const conditions = Array.from({ length: 250 }, (_, i) => ({ sort: i + 1, field: "salary", dataType: "Number", operator: "GreaterThan", values: [i] }));
      const body = { conditionGroup: { conditions }, selects: Array.from({ length: 100 }, () => "salary"), orders: Array.from({ length: 10 }, (_, i) => ({ sort: i + 1, field: "salary" })) };
      const reply = await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-1", "flo"), body, headers: { "x-request-id": "req-flood" } });
      expect(reply.status, reply.text).to.equal(400);
      expect(reply.body.code).to.equal("CapExceeded");
      // Before: 360 events (one per use). Now: three, whose counts add up to the 360 uses.
      expect(sink.events.map((e) => [e.field, e.feature, e.action, e.refusal, e.count])).to.deep.equal([
        ["salary", "Where", "Refused", "CapExceeded", 250], ["salary", "Order", "Refused", "CapExceeded", 10], ["salary", "Select", "Refused", "CapExceeded", 100],
      ]);
      // A request of one use of each keeps events without a count (one each), as before.
      sink.clear();
      expect((await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-1"), body: salaryQuery })).status).to.equal(200);
      expect(sink.events.map((e) => e.count)).to.deep.equal([undefined, undefined, undefined]);
    });

    it("two queries of one request using the same field the same way are one event with count 2", async () => {
      const reply = await call(t.url, "POST", "/accounts/query-twice", { claims: callers.tenant("t-3"), body: { selects: ["id", "salary"] } });
      expect(reply.status, reply.text).to.equal(200);
      expect(sink.events.map((e) => [e.feature, e.action, e.count])).to.deep.equal([["Select", "Allowed", 2]]);
    });

    it("writes none for simulate", async () => {
      const reply = await call(t.url, "POST", "/qp-admin/simulate", { claims: callers.reader, body: { entity: "accounts", filter: salaryQuery } });
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body.sql).to.match(/salary/);
      expect(sink.writes).to.equal(0);
    });

    it("never shares a context between concurrent requests: each request gets its own events", async () => {
      const requests = Array.from({ length: 60 }, (_, i) => ({ i, tenant: tenants[i % 3]!, user: `user-${i}`, audited: i % 4 !== 0 }));
      const replies = await Promise.all(requests.map((r) =>
        call(t.url, "POST", "/accounts/query", { claims: callers.tenant(r.tenant, r.user), body: r.audited ? salaryQuery : plainQuery, headers: { "x-request-id": `par-${r.i}` } })));
      replies.forEach((reply, i) => {
        expect(reply.status).to.equal(200);
        expect(reply.body.data.map((row: { id: number }) => row.id).sort((a: number, b: number) => a - b)).to.deep.equal(expectedIds(requests[i]!.tenant));
      });
      expect(sink.writes).to.equal(requests.filter((r) => r.audited).length);
      for (const r of requests) {
        const own = sink.events.filter((e) => e.clientRequestId === `par-${r.i}`);
        expect(own, `request ${r.i}`).to.have.length(r.audited ? 3 : 0);
        for (const e of own) expect(e.subjects.slice(0, 2)).to.deep.equal([{ kind: "User", value: r.user }, { kind: "Tenant", value: r.tenant }]);
      }
    });

    it("generates the request id on the server: two users sending one x-request-id get two ids; the client's value is kept apart", async () => {
      await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-1", "ann"), body: salaryQuery, headers: { "x-request-id": "same-id" } });
      await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-2", "bob"), body: salaryQuery, headers: { "x-request-id": "same-id" } });
      const byUser = (user: string) => sink.events.filter((e) => e.subjects[0]!.value === user);
      const [ann, bob] = [byUser("ann"), byUser("bob")];
      expect(ann).to.have.length(3);
      expect(bob).to.have.length(3);
      for (const events of [ann, bob]) {
        expect(new Set(events.map((e) => e.requestId)).size).to.equal(1);
        expect(events[0]!.requestId).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect(events.every((e) => e.clientRequestId === "same-id")).to.equal(true);
      }
      expect(ann[0]!.requestId).to.not.equal(bob[0]!.requestId);
    });

    it("keeps a client's request id only when it is a short token", async () => {
      await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-1"), body: salaryQuery, headers: { "x-request-id": "bad id with spaces" } });
      expect(sink.events[0]!.requestId).to.match(/^[0-9a-f-]{36}$/);
      expect(sink.events[0]!.clientRequestId).to.equal(null);
    });
  });

  describe("without QpAuditInterceptor or useQpPolicyAudit", () => {
    let t: TestApp;
    const sink = new QpInMemoryAuditSink();
    before(async () => {
      t = await startTestApp({
        module: {
          configure: (options) => {
            options.entities.expose(Account, "accounts");
            options.auditSink = sink;
          },
        },
      });
    });
    after(() => t.close());

    it("builds the events on the context but never writes them", async () => {
      const reply = await call(t.url, "POST", "/accounts/query-count", { claims: callers.tenant("t-1"), body: salaryQuery });
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body.recorded).to.equal(3);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(sink.writes).to.equal(0);
      expect(t.service.auditSink).to.equal(sink);
    });
  });

  describe("useQpPolicyAudit(app) (the middleware form)", () => {
    let t: TestApp;
    const sink = new QpInMemoryAuditSink();
    before(async () => {
      t = await startTestApp({ module: { audit: { sink, interceptor: false } }, beforeListen: (app) => void useQpPolicyAudit(app) });
    });
    after(() => t.close());
    beforeEach(() => sink.clear());

    it("drains each request's events once the response has finished", async () => {
      const reply = await call(t.url, "POST", "/accounts/query-count", { claims: callers.tenant("t-3"), body: salaryQuery, headers: { "x-request-id": "mw-1" } });
      expect(reply.body.recorded).to.equal(3);
      await waitFor(() => sink.events.length === 3);
      expect(sink.writes).to.equal(1);
      expect(new Set(sink.events.map((e) => e.clientRequestId))).to.deep.equal(new Set(["mw-1"]));
    });

    it("also for a request whose handler throws", async () => {
      const reply = await call(t.url, "POST", "/accounts/query-then-fail", { claims: callers.tenant("t-1"), body: salaryQuery });
      expect(reply.status).to.equal(500);
      await waitFor(() => sink.events.length === 3);
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(sink.writes).to.equal(1);
    });

    it("with the interceptor also installed, still writes each event once", async () => {
      const both = new QpInMemoryAuditSink();
      const app = await startTestApp({ module: { audit: { sink: both } }, beforeListen: (a) => void useQpPolicyAudit(a) });
      try {
        await Promise.all([1, 2, 3].map((n) => call(app.url, "POST", "/accounts/query", { claims: callers.tenant("t-2"), body: salaryQuery, headers: { "x-request-id": `both-${n}` } })));
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(both.writes).to.equal(3);
        expect(both.events).to.have.length(9);
      } finally {
        await app.close();
      }
    });
  });

  describe("the MaxAuditEvents cap", () => {
    it("keeps at most MaxAuditEvents distinct events per context, and counts the uses past it in one Truncated event", async () => {
      const sink = new QpInMemoryAuditSink();
      const t = await startTestApp({ module: { audit: { sink }, policies: { Caps: { MaxAuditEvents: 2, MaxPageSize: 100 } } } });
      try {
        const reply = await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-1"), body: salaryQuery });
        expect(reply.status).to.equal(200);
        expect(sink.events).to.have.length(3);
        expect(sink.events.map((e) => [e.field, e.feature, e.action, e.count])).to.deep.equal([["salary", "Where", "Allowed", undefined], ["salary", "Order", "Allowed", undefined], ["*", "*", "Truncated", undefined]]);
        const again = await call(t.url, "POST", "/accounts/query-twice", { claims: callers.tenant("t-1"), body: salaryQuery });
        expect(again.status).to.equal(200);
        expect(sink.events.slice(3).map((e) => [e.feature, e.action, e.count])).to.deep.equal([["Where", "Allowed", 2], ["Order", "Allowed", 2], ["*", "Truncated", 2]]);
      } finally {
        await t.close();
      }
    });
  });

  describe("drainAuditEvents", () => {
    it("drains a scope once: a second call writes nothing", async () => {
      const sink = new QpInMemoryAuditSink();
      const request = { method: "GET", url: "/x?y=1", headers: { "x-request-id": "d-1" } };
      const scope = scopeOf(request);
      const event: QpAuditEvent = { at: new Date().toISOString(), entity: "accounts", field: "salary", feature: "Select", action: "Allowed", subjects: [], enforced: true };
      scope.contexts.push({ auditEvents: [event, event] } as never);
      expect(await drainAuditEvents(scope, sink)).to.equal(2);
      expect(await drainAuditEvents(scope, sink)).to.equal(0);
      expect(sink.events).to.have.length(2);
      expect(sink.events[0]).to.include({ requestId: scope.requestId, clientRequestId: "d-1", method: "GET", path: "/x" });
    });

    it("logs a failing sink and carries on", async () => {
      const scope = scopeOf({});
      scope.contexts.push({ auditEvents: [{ at: "", entity: "e", field: "f", feature: "Select", action: "Allowed", subjects: [], enforced: true }] } as never);
      expect(await drainAuditEvents(scope, { write: async () => { throw new Error("disk full"); } })).to.equal(1);
    });
  });

  describe("sinks", () => {
    it("QpLoggerAuditSink writes one JSON line per event", async () => {
      const lines: string[] = [];
      const sink = new QpLoggerAuditSink({ log: (message: unknown) => void lines.push(String(message)) } as never);
      const event = { at: "2024-01-01T00:00:00.000Z", entity: "accounts", field: "salary", feature: "Where", action: "Denied", subjects: [{ kind: QpSubjectKind.Role, value: "x" }], enforced: true, requestId: "r", method: "POST", path: "/p" };
      await sink.write([event, { ...event, feature: "Select" }]);
      expect(lines.map((l) => JSON.parse(l))).to.deep.equal([event, { ...event, feature: "Select" }]);
    });

    it("QpTypeOrmAuditSink appends the events of real requests to querylib_audit_event (SQLite)", async () => {
      const dataSource = await accountsDatabase();
      const t = await startTestApp({ dataSource, module: { audit: { sink: new QpTypeOrmAuditSink(dataSource) } } });
      try {
        await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-2", "zed"), body: salaryQuery, headers: { "x-request-id": "db-1" } });
        await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-3", "yan"), body: { selects: ["salary"] }, headers: { "x-request-id": "db-2" } });
        const rows = await dataSource.getRepository(QpAuditEventRecord).find({ order: { id: "ASC" } });
        expect(rows.map((r) => [r.clientRequestId, r.feature, r.userId, r.tenant])).to.deep.equal([
          ["db-1", "Where", "zed", "t-2"], ["db-1", "Order", "zed", "t-2"], ["db-1", "Select", "zed", "t-2"], ["db-2", "Select", "yan", "t-3"],
        ]);
        expect(new Set(rows.slice(0, 3).map((r) => r.requestId)).size).to.equal(1);
        expect(rows[0]!.requestId).to.match(/^[0-9a-f-]{36}$/).and.not.equal(rows[3]!.requestId);
        expect(rows[0]).to.include({ entity: "accounts", field: "salary", action: "Allowed", enforced: true, refusal: null, method: "POST", path: "/accounts/query" });
        expect(JSON.parse(rows[0]!.subjects)).to.deep.equal([{ kind: "User", value: "zed" }, { kind: "Tenant", value: "t-2" }, { kind: "Role", value: "member" }]);
      } finally {
        await t.close();
      }
    });

    for (const dialect of dialects) {
      it(`QpTypeOrmAuditSink appends to querylib_audit_event on ${dialect}`, async function () {
        let dataSource: DataSource;
        try {
          dataSource = await openIsolatedDatabase(dialect, "querylib_nest_audit", QpTypeOrmAuditSink.entities);
        } catch (error) {
          skipIfUnavailable(this, error);
        }
        const sink = new QpTypeOrmAuditSink(dataSource!, { batchSize: 2 });
        const events: QpRequestAuditEvent[] = Array.from({ length: 5 }, (_, i) => ({
          at: new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString(), entity: "accounts", field: "salary", feature: i % 2 ? "Select" : "Where", action: "Allowed",
          subjects: [{ kind: QpSubjectKind.User, value: "ünïcode-user" }, { kind: QpSubjectKind.Tenant, value: "t-1" }], enforced: i !== 4, requestId: `r-${i}`, method: "POST", path: "/accounts/query",
        }));
        events[1] = { ...events[1]!, count: 460 };
        await sink.write(events);
        await sink.write(events.slice(0, 1));
        const rows = await dataSource!.getRepository(QpAuditEventRecord).find({ order: { id: "ASC" } });
        expect(rows).to.have.length(6);
        expect(rows.map((r) => r.requestId)).to.deep.equal(["r-0", "r-1", "r-2", "r-3", "r-4", "r-0"]);
        expect(rows.map((r) => r.enforced)).to.deep.equal([true, true, true, true, false, true]);
        expect(rows[1]).to.include({ userId: "ünïcode-user", tenant: "t-1", feature: "Select", at: "2024-01-01T00:00:01.000Z" });
        expect(rows.map((r) => r.count), "an event's count, 1 when it has none").to.deep.equal([1, 460, 1, 1, 1, 1]);

        // The request's path and the caller's subjects reach the INSERT: written into its text,
        // these would end the statement, drop the trail or shift the placeholders.
        const hostile = {
          ...events[0]!, requestId: "r-hostile", path: "/q?x='); DROP TABLE querylib_audit_event; --",
          subjects: [{ kind: QpSubjectKind.User, value: "u\\'\"?$1 :name `x`" }, { kind: QpSubjectKind.Tenant, value: "t'--" }], enforced: false,
        };
        await sink.write([hostile]);
        const stored = await dataSource!.getRepository(QpAuditEventRecord).findOneByOrFail({ requestId: "r-hostile" });
        expect(stored).to.include({ path: hostile.path, userId: "u\\'\"?$1 :name `x`", tenant: "t'--", enforced: false });
        expect(await dataSource!.getRepository(QpAuditEventRecord).count()).to.equal(7);
      });
    }
  });
});
