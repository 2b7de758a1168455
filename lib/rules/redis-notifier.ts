// querylib/redis-rules: rule change notifications over Redis pub/sub (ioredis), for any rule
// store. The engine publishes a write's snapshot identity after the write committed and it has
// loaded it; every engine subscribed to the channel reloads when the version is newer than its
// own. Subscribing takes a connection of its own (client.duplicate()), one per client and
// channel in a process; its reconnection is the listener's own back-off (ioredis's is switched
// off on it), and it never keeps the process alive.
import { type BackOffOptions, type ChannelConnector, type IQpRuleNotifier, type OpenedChannel, type QpRuleChange, type QpRuleChangeSubscriber, type QpRuleSubscription,
  changePayload, checkNotifyChannel, defaultNotifyChannel, sharedListener } from "./notifications.js";

/** The part of an ioredis client the notifier uses. */
export interface RedisPubSubLike {
  readonly status: string;
  readonly options?: { connectionName?: string | undefined };
  publish(channel: string, message: string): Promise<unknown>;
  duplicate(override?: Record<string, unknown>): RedisSubscriberLike;
}

export interface RedisSubscriberLike {
  readonly stream?: { unref?(): void };
  connect(): Promise<void>;
  subscribe(channel: string): Promise<unknown>;
  /** Allowed on a subscribed connection. */
  ping(): Promise<unknown>;
  disconnect(): void;
  on(event: "message", listener: (channel: string, message: string) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  on(event: "end", listener: () => void): unknown;
}

export interface QpRedisRuleNotifierOptions extends BackOffOptions {
  /** The pub/sub channel, the same in every replica; default "querylib_rules". */
  channel?: string;
}

export class QpRedisRuleNotifier implements IQpRuleNotifier {
  readonly channel: string;
  /** The last publish that failed (the write itself succeeded; other replicas fall back to polling). */
  lastPublishError: string | null = null;

  constructor(private readonly client: RedisPubSubLike, private readonly options: QpRedisRuleNotifierOptions = {}) {
    this.channel = checkNotifyChannel(options.channel ?? defaultNotifyChannel, "QpRedisRuleNotifier");
  }

  subscribe(subscriber: QpRuleChangeSubscriber): QpRuleSubscription {
    return sharedListener(this.client, this.channel, () => new RedisChannelConnector(this.client, this.channel), this.options).subscribe(subscriber);
  }

  async publishAsync(change: QpRuleChange): Promise<void> {
    try {
      await this.client.publish(this.channel, changePayload(change));
      this.lastPublishError = null;
    } catch (error) {
      this.lastPublishError = (error as Error).message;
    }
  }
}

class RedisChannelConnector implements ChannelConnector {
  constructor(private readonly client: RedisPubSubLike, private readonly channel: string) {}

  usable(): boolean {
    return this.client.status !== "end";
  }

  async open(deliver: (payload: string) => void, lost: (error: Error) => void): Promise<OpenedChannel> {
    const subscriber = this.client.duplicate({
      lazyConnect: true,
      retryStrategy: () => null,
      autoResubscribe: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // CLIENT LIST shows it as "<the client's name>:querylib-rules:<channel>".
      connectionName: [this.client.options?.connectionName, `querylib-rules:${this.channel}`].filter(Boolean).join(":"),
    });
    let closing = false;
    let failure: Error | null = null;
    subscriber.on("error", (error) => (failure = error));
    subscriber.on("end", () => {
      if (!closing) lost(failure ?? new Error("the Redis subscription connection was closed"));
    });
    subscriber.on("message", (channel, message) => {
      if (channel === this.channel) deliver(message);
    });
    try {
      await subscriber.connect();
      subscriber.stream?.unref?.();
      await subscriber.subscribe(this.channel);
    } catch (error) {
      closing = true;
      subscriber.disconnect();
      throw error;
    }
    return {
      close: async () => {
        closing = true;
        subscriber.disconnect();
      },
      ping: async () => {
        await subscriber.ping();
      },
    };
  }
}
