// Group commit of audit events (QpGroupCommitAuditSink, module option audit.groupCommit): the
// events of requests that end while a write is in flight go out in one later write; each request
// still waits for its own events; a failed batch is written again request by request, so only
// the request whose events cannot be written loses them (logged, or 503 under failClosed).
import { expect } from "chai";
import { type QpAuditEvent, QpConfigurationError } from "../../lib/index.js";
import { QpGroupCommitAuditSink, QpInMemoryAuditSink, type QpRequestAuditEvent } from "../../nest-module/index.js";
import { type TestApp, call, callers, closeDatabases, startTestApp, startupError } from "./support.js";

const event = (field: string): QpAuditEvent => ({ at: new Date(0).toISOString(), entity: "e", field, feature: "Where", action: "Allowed", enforced: true, subjects: [] } as unknown as QpAuditEvent);

/** A sink whose writes wait until released, recording each write's fields; fails any write holding `poison`. */
class GatedSink {
  readonly writes: string[][] = [];
  private gates: (() => void)[] = [];
  constructor(private readonly poison: string | null = null) {}
  async write(events: readonly QpAuditEvent[]): Promise<void> {
    this.writes.push(events.map((e) => e.field));
    await new Promise<void>((resolve) => this.gates.push(resolve));
    if (this.poison && events.some((e) => e.field === this.poison)) throw new Error(`cannot write ${this.poison}`);
  }
  /** Lets every write waiting now finish, then the microtasks run. */
  async release(): Promise<void> {
    for (const open of this.gates.splice(0)) open();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("audit group commit (QpGroupCommitAuditSink)", () => {
  it("writes a request alone at once, and the requests that end meanwhile together in the next write, in order", async () => {
    const inner = new GatedSink();
    const sink = new QpGroupCommitAuditSink(inner);
    const settled: string[] = [];
    const first = sink.write([event("a")]).then(() => settled.push("a"));
    const later = ["b", "c", "d"].map((f) => sink.write([event(f), event(`${f}2`)]).then(() => settled.push(f)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(inner.writes).to.deep.equal([["a"]]);
    expect(settled, "no request settles before its own events are written").to.deep.equal([]);
    await inner.release();
    await first;
    expect(inner.writes).to.deep.equal([["a"], ["b", "b2", "c", "c2", "d", "d2"]]);
    expect(settled).to.deep.equal(["a"]);
    await inner.release();
    await Promise.all(later);
    expect(settled).to.deep.equal(["a", "b", "c", "d"]);
    expect(sink.writes).to.equal(2);
  });

  it("never passes maxEvents in one write, and never splits a request", async () => {
    const inner = new GatedSink();
    const sink = new QpGroupCommitAuditSink(inner, { maxEvents: 3 });
    const all = [sink.write([event("x")]), sink.write([event("p"), event("q")]), sink.write([event("r")]), sink.write([event("s"), event("t"), event("u"), event("v")])];
    for (let i = 0; i < 5; i++) await inner.release();
    await Promise.all(all);
    expect(inner.writes).to.deep.equal([["x"], ["p", "q", "r"], ["s", "t", "u", "v"]]);
  });

  it("a failed batch is written again request by request: only the request that cannot be written loses its events", async () => {
    const inner = new GatedSink("bad");
    const sink = new QpGroupCommitAuditSink(inner);
    const first = sink.write([event("a")]);
    const outcomes = ["ok1", "bad", "ok2"].map((f) => sink.write([event(f)]).then(() => `${f} written`, (error: Error) => `${f} lost: ${error.message}`));
    for (let i = 0; i < 6; i++) await inner.release();
    await first;
    expect(await Promise.all(outcomes)).to.deep.equal(["ok1 written", "bad lost: cannot write bad", "ok2 written"]);
    expect(inner.writes).to.deep.equal([["a"], ["ok1", "bad", "ok2"], ["ok1"], ["bad"], ["ok2"]]);
  });

  it("refuses a bad maxEvents", () => {
    for (const maxEvents of [0, -1, 1.5, 100_001]) expect(() => new QpGroupCommitAuditSink(new QpInMemoryAuditSink(), { maxEvents })).to.throw(RangeError);
  });

  describe("in a Nest application (audit: { sink, groupCommit: true })", () => {
    let t: TestApp;
    /** A sink that takes a few milliseconds per write, as a database does. */
    class SlowSink extends QpInMemoryAuditSink {
      override async write(events: readonly QpAuditEvent[]): Promise<void> {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return super.write(events);
      }
    }
    const sink = new SlowSink();
    before(async () => (t = await startTestApp({ module: { audit: { sink, groupCommit: true } } })));
    after(async () => {
      await t.close();
      await closeDatabases();
    });

    it("40 concurrent requests: every request's events are written, with its own request id, in fewer writes than requests", async () => {
      const salaryQuery = { conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "salary", dataType: "Number", operator: "GreaterThan", values: [0] }] } };
      const replies = await Promise.all(Array.from({ length: 40 }, (_, i) =>
        call(t.url, "POST", "/accounts/query", { claims: callers.tenant(`t-${1 + (i % 3)}`, `user-${i}`), body: salaryQuery, headers: { "x-request-id": `req-${i}` } })));
      for (const reply of replies) expect(reply.status, reply.text).to.equal(200);
      const events = sink.events as QpRequestAuditEvent[];
      const byClient = new Map<string, QpRequestAuditEvent[]>();
      for (const e of events) byClient.set(e.clientRequestId!, [...(byClient.get(e.clientRequestId!) ?? []), e]);
      expect(byClient.size).to.equal(40);
      for (const [client, own] of byClient) {
        expect(own.length, client).to.be.greaterThan(0);
        expect(own.every((e) => e.field === "salary"), client).to.equal(true);
        expect(new Set(own.map((e) => e.requestId)).size).to.equal(1);
        expect(own[0]!.subjects.find((s) => s.kind === "User")?.value).to.equal(`user-${client.slice(4)}`);
      }
      expect(sink.writes, "group commit: fewer writes than requests").to.be.lessThan(40);
    });

    it("refuses a bad groupCommit at startup", async () => {
      const error = await startupError({ module: { audit: { sink, groupCommit: { maxEvents: 0 } } } });
      expect(error).to.be.instanceOf(QpConfigurationError);
      expect(error.message).to.match(/audit\.groupCommit/);
    });
  });
});
