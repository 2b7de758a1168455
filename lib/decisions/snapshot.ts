// The versioned rule snapshot an engine decides with: reloaded when older than RefreshInterval;
// when the store fails, StoreFailureMode decides what happens (docs/RULES.md: "Snapshots and store failures").
// With a notification channel, a change announced by another replica is loaded at once.
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { StoreFailureMode } from "../shapes/policy-enums.js";
import type { QpPolicyOptions } from "./options.js";
import { CompiledRules } from "./compiled-rules.js";
import { type IQpRuleStore, snapshotIdentity } from "../rules/store.js";
import type { IQpRuleNotifier, QpNotificationState, QpRuleChange, QpRuleChangeSubscriber, QpRuleSubscription } from "../rules/notifications.js";

export interface QpPolicyHealth {
  readonly snapshotVersion: number;
  /**
   * The store's epoch of the snapshot in use (null before the first load): a store emptied or
   * re-created starts a new epoch, so (epoch, version) tells it apart from the old one at the same version.
   */
  readonly snapshotEpoch: string | null;
  /** Milliseconds since the snapshot in use was loaded. */
  readonly snapshotAgeMs: number;
  readonly degraded: boolean;
  readonly lastError: string | null;
  readonly storeFailure: StoreFailureMode;
  /** How changes made by other replicas arrive: `listening` (at once), else by polling every RefreshInterval. */
  readonly notifications: QpNotificationState;
}

export class RuleSnapshots implements QpRuleChangeSubscriber {
  private current: CompiledRules | null = null;
  private loadedAt = 0;
  private lastAttempt = 0;
  private lastError: string | null = null;
  private degraded = false;
  /** The load in flight, if any; loads never overlap, so the last one to finish is the newest. */
  private loading: Promise<void> | null = null;
  /** A load waiting for the one in flight to end (asked for after a write). */
  private queued: Promise<void> | null = null;
  /** The queued load was asked for by a write: it loads even if a notification's version is in by then. */
  private queuedMustLoad = false;
  private readonly staticRules: CompiledRules;
  /** The newest change announced on the notification channel. */
  private heard: QpRuleChange | null = null;
  /** The reload an announced change started: decisions wait for it rather than use a snapshot known to be old. */
  private catchingUp: Promise<void> | null = null;
  private subscription: QpRuleSubscription | null;

  constructor(
    private readonly store: IQpRuleStore,
    private readonly options: QpPolicyOptions,
    private readonly now: () => number = Date.now,
    private readonly notifier: IQpRuleNotifier | null = null,
  ) {
    this.staticRules = new CompiledRules({ epoch: "static", version: 0, rules: [] }, options.entities);
    this.subscription = notifier?.subscribe(this) ?? null;
  }

  /** A change announced on the channel: reloads unless the snapshot in use (or the load in flight's result) has it. */
  changed(change: QpRuleChange): void {
    if (this.covers(change)) return;
    if (!this.heard || this.heard.epoch !== change.epoch || this.heard.version < change.version) this.heard = change;
    this.catchUp();
  }

  /** The channel (re)started listening: what changed while it did not listen is unknown, so reload. */
  listening(): void {
    if (this.current || this.loading) this.catchUp(true);
  }

  /** Tells other replicas of the snapshot in use (after a write this engine loaded), on channels that publish after commit. */
  publishCurrent(): void {
    if (!this.current || !this.notifier?.publishAsync) return;
    void this.notifier.publishAsync({ epoch: this.current.epoch, version: this.current.version });
  }

  /** Stops listening; the engine keeps deciding and polls every RefreshInterval. */
  async closeAsync(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.closeAsync();
  }

  private covers(change: QpRuleChange | null): boolean {
    return change === null || (this.current !== null && this.current.epoch === change.epoch && this.current.version >= change.version);
  }

  private catchUp(mustLoad = false): void {
    const reload = this.reload(mustLoad);
    this.catchingUp = reload;
    void reload.finally(() => {
      if (this.catchingUp === reload) this.catchingUp = null;
    });
  }

  /** The snapshot to decide with now; refreshes when stale; applies the failure mode. */
  async snapshotAsync(): Promise<CompiledRules> {
    const now = this.now();
    // A stale snapshot may be refreshed by any load in flight: it began after the snapshot was taken.
    if (!this.current || now - this.lastAttempt >= this.options.refreshInterval) await (this.loading ?? this.startLoad());
    else if (this.catchingUp) await this.catchingUp;
    if (!this.degraded) return this.current!;
    switch (this.options.storeFailure) {
      case StoreFailureMode.StaticOnly:
        return this.staticRules;
      case StoreFailureMode.FailClosed:
        return policyError(PolicyErrorCode.StoreUnavailable, `the rule store is unavailable (${this.lastError})`);
      case StoreFailureMode.LastKnownGood:
        if (this.current && this.now() - this.loadedAt <= this.options.maxSnapshotAge) return this.current;
        return policyError(PolicyErrorCode.StoreUnavailable, `the rule store is unavailable (${this.lastError}) and the last good snapshot is older than MaxSnapshotAge`);
    }
  }

  /**
   * Loads with a read that begins after this call, so it sees every write completed before it
   * (call it after a write). A load already in flight may have read the store before the write:
   * it is not joined; a new load follows it. Callers arriving meanwhile share that new load.
   */
  refreshAsync(): Promise<void> {
    return this.reload(true);
  }

  /**
   * At most one load in flight and one queued, however many writes and notifications ask. A
   * queued load asked for by notifications only is skipped when the load before it brought the
   * newest announced version.
   */
  private reload(mustLoad: boolean): Promise<void> {
    if (!this.loading) return this.startLoad();
    if (mustLoad) this.queuedMustLoad = true;
    // Whatever load is in flight once the current one ends began after this call.
    this.queued ??= this.loading.then(() => {
      this.queued = null;
      const must = this.queuedMustLoad;
      this.queuedMustLoad = false;
      if (this.loading) return this.loading;
      if (!must && this.covers(this.heard)) return undefined;
      return this.startLoad();
    });
    return this.queued;
  }

  private startLoad(): Promise<void> {
    const loading = this.load().finally(() => {
      if (this.loading === loading) this.loading = null;
    });
    this.loading = loading;
    return loading;
  }

  private async load(): Promise<void> {
    this.lastAttempt = this.now();
    try {
      const data = await this.store.loadAsync();
      // Identity is (store epoch, version): a re-created store at the same version is recompiled.
      if (!this.current || this.current.identity !== snapshotIdentity(data)) this.current = new CompiledRules(data, this.options.entities);
      this.loadedAt = this.now();
      this.degraded = false;
      this.lastError = null;
    } catch (error) {
      this.degraded = true;
      this.lastError = (error as Error).message;
    }
  }

  /** A lost notification channel degrades health (polling covers it) but never triggers StoreFailureMode. */
  health(): QpPolicyHealth {
    const notifications = this.subscription?.state ?? "polling-only";
    return {
      snapshotVersion: this.current?.version ?? 0,
      snapshotEpoch: this.current?.epoch ?? null,
      snapshotAgeMs: this.current ? this.now() - this.loadedAt : 0,
      degraded: this.degraded || notifications === "reconnecting",
      lastError: this.lastError ?? this.subscription?.lastError ?? null,
      storeFailure: this.options.storeFailure,
      notifications,
    };
  }
}
