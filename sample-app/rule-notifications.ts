// How the sample app's replicas hear of rule changes, from the environment (docs/RULES.md "Running
// several replicas"). Nothing set: the relational store's own channel (PostgreSQL LISTEN/NOTIFY;
// SQLite and MariaDB poll), as `npm start` has always run.
//   QUERYLIB_REDIS_URL         Redis pub/sub (QpRedisRuleNotifier over an ioredis client at this URL)
//                              instead of LISTEN/NOTIFY; works on every database. Default: off.
//   QUERYLIB_RULES_CHANNEL     the channel (PostgreSQL or Redis), the same in every replica; default querylib_rules.
//   QUERYLIB_NOTIFY_RETRY_MS   wait before reconnecting a lost notification connection, ms (then the
//                              same again); default 100 doubling up to 5000.
// The poll interval is QueryLib.Policies.RefreshInterval (QUERYLIB_REFRESH_INTERVAL, app.module.ts).
import { type OnApplicationShutdown } from "@nestjs/common";
import type { DataSource } from "typeorm";
import { type IQpRuleNotifier, QpTypeOrmRuleStore } from "../lib/index.js";
import type { BackOffOptions } from "../lib/rules/notifications.js";

/** The rule store and, with QUERYLIB_REDIS_URL, the Redis notifier; closes the Redis client at shutdown. */
export class SampleRuleNotifications implements OnApplicationShutdown {
  private quit: (() => Promise<void>) | null = null;

  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  private backOff(): BackOffOptions {
    const raw = this.env.QUERYLIB_NOTIFY_RETRY_MS;
    if (raw === undefined || raw === "") return {};
    const delay = Number(raw);
    if (!Number.isInteger(delay) || delay < 1) throw new Error(`QUERYLIB_NOTIFY_RETRY_MS must be a whole number of ms, not "${raw}"`);
    return { startingDelay: delay, maxDelay: delay };
  }

  /** The engine's providers: `ruleStore` and, with Redis, `ruleNotifier` (the store then does not LISTEN). */
  async providers(dataSource: DataSource): Promise<{ ruleStore: QpTypeOrmRuleStore; ruleNotifier?: IQpRuleNotifier }> {
    const channel = this.env.QUERYLIB_RULES_CHANNEL || undefined;
    const backOff = this.backOff();
    const redisUrl = this.env.QUERYLIB_REDIS_URL;
    if (!redisUrl) return { ruleStore: new QpTypeOrmRuleStore(dataSource, { notifyChannel: channel, notifyBackOff: backOff }) };
    // Loaded only when asked for: ioredis is an optional peer dependency of QueryLib.
    const [{ Redis }, { QpRedisRuleNotifier }] = await Promise.all([import("ioredis"), import("../lib/rules/redis-notifier.js")]);
    const client = new Redis(redisUrl, { lazyConnect: true });
    this.quit = async () => {
      await client.quit().catch(() => client.disconnect());
    };
    return { ruleStore: new QpTypeOrmRuleStore(dataSource, { notifyChannel: null }), ruleNotifier: new QpRedisRuleNotifier(client, { channel, ...backOff }) };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.quit?.();
  }
}
