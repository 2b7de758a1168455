// An audit sink that cannot write. The sink's PostgreSQL database goes down in the middle of a
// run of requests (a TCP proxy between the sink's DataSource and the shared server is cut, then
// restored; the shared server itself is never stopped) and the test counts: under auditFailure
// "failClosed" every response that carried data has its events in the table (0 lost) and the
// others are 503 AuditUnavailable without data; under "log" every lost event is named, with its
// request id, in the log. A sink whose write throws ENOSPC stands for a full disk. The relational
// sink's bounded retries of transient failures, and the startup checks of the option.
import { expect } from "chai";
import { DataSource, Like } from "typeorm";
import { QpAuditEventRecord, QpTypeOrmAuditSink, isTransientAuditFailure, type QpRequestAuditEvent } from "../../nest-module/index.js";
import type { IQpAuditSink } from "../../lib/index.js";
import { isolatedDatabaseUrl, openIsolatedDatabase, skipIfUnavailable } from "../support/databases.js";
import { type TcpProxy, startTcpProxy } from "../support/tcp-proxy.js";
import { type Reply, type TestApp, assertNoStack, call, callers, closeDatabases, expectedIds, startTestApp, startupError, tenants } from "./support.js";

/** Where salary > 0, select id and salary, order by salary: three audited uses (Where, Select, Order). */
const salaryQuery = {
  conditionGroup: { conditions: [{ sort: 1, field: "salary", dataType: "Number", operator: "GreaterThan", values: [0] }] },
  selects: ["id", "salary"], orders: [{ sort: 1, field: "salary" }],
};
const auditedFeatures = ["Order", "Select", "Where"];

/** Every line logged through Nest's Logger while installed (app.useLogger). */
class CapturingLogger {
  readonly lines: string[] = [];
  log(message: unknown) { this.lines.push(String(message)); }
  error(message: unknown) { this.lines.push(String(message)); }
  warn(message: unknown) { this.lines.push(String(message)); }
  debug() {}
  verbose() {}

  /** The events logged as lost ("lost audit event {json}"). */
  lostEvents(): QpRequestAuditEvent[] {
    return this.lines.filter((l) => l.startsWith("lost audit event ")).map((l) => JSON.parse(l.slice("lost audit event ".length)) as QpRequestAuditEvent);
  }
}

interface Sent {
  readonly clientId: string;
  readonly tenant: string;
  readonly reply: Reply;
}

/**
 * `count` audited requests, `concurrency` at a time, each with its own x-request-id; `onStart(i)`
 * runs as request i is sent (the test cuts and restores the database there, with requests in flight).
 */
