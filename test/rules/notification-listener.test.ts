// The shared listening connection behind every notifier, on a connector in memory: its states,
// what reaches subscribers, back-off between attempts, the heartbeat that notices a silent peer,
// and closing (by its last subscriber, or because what it depends on was closed).
import assert from "node:assert/strict";
import type { ChannelConnector, OpenedChannel, QpRuleChange, QpRuleChangeSubscriber } from "../../lib/rules/notifications.js";
import { sharedListener } from "../../lib/rules/notifications.js";
import { QpRedisRuleNotifier, type RedisPubSubLike } from "../../lib/rules/redis-notifier.js";
import { QpPostgresRuleNotifier } from "../../lib/rules/pg-listener.js";
import { QpConfigurationError } from "../../lib/index.js";
import type { DataSource } from "typeorm";
import { sleep } from "./support.js";

/** A connector whose connections the test opens, fails, silences and loses at will. */
class FakeConnector implements ChannelConnector {
  opens: number[] = [];
  failNextOpens = 0;
  pingAnswers: "yes" | "never" | "error" = "yes";
  usableNow = true;
  closed = 0;
  /** close() never settles, as pg's end() waits on a server gone silent. */
  closeHangs = false;
  deliver: ((payload: string) => void) | null = null;
  lose: ((error: Error) => void) | null = null;

  usable(): boolean {
    return this.usableNow;
  }

  async open(deliver: (payload: string) => void, lost: (error: Error) => void): Promise<OpenedChannel> {
    this.opens.push(Date.now());
    if (this.failNextOpens > 0) {
      this.failNextOpens--;
      throw new Error("connection refused");
    }
    this.deliver = deliver;
    this.lose = lost;
    return {
      close: () => {
        this.closed++;
        return this.closeHangs ? new Promise<void>(() => undefined) : Promise.resolve();
      },
      ping: () => (this.pingAnswers === "yes" ? Promise.resolve() : this.pingAnswers === "error" ? Promise.reject(new Error("ping failed")) : new Promise<void>(() => undefined)),
    };
  }
}

class Recorder implements QpRuleChangeSubscriber {
  changes: QpRuleChange[] = [];
  listenings = 0;
  changed(change: QpRuleChange): void {
    this.changes.push(change);
  }
  listening(): void {
    this.listenings++;
  }
}

async function until(what: string, condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(2);
  }
}

