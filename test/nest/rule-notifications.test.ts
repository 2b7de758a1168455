// QueryLibModule and rule change notifications: the module's engine listens on the notifier it
// is given, /health names the channel's state, and closing the application closes the
// subscription (a listening connection must not outlive the module that owns the engine). The
// process-wide engine (useDefaultEngine) outlives the module and keeps listening.
import { expect } from "chai";
import { type IQpRuleNotifier, type QpNotificationState, type QpRuleChangeSubscriber, type QpRuleSubscription } from "../../lib/index.js";
import { resetDefaultPolicyEngineForTests } from "../../lib/engine/engine.js";
import { call, callers, closeDatabases, startTestApp } from "./support.js";

/** A notifier in memory that records its subscriptions. */
class RecordingNotifier implements IQpRuleNotifier {
  readonly subscriptions: { subscriber: QpRuleChangeSubscriber; closed: boolean }[] = [];

  subscribe(subscriber: QpRuleChangeSubscriber): QpRuleSubscription {
    const entry = { subscriber, closed: false };
    this.subscriptions.push(entry);
    return {
      get state(): QpNotificationState {
        return entry.closed ? "polling-only" : "listening";
      },
      lastError: null,
      async closeAsync() {
        entry.closed = true;
      },
    };
  }
}

describe("NestJS: rule change notifications", () => {
  after(closeDatabases);

  it("the module's engine listens, /health says so, and closing the application closes the subscription", async () => {
    const ruleNotifier = new RecordingNotifier();
    const app = await startTestApp({ module: { providers: { ruleNotifier } } });
    try {
      expect(ruleNotifier.subscriptions).to.have.length(1);
      const health = await call(app.url, "GET", "/qp-admin/health", { claims: callers.reader });
      expect(health.body).to.include({ degraded: false, notifications: "listening" });
    } finally {
      await app.close();
    }
    expect(ruleNotifier.subscriptions[0]!.closed).to.equal(true);
    expect(app.service.engine.health().notifications).to.equal("polling-only");
  });

  it("the process-wide engine (useDefaultEngine) keeps listening after the module closes", async () => {
    const ruleNotifier = new RecordingNotifier();
    try {
      const app = await startTestApp({ module: { useDefaultEngine: true, admin: undefined, providers: { ruleNotifier } } });
      await app.close();
      expect(ruleNotifier.subscriptions.map((s) => s.closed)).to.deep.equal([false]);
    } finally {
      resetDefaultPolicyEngineForTests();
    }
  });
});