async function sendRun(t: TestApp, label: string, count: number, concurrency: number, onStart: (i: number) => void): Promise<Sent[]> {
  const sent: Sent[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      onStart(i);
      const tenant = tenants[i % 3]!;
      const clientId = `${label}-${i}`;
      const reply = await call(t.url, "POST", "/accounts/query", { claims: callers.tenant(tenant, `user-${i}`), body: salaryQuery, headers: { "x-request-id": clientId } });
      sent.push({ clientId, tenant, reply });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return sent;
}

const carriedData = (s: Sent) => s.reply.status === 200 && Array.isArray(s.reply.body?.data);

describe("querylib/nest audit: a sink that cannot write", function () {
  let direct: DataSource | undefined; // reads the trail, never through the proxy
  let proxy: TcpProxy | undefined;
  let sinkSource: DataSource | undefined; // the sink's, through the proxy

  before(async function () {
    try {
      direct = await openIsolatedDatabase("postgres", "querylib_nest_audit_failure", QpTypeOrmAuditSink.entities);
    } catch (error) {
      skipIfUnavailable(this, error);
    }
    const url = new URL(isolatedDatabaseUrl("postgres", "querylib_nest_audit_failure"));
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.host = `127.0.0.1:${proxy.port}`;
    sinkSource = await new DataSource({ type: "postgres", url: url.toString(), entities: QpTypeOrmAuditSink.entities, logging: false, connectTimeoutMS: 2000 }).initialize();
  });
  after(async () => {
    await sinkSource?.destroy();
    await proxy?.close();
    await closeDatabases();
  });
  beforeEach(async () => {
    proxy?.restore();
    await direct?.getRepository(QpAuditEventRecord).clear();
  });

  const trailOf = async (label: string) => direct!.getRepository(QpAuditEventRecord).find({ where: { clientRequestId: Like(`${label}-%`) } });
  /** The audited features of a request found in the table. */
  const featuresIn = (rows: QpAuditEventRecord[], clientId: string) => new Set(rows.filter((r) => r.clientRequestId === clientId).map((r) => r.feature));

  it("failClosed: the database goes down mid-run; every response that carried data has its events in the table, the others are 503 without data", async () => {
    const t = await startTestApp({ module: { audit: { sink: new QpTypeOrmAuditSink(sinkSource!) }, auditFailure: "failClosed" } });
    try {
      const sent = await sendRun(t, "fc", 60, 4, (i) => {
        if (i === 20) proxy!.cut();
        if (i === 45) proxy!.restore();
      });
      const rows = await trailOf("fc");
      const withData = sent.filter(carriedData);
      const lost = withData.filter((s) => auditedFeatures.some((f) => !featuresIn(rows, s.clientId).has(f)));
      expect(lost.map((s) => s.clientId), "responses with data whose events are not in the table").to.deep.equal([]);
      for (const s of withData) expect(s.reply.body.data.map((r: { id: number }) => r.id).sort((a: number, b: number) => a - b)).to.deep.equal(expectedIds(s.tenant));
      const withheld = sent.filter((s) => !carriedData(s));
      for (const s of withheld) {
        expect(s.reply.status, s.reply.text).to.equal(503);
        expect(Object.keys(s.reply.body).sort()).to.deep.equal(["code", "message"]);
        expect(s.reply.body.code).to.equal("AuditUnavailable");
        assertNoStack(s.reply);
      }
      // The outage was real (requests were refused) and over (requests after it carried data again).
      expect(withheld.length, "503 responses during the outage").to.be.greaterThan(0);
      expect(withData.filter((s) => Number(s.clientId.split("-")[1]) >= 50).length, "data after the restore").to.be.greaterThan(0);
      expect(withData.length + withheld.length).to.equal(60);
    } finally {
      await t.close();
    }
  });

  it("log: the database goes down mid-run; every response carries data and the log names every lost event with its request id", async () => {
    const logger = new CapturingLogger();
    const t = await startTestApp({ module: { audit: { sink: new QpTypeOrmAuditSink(sinkSource!) } }, beforeListen: (app) => app.useLogger(logger) });
    try {
      const sent = await sendRun(t, "lg", 60, 4, (i) => {
        if (i === 20) proxy!.cut();
        if (i === 45) proxy!.restore();
      });
      expect(sent.filter((s) => !carriedData(s)).map((s) => s.reply.text)).to.deep.equal([]);
      const rows = await trailOf("lg");
      const logged = logger.lostEvents();
      let lostEvents = 0;
      for (const s of sent) {
        const inTable = featuresIn(rows, s.clientId);
        for (const feature of auditedFeatures.filter((f) => !inTable.has(f))) {
          lostEvents++;
          const named = logged.filter((e) => e.clientRequestId === s.clientId && e.feature === feature);
          expect(named, `lost event ${s.clientId} ${feature} is not in the log`).to.have.length(1);
          expect(named[0]!.requestId).to.match(/^[0-9a-f-]{36}$/);
          expect(logger.lines.some((l) => l.startsWith("audit sink failed to write 3 event(s) of request ") && l.includes(named[0]!.requestId!))).to.equal(true);
        }
      }
      expect(lostEvents, "events lost during the outage").to.be.greaterThan(0);
    } finally {
      silenceNestLogger(t);
      await t.close();
    }
  });

  it("the relational sink rides out a short outage: transient failures are retried with back-off, and nothing is lost", async () => {
    const sink = new QpTypeOrmAuditSink(sinkSource!);
    const event: QpRequestAuditEvent = {
      at: new Date().toISOString(), entity: "accounts", field: "salary", feature: "Select", action: "Allowed", subjects: [], enforced: true, requestId: "r", clientRequestId: "retry-1", method: "POST", path: "/p",
    };
    const before = proxy!.refused;
    proxy!.refuseNext(2);
    await sink.write([event]);
    expect(proxy!.refused - before).to.equal(2);
    expect(await direct!.getRepository(QpAuditEventRecord).count({ where: { clientRequestId: "retry-1" } })).to.equal(1);
  });
});

/** Nest's Logger is process-wide: put it back to silent (logger: false) after a capturing test. */
function silenceNestLogger(t: TestApp) {
  t.app.useLogger(false);
}

describe("querylib/nest audit: a sink whose disk is full", () => {
  const fullDisk: IQpAuditSink = {
    write: async () => {
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    },
  };
  after(closeDatabases);

  it("failClosed: 503 AuditUnavailable and none of the data; a request without audited fields is answered", async () => {
    const t = await startTestApp({ module: { audit: { sink: fullDisk }, auditFailure: "failClosed" } });
    try {
      const reply = await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-1"), body: salaryQuery });
      expect(reply.status, reply.text).to.equal(503);
      expect(reply.body.code).to.equal("AuditUnavailable");
      expect(reply.body.message).to.match(/audit trail could not be written/);
      expect(reply.body.data).to.equal(undefined);
      expect(reply.text).to.not.match(/ENOSPC|salary|Holder/);
      assertNoStack(reply);
      // A refused request is answered 503 too: its (Refused) events could not be written either.
      const refused = await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-1"), body: { ...salaryQuery, selects: ["nope", "salary"] } });
      expect(refused.status).to.equal(503);
      const plain = await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-1"), body: { selects: ["id", "name"] } });
      expect(plain.status).to.equal(200);
      expect(plain.body.data.map((r: { id: number }) => r.id).sort((a: number, b: number) => a - b)).to.deep.equal(expectedIds("t-1"));
    } finally {
      await t.close();
    }
  });

  it("log (the default): the data goes out and the log names the request and its lost events", async () => {
    const logger = new CapturingLogger();
    const t = await startTestApp({ module: { audit: { sink: fullDisk } }, beforeListen: (app) => app.useLogger(logger) });
    try {
      const reply = await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-2"), body: salaryQuery, headers: { "x-request-id": "disk-1" } });
      expect(reply.status).to.equal(200);
      expect(reply.body.data.map((r: { id: number }) => r.id).sort((a: number, b: number) => a - b)).to.deep.equal(expectedIds("t-2"));
      const lost = logger.lostEvents();
      expect(lost.map((e) => [e.feature, e.clientRequestId])).to.deep.equal([["Where", "disk-1"], ["Order", "disk-1"], ["Select", "disk-1"]]);
      expect(logger.lines).to.include(`audit sink failed to write 3 event(s) of request ${lost[0]!.requestId} (client id disk-1): ENOSPC: no space left on device, write`);
    } finally {
      silenceNestLogger(t);
      await t.close();
    }
  });
});

describe("querylib/nest audit: QpTypeOrmAuditSink retries", () => {
  /** A DataSource whose inserts fail `failures` times with `error`, then reach a real SQLite database. */
  async function flaky(failures: number, error: () => Error) {
    const real = await new DataSource({ type: "better-sqlite3", database: ":memory:", entities: QpTypeOrmAuditSink.entities, synchronize: true, logging: false }).initialize();
    const state = { attempts: 0 };
    const stand = {
      options: real.options,
      driver: real.driver,
      getMetadata: (entity: typeof QpAuditEventRecord) => real.getMetadata(entity),
      manager: {
        query: async (sql: string, parameters: unknown[]) => {
          state.attempts++;
          if (state.attempts <= failures) throw error();
          return real.manager.query(sql, parameters);
        },
      },
    } as unknown as DataSource;
    return { real, stand, state };
  }
  const event = (i: number): QpRequestAuditEvent => ({
    at: new Date().toISOString(), entity: "accounts", field: "salary", feature: "Select", action: "Allowed", subjects: [], enforced: true, requestId: `r-${i}`, method: null, path: null,
  });
  const reset = () => Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });

  it("retries a transient failure up to 3 times (4 attempts), then gives up", async () => {
    const twice = await flaky(2, reset);
    await new QpTypeOrmAuditSink(twice.stand).write([event(1)]);
    expect(twice.state.attempts).to.equal(3);
    expect(await twice.real.getRepository(QpAuditEventRecord).count()).to.equal(1);

    const always = await flaky(99, reset);
    let failed: unknown = null;
    await new QpTypeOrmAuditSink(always.stand).write([event(2)]).catch((error: unknown) => (failed = error));
    expect((failed as { code?: string })?.code).to.equal("ECONNRESET");
    expect(always.state.attempts).to.equal(4);
    await Promise.all([twice.real.destroy(), always.real.destroy()]);
  });

  it("does not retry a failure that is not transient (a full disk, a missing table)", async () => {
    const full = await flaky(99, () => Object.assign(new Error("could not extend file: No space left on device"), { code: "53100" }));
    const failed = await new QpTypeOrmAuditSink(full.stand).write([event(3)]).then(() => null, (error: unknown) => error);
    expect((failed as { code?: string }).code).to.equal("53100");
    expect(full.state.attempts).to.equal(1);
    await full.real.destroy();
  });

  it("tells transient failures apart", () => {
    const transients = [
      { code: "ECONNREFUSED" }, { code: "08006" }, { code: "57P01" }, { driverError: { code: "PROTOCOL_CONNECTION_LOST" } },
      new Error("Connection terminated unexpectedly"), new AggregateError([{ code: "ECONNREFUSED" }]),
    ];
    for (const transient of transients) {
      expect(isTransientAuditFailure(transient), JSON.stringify(transient)).to.equal(true);
    }
    for (const other of [{ code: "53100" }, { code: "ENOSPC" }, { code: "42P01" }, new Error("relation \"querylib_audit_event\" does not exist"), null, "ECONNRESET"]) {
      expect(isTransientAuditFailure(other), JSON.stringify(other)).to.equal(false);
    }
  });

  it("checks its options", () => {
    expect(() => new QpTypeOrmAuditSink({} as DataSource, { retries: -1 })).to.throw(/retries/);
    expect(() => new QpTypeOrmAuditSink({} as DataSource, { retryDelay: Number.NaN })).to.throw(/retryDelay/);
    expect(() => new QpTypeOrmAuditSink({} as DataSource, { batchSize: 0 })).to.throw(/batchSize/);
  });
});

describe("querylib/nest audit: auditFailure at startup", () => {
  after(closeDatabases);

  it("refuses an unknown mode, and failClosed without the interceptor (the middleware drains after the response is sent)", async () => {
    expect((await startupError({ module: { audit: true, auditFailure: "sometimes" as never } })).message).to.match(/auditFailure must be "log" or "failClosed"/);
    expect((await startupError({ module: { audit: { interceptor: false }, auditFailure: "failClosed" } })).message).to.match(/failClosed" needs audit drained by QpAuditInterceptor/);
    expect((await startupError({ module: { auditFailure: "failClosed" } })).message).to.match(/failClosed" needs audit/);
  });
});
