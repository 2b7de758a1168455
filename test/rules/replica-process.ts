// A replica in its own OS process (forked by replicas.test.ts): one engine on the shared rule
// store with a long RefreshInterval, watched continuously (replica-watch.ts), answering the
// parent over IPC. On "stop" it closes what it opened and returns: the process must then exit
// by itself (nothing of the engine's listening may keep it alive).
import "reflect-metadata";
import { Redis } from "ioredis";
import { DataSource, type DataSourceOptions } from "typeorm";
import { QpTypeOrmRuleStore, type QpPolicyHealth } from "../../lib/index.js";
import { QpRedisRuleNotifier } from "../../lib/rules/redis-notifier.js";
import { RuleWatcher } from "./replica-watch.js";
import { engine, sleep, storeEntities } from "./support.js";

export interface ReplicaConfig {
  connection: Record<string, unknown>;
  notifyChannel: string | null;
  redisChannel?: string;
  refreshInterval: number;
}

export type ReplicaRequest = { type: "seen"; n: number; timeoutMs: number } | { type: "health" } | { type: "stop"; closeEngine: boolean };
export type ReplicaReply =
  | { type: "ready"; health: QpPolicyHealth }
  | { type: "seen"; n: number; at: number }
  | { type: "health"; health: QpPolicyHealth }
  | { type: "report"; regressions: string[]; observations: number }
  | { type: "error"; message: string };

const send = (reply: ReplicaReply) => process.send!(reply);

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]!) as ReplicaConfig;
  const dataSource = await new DataSource({ ...config.connection, entities: storeEntities, synchronize: false, logging: false } as unknown as DataSourceOptions).initialize();
  const redis = config.redisChannel ? new Redis({ host: "127.0.0.1", port: 6379, connectionName: "rulenotify-child" }) : null;
  const store = new QpTypeOrmRuleStore(dataSource, { notifyChannel: config.notifyChannel });
  const ruleNotifier = redis ? new QpRedisRuleNotifier(redis, { channel: config.redisChannel! }) : undefined;
  const b = engine({ refreshInterval: config.refreshInterval }, { ruleStore: store, ...(ruleNotifier ? { ruleNotifier } : {}) });
  const watcher = new RuleWatcher(b);
  for (let i = 0; i < 500 && b.health().notifications === "connecting"; i++) await sleep(10);
  send({ type: "ready", health: b.health() });

  process.on("message", async (request: ReplicaRequest) => {
    try {
      if (request.type === "seen") send({ type: "seen", n: request.n, at: await watcher.seen(request.n, request.timeoutMs) });
      else if (request.type === "health") send({ type: "health", health: b.health() });
      else {
        await watcher.stop();
        send({ type: "report", regressions: watcher.regressions, observations: watcher.observations });
        if (request.closeEngine) await b.closeAsync();
        await dataSource.destroy();
        redis?.disconnect();
        process.disconnect();
      }
    } catch (error) {
      send({ type: "error", message: (error as Error).message });
    }
  });
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
  process.disconnect?.();
});
