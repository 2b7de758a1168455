// Rule change notifications between replicas: a committed write announces its snapshot identity
// (epoch, version) on a channel; every engine listening on it reloads when the announced version
// is newer than its own. Polling every RefreshInterval stays the fallback, so a lost or missing
// channel only slows propagation down. One connection per channel and database (or Redis
// client) serves every engine of a process; it never keeps the process alive by itself.
import { randomInt } from "node:crypto";
import { QpConfigurationError } from "../errors/configuration-error.js";
import type { ListeningConnection } from "../dialect/sql-dialect.js";

/** What a notification carries: the snapshot identity after a committed write, never the rules. */
export interface QpRuleChange {
  readonly epoch: string;
  readonly version: number;
}

/**
 * `listening`: changes arrive as they commit. `connecting`: the first connection is being made.
 * `reconnecting`: the connection was lost or refused; retried with back-off while polling covers
 * the gap (health is degraded). `polling-only`: no notification channel (SQLite, MariaDB, the
 * in-memory store, notifications turned off, or the engine was closed).
 */
export type QpNotificationState = "connecting" | "listening" | "reconnecting" | "polling-only";

/** What an engine hears from a channel. */
export interface QpRuleChangeSubscriber {
  /** A change committed somewhere (this engine's own writes included). */
  changed(change: QpRuleChange): void;
  /** The channel (re)started listening: changes made while it did not listen were not heard. */
  listening(): void;
}

export interface QpRuleSubscription {
  readonly state: QpNotificationState;
  /** Why the channel is not listening, while it reconnects. */
  readonly lastError: string | null;
  /** Stops delivering to this subscriber; the connection closes with its last subscriber. */
  closeAsync(): Promise<void>;
}

/** A notification channel engines listen on (`providers.ruleNotifier`, or the rule store's own `changeNotifier`). */
export interface IQpRuleNotifier {
  subscribe(subscriber: QpRuleChangeSubscriber): QpRuleSubscription;
  /**
   * Announces a change after its write committed (channels that cannot notify inside the write's
   * transaction, like Redis). A store that notifies in the write's own transaction has none.
   */
  publishAsync?(change: QpRuleChange): Promise<void>;
}

/** The default channel of the relational store on PostgreSQL and of QpRedisRuleNotifier. */
export const defaultNotifyChannel = "querylib_rules";

/** A channel name usable unquoted in PostgreSQL (which folds case) and as a Redis channel. */
export function checkNotifyChannel(channel: unknown, where: string): string {
  if (typeof channel !== "string" || !/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) {
    throw new QpConfigurationError(
      `${where}: notifyChannel "${String(channel)}" must be a lower-case identifier (a-z, 0-9, _; at most 63 characters, not starting with a digit)`,
    );
  }
  return channel;
}

export const changePayload = (change: QpRuleChange): string => JSON.stringify({ epoch: change.epoch, version: change.version });

/** A payload as published by changePayload; anything else (another publisher on the channel) is ignored. */
export function parseChangePayload(payload: unknown): QpRuleChange | null {
  if (typeof payload !== "string" || payload.length > 1000) return null;
  try {
    const value = JSON.parse(payload) as { epoch?: unknown; version?: unknown };
    if (typeof value?.epoch !== "string" || !Number.isSafeInteger(value.version) || (value.version as number) < 0) return null;
    return { epoch: value.epoch, version: value.version as number };
  } catch {
    return null;
  }
}

/** An open listening connection (the dialect's own type: close ends it, ping is the heartbeat); the listener is told of its loss through `lost`. */
export type OpenedChannel = ListeningConnection;

export interface ChannelConnector {
  /** Connects and starts listening; `deliver` for each payload, `lost` once when the connection ends without close(). */
  open(deliver: (payload: string) => void, lost: (error: Error) => void): Promise<OpenedChannel>;
  /** False once what the channel depends on is closed (the DataSource, the Redis client): the listener then closes itself. */
  usable(): boolean;
}

export interface BackOffOptions {
  /** First delay after a lost connection, ms (default 100). */
  startingDelay?: number;
  /** Longest delay between attempts, ms (default 5000). */
  maxDelay?: number;
  /** A heartbeat on the listening connection every this many ms (default 30000); no answer within it counts as a lost connection. */
  heartbeat?: number;
}

/**
 * One listening connection shared by every subscriber in the process. Subscribers are held
 * weakly: an engine dropped without closeAsync stops being called once collected, and the
 * connection closes when none is left. Reconnection waits are hand-written rather than
 * exponential-backoff's: its pending delay cannot be cancelled and would hold a closing
 * process open for up to maxDelay.
 */
export class SharedChannelListener {
  state: Exclude<QpNotificationState, "polling-only"> = "connecting";
  lastError: string | null = null;
  private readonly subscribers = new Set<WeakRef<QpRuleChangeSubscriber>>();
  private closed = false;
  private wake: (() => void) | null = null;
  private opened: OpenedChannel | null = null;
  private readonly watchdog: NodeJS.Timeout;