describe("Rules: the shared listening connection", () => {
  it("connects, tells subscribers it listens, delivers well-formed announcements only, and closes with its last subscriber", async () => {
    const connector = new FakeConnector();
    const listener = sharedListener({}, "c", () => connector);
    const one = new Recorder();
    const two = new Recorder();
    const first = listener.subscribe(one);
    const second = listener.subscribe(two);
    assert.equal(first.state, "connecting");
    await until("listening", () => first.state === "listening");
    assert.deepEqual([one.listenings, two.listenings], [1, 1]);
    for (const payload of ['{"epoch":"e","version":3}', "not json", '{"epoch":"e"}', '{"epoch":"e","version":-1}', '{"epoch":"e","version":1.5}', '{"epoch":7,"version":1}']) connector.deliver!(payload);
    assert.deepEqual(one.changes, [{ epoch: "e", version: 3 }]);
    assert.deepEqual(two.changes, [{ epoch: "e", version: 3 }]);
    await first.closeAsync();
    assert.equal(first.state, "polling-only");
    assert.equal(second.state, "listening");
    assert.equal(connector.closed, 0);
    await second.closeAsync();
    assert.equal(connector.closed, 1);
    assert.equal(listener.isClosed, true);
  });

  it("a lost connection: reconnecting with the error, attempts spaced by a doubling delay, then listening again (subscribers told)", async function () {
    this.timeout(10_000);
    const connector = new FakeConnector();
    const subscription = sharedListener({}, "c", () => connector, { startingDelay: 40, maxDelay: 200 }).subscribe(new Recorder());
    await until("listening", () => subscription.state === "listening");
    connector.failNextOpens = 4;
    connector.lose!(new Error("terminating connection due to administrator command"));
    await until("reconnecting", () => subscription.state === "reconnecting");
    assert.equal(subscription.lastError, "rule change notifications: terminating connection due to administrator command");
    await until("listening again", () => subscription.state === "listening");
    assert.equal(subscription.lastError, null);
    const gaps = connector.opens.slice(1).map((at, i) => at - connector.opens[i]!);
    // Delays drawn in [d/2, d] for d = 40, 80, 160, 200 (capped) after the loss, 40 again after success.
    const expected = [40, 80, 160, 200];
    assert.equal(gaps.length, 5);
    gaps.slice(1).forEach((gap, i) => assert.ok(gap >= expected[i]! / 2 - 2 && gap <= expected[i]! + 60, `gap ${i}: ${gap} ms for a delay of up to ${expected[i]} ms`));
    await subscription.closeAsync();
  });

  it("a heartbeat that fails, or stays unanswered for a period, counts as a lost connection", async () => {
    for (const answer of ["error", "never"] as const) {
      const connector = new FakeConnector();
      const subscription = sharedListener({}, "c", () => connector, { startingDelay: 1000, heartbeat: 30 }).subscribe(new Recorder());
      await until("listening", () => subscription.state === "listening");
      await sleep(100);
      assert.equal(subscription.state, "listening", "answered heartbeats keep it listening");
      connector.pingAnswers = answer;
      await until(`reconnecting after a heartbeat that ${answer === "error" ? "fails" : "is never answered"}`, () => subscription.state === "reconnecting", 1000);
      assert.match(subscription.lastError!, answer === "error" ? /ping failed/ : /no answer to a heartbeat within 30 ms/);
      assert.equal(connector.closed, 1, "the silent connection is closed");
      await subscription.closeAsync();
    }
  });

  it("a lost connection whose close never finishes (a server gone silent) degrades health at once and reconnects", async () => {
    const connector = new FakeConnector();
    connector.closeHangs = true;
    const subscription = sharedListener({}, "c", () => connector, { startingDelay: 20, heartbeat: 30 }).subscribe(new Recorder());
    await until("listening", () => subscription.state === "listening");
    connector.pingAnswers = "never";
    // Before, the listener awaited close() first: it said "listening" while TCP's timeouts ran.
    await until("reconnecting although close() never finishes", () => subscription.state === "reconnecting", 1000);
    assert.match(subscription.lastError!, /no answer to a heartbeat/);
    connector.pingAnswers = "yes";
    await until("listening again on a new connection", () => subscription.state === "listening" && connector.opens.length === 2, 2000);
    connector.closeHangs = false;
    await subscription.closeAsync();
  });

  it("QpRedisRuleNotifier: a publish that fails is kept in lastPublishError (the write stands; replicas poll), cleared by the next that succeeds", async () => {
    let fail = true;
    const client = {
      status: "ready",
      publish: async () => {
        if (fail) throw new Error("Connection is closed.");
        return 1;
      },
      duplicate: () => { throw new Error("not subscribed in this test"); },
    } as unknown as RedisPubSubLike;
    const notifier = new QpRedisRuleNotifier(client);
    await notifier.publishAsync({ epoch: "e", version: 1 });
    assert.equal(notifier.lastPublishError, "Connection is closed.");
    fail = false;
    await notifier.publishAsync({ epoch: "e", version: 2 });
    assert.equal(notifier.lastPublishError, null);
  });

  it("QpPostgresRuleNotifier refuses a channel that is no lower-case identifier (it is written into LISTEN)", () => {
    for (const channel of ['rules"; DROP TABLE querylib_rule; --', "Rules", "", "1rules"]) {
      assert.throws(() => new QpPostgresRuleNotifier({} as DataSource, channel), QpConfigurationError, channel);
    }
    assert.equal(new QpPostgresRuleNotifier({} as DataSource, "querylib_rules").channel, "querylib_rules");
  });

  it("closing during a back-off wait ends at once and attempts nothing more", async () => {
    const connector = new FakeConnector();
    connector.failNextOpens = 100;
    const listener = sharedListener({}, "c", () => connector, { startingDelay: 60_000, maxDelay: 60_000 });
    const subscription = listener.subscribe(new Recorder());
    await until("reconnecting", () => subscription.state === "reconnecting");
    const started = Date.now();
    await subscription.closeAsync();
    assert.ok(Date.now() - started < 100);
    await sleep(50);
    assert.equal(connector.opens.length, 1);
  });

  it("closes itself within a second once what it depends on is closed; one listener per owner and channel", async () => {
    const owner = {};
    const connector = new FakeConnector();
    const listener = sharedListener(owner, "c", () => connector);
    assert.equal(sharedListener(owner, "c", () => new FakeConnector()), listener);
    assert.notEqual(sharedListener(owner, "d", () => new FakeConnector()), listener);
    const subscription = listener.subscribe(new Recorder());
    await until("listening", () => subscription.state === "listening");
    connector.usableNow = false;
    await until("closed", () => listener.isClosed, 1500);
    assert.equal(subscription.state, "polling-only");
    assert.equal(connector.closed, 1);
    assert.notEqual(sharedListener(owner, "c", () => new FakeConnector()), listener, "a closed listener is replaced");
  });
});
