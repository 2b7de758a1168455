// The versioned rule snapshot an engine decides with: reloaded when older than RefreshInterval;
// when the store fails, StoreFailureMode decides what happens (README: "Rules and store failures").
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { StoreFailureMode } from "../shapes/policy-enums.js";
import type { QpPolicyOptions } from "../policy/options.js";
import { CompiledRules } from "./compiled-rules.js";
import { type IQpRuleStore, snapshotIdentity } from "./store.js";

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
}

export class RuleSnapshots {
  private current: CompiledRules | null = null;
  private loadedAt = 0;
  private lastAttempt = 0;
  private lastError: string | null = null;
  private degraded = false;
  /** The load in flight, if any; loads never overlap, so the last one to finish is the newest. */
  private loading: Promise<void> | null = null;
  /** A load waiting for the one in flight to end (asked for after a write). */
  private queued: Promise<void> | null = null;
  private readonly staticRules: CompiledRules;

  constructor(private readonly store: IQpRuleStore, private readonly options: QpPolicyOptions, private readonly now: () => number = Date.now) {
    this.staticRules = new CompiledRules({ epoch: "static", version: 0, rules: [] }, options.entities);
  }

  /** The snapshot to decide with now; refreshes when stale; applies the failure mode. */
  async snapshotAsync(): Promise<CompiledRules> {
    const now = this.now();
    // A stale snapshot may be refreshed by any load in flight: it began after the snapshot was taken.
    if (!this.current || now - this.lastAttempt >= this.options.refreshInterval) await (this.loading ?? this.startLoad());
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
    if (!this.loading) return this.startLoad();
    // Whatever load is in flight once the current one ends began after this call.
    this.queued ??= this.loading.then(() => {
      this.queued = null;
      return this.loading ?? this.startLoad();
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

  health(): QpPolicyHealth {
    return {
      snapshotVersion: this.current?.version ?? 0,
      snapshotEpoch: this.current?.epoch ?? null,
      snapshotAgeMs: this.current ? this.now() - this.loadedAt : 0,
      degraded: this.degraded,
      lastError: this.lastError,
      storeFailure: this.options.storeFailure,
    };
  }
}