  constructor(private readonly connector: ChannelConnector, private readonly backOff: Required<BackOffOptions>, private readonly onClosed: () => void) {
    // Notices a closed DataSource or client, and subscribers collected without closing.
    this.watchdog = setInterval(() => this.prune(), 1000).unref();
    void this.run();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  subscribe(subscriber: QpRuleChangeSubscriber): QpRuleSubscription {
    const ref = new WeakRef(subscriber);
    this.subscribers.add(ref);
    const listener = this;
    let open = true;
    return {
      get state() {
        return open && !listener.closed ? listener.state : "polling-only";
      },
      get lastError() {
        return open && !listener.closed && listener.state === "reconnecting" ? listener.lastError : null;
      },
      async closeAsync() {
        open = false;
        listener.subscribers.delete(ref);
        if (listener.subscribers.size === 0) await listener.closeAsync();
      },
    };
  }

  async closeAsync(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.watchdog);
    this.onClosed();
    this.wake?.();
    const opened = this.opened;
    this.opened = null;
    await opened?.close().catch(() => undefined);
  }

  private prune(): void {
    for (const ref of this.subscribers) if (!ref.deref()) this.subscribers.delete(ref);
    if (this.subscribers.size === 0 || !this.connector.usable()) void this.closeAsync();
  }

  private each(call: (subscriber: QpRuleChangeSubscriber) => void): void {
    for (const ref of this.subscribers) {
      const subscriber = ref.deref();
      if (subscriber) call(subscriber);
      else this.subscribers.delete(ref);
    }
  }

  private deliver(payload: string): void {
    const change = parseChangePayload(payload);
    if (change) this.each((s) => s.changed(change));
  }

  private async run(): Promise<void> {
    for (let attempt = 0; !this.closed; attempt++) {
      let lostWith: (error: Error) => void = () => undefined;
      const lost = new Promise<Error>((resolve) => (lostWith = resolve));
      try {
        if (!this.connector.usable()) return void (await this.closeAsync());
        const opened = await this.connector.open((payload) => this.deliver(payload), (error) => lostWith(error));
        if (this.closed) return void (await opened.close().catch(() => undefined));
        this.opened = opened;
        attempt = -1;
        this.state = "listening";
        this.lastError = null;
        this.each((s) => s.listening());
        const closing = new Promise<null>((resolve) => (this.wake = () => resolve(null)));
        const heartbeat = this.heartbeat(opened, lostWith);
        const error = await Promise.race([lost, closing]);
        clearInterval(heartbeat);
        if (!error || this.closed) return;
        this.opened = null;
        // Degraded at once; the lost connection is closed without waiting for it: a server gone
        // silent lets end() wait for TCP's timeouts, minutes in which health said "listening".
        this.fail(error);
        void opened.close().catch(() => undefined);
      } catch (error) {
        this.fail(error as Error);
      }
      await this.sleep(Math.min(this.backOff.maxDelay, this.backOff.startingDelay * 2 ** Math.max(0, attempt)));
    }
  }

  /** Pings every `heartbeat` ms; a ping that fails or stays unanswered for a whole period loses the connection. */
  private heartbeat(opened: OpenedChannel, lost: (error: Error) => void): NodeJS.Timeout {
    let pending = false;
    return setInterval(() => {
      if (pending) return lost(new Error(`no answer to a heartbeat within ${this.backOff.heartbeat} ms`));
      pending = true;
      opened.ping().then(() => (pending = false), (error: Error) => lost(error));
    }, this.backOff.heartbeat).unref();
  }

  private fail(error: Error): void {
    this.state = "reconnecting";
    this.lastError = `rule change notifications: ${error.message || String(error)}`;
  }

  /** A delay that neither holds the process open nor outlives closeAsync. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      // Jitter from node:crypto: a test keeps lib/ free of the non-cryptographic generator (privacy noise).
      const timer = setTimeout(done, ms * (0.5 + randomInt(1024) / 2048)).unref();
      this.wake = done;
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }
}

const listeners = new WeakMap<object, Map<string, SharedChannelListener>>();

/** The process's listener for (connection owner, channel), created on first use. */
export function sharedListener(owner: object, channel: string, connector: () => ChannelConnector, backOff: BackOffOptions = {}): SharedChannelListener {
  let byChannel = listeners.get(owner);
  if (!byChannel) listeners.set(owner, (byChannel = new Map()));
  const existing = byChannel.get(channel);
  if (existing && !existing.isClosed) return existing;
  const settings = { startingDelay: backOff.startingDelay ?? 100, maxDelay: backOff.maxDelay ?? 5000, heartbeat: backOff.heartbeat ?? 30_000 };
  const created: SharedChannelListener = new SharedChannelListener(connector(), settings, () => {
    if (byChannel.get(channel) === created) byChannel.delete(channel);
  });
  byChannel.set(channel, created);
  return created;
}
