// The sample app's environment switches for rule notifications (sample-app/rule-notifications.ts)
// and its RefreshInterval: nothing set keeps what `npm start` always did. The propagation they
// give is measured in sample-app-propagation.test.ts.
import { expect } from "chai";
import { DataSource } from "typeorm";
import { QpTypeOrmRuleStore } from "../../lib/index.js";
import { QpRedisRuleNotifier } from "../../lib/rules/redis-notifier.js";
import { sampleConfiguration } from "../../sample-app/app.module.js";
import { SampleRuleNotifications } from "../../sample-app/rule-notifications.js";

describe("sample app: rule notification switches", () => {
  // Never connected: the providers are only built.
  const postgres = new DataSource({ type: "postgres", url: "postgres://postgres@127.0.0.1:5432/unused" });

  it("nothing set: the relational store's own channel (querylib_rules) and no other notifier", async () => {
    const { ruleStore, ruleNotifier } = await new SampleRuleNotifications({}).providers(postgres);
    expect(ruleStore).to.be.instanceOf(QpTypeOrmRuleStore);
    expect(ruleStore.notifyChannel).to.equal("querylib_rules");
    expect(ruleNotifier).to.equal(undefined);
  });

  it("QUERYLIB_RULES_CHANNEL names the channel", async () => {
    const { ruleStore } = await new SampleRuleNotifications({ QUERYLIB_RULES_CHANNEL: "sample_rules" }).providers(postgres);
    expect(ruleStore.notifyChannel).to.equal("sample_rules");
  });

  it("QUERYLIB_REDIS_URL: Redis pub/sub on the channel, and the store does not LISTEN; the client is closed at shutdown", async () => {
    const notifications = new SampleRuleNotifications({ QUERYLIB_REDIS_URL: "redis://127.0.0.1:6379", QUERYLIB_RULES_CHANNEL: "sample_rules" });
    const { ruleStore, ruleNotifier } = await notifications.providers(postgres);
    expect(ruleStore.notifyChannel).to.equal(null);
    expect(ruleNotifier).to.be.instanceOf(QpRedisRuleNotifier);
    expect((ruleNotifier as QpRedisRuleNotifier).channel).to.equal("sample_rules");
    await notifications.onApplicationShutdown();
  });

  it("QUERYLIB_NOTIFY_RETRY_MS must be a whole number of ms", async () => {
    for (const bad of ["0", "-5", "1.5", "soon"]) {
      const error = await new SampleRuleNotifications({ QUERYLIB_NOTIFY_RETRY_MS: bad }).providers(postgres).then(() => null, (e: Error) => e);
      expect(error?.message, bad).to.match(/QUERYLIB_NOTIFY_RETRY_MS must be a whole number of ms/);
    }
  });

  it("QUERYLIB_REFRESH_INTERVAL sets RefreshInterval (default 00:00:10)", () => {
    const saved = process.env.QUERYLIB_REFRESH_INTERVAL;
    try {
      delete process.env.QUERYLIB_REFRESH_INTERVAL;
      expect(sampleConfiguration().QueryLib.Policies.RefreshInterval).to.equal("00:00:10");
      process.env.QUERYLIB_REFRESH_INTERVAL = "00:01:00";
      expect(sampleConfiguration().QueryLib.Policies.RefreshInterval).to.equal("00:01:00");
    } finally {
      if (saved === undefined) delete process.env.QUERYLIB_REFRESH_INTERVAL;
      else process.env.QUERYLIB_REFRESH_INTERVAL = saved;
    }
  });
});
