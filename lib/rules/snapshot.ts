// The versioned rule snapshot an engine decides with: reloaded when older than RefreshInterval;
// when the store fails, StoreFailureMode decides what happens (README: "Rules and store failures").
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { StoreFailureMode } from "../shapes/policy-enums.js";
import type { QpPolicyOptions } from "../policy/options.js";
import { CompiledRules } from "./compiled-rules.js";
import type { IQpRuleStore } from "./store.js";

export interface QpPolicyHealth {
  readonly snapshotVersion: number;
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
  private loading: Promise<void> | null = null;
  private readonly staticRules: CompiledRules;

  constructor(private readonly store: IQpRuleStore, private readonly options: QpPolicyOptions, private readonly now: () => number = Date.now) {
    this.staticRules = new CompiledRules(0, [], options.entities);
  }

  /** The snapshot to decide with now; refreshes when stale; applies the failure mode. */
  async snapshotAsync(): Promise<CompiledRules> {
    const now = this.now();
    if (!this.current || now - this.lastAttempt >= this.options.refreshInterval) await this.refreshAsync();
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

  /** Loads now (after a write on this instance, or when stale). Concurrent callers share one load. */
  refreshAsync(): Promise<void> {
    this.loading ??= this.load().finally(() => (this.loading = null));
    return this.loading;
  }

  private async load(): Promise<void> {
    this.lastAttempt = this.now();
    try {
      const data = await this.store.loadAsync();
      if (!this.current || this.current.version !== data.version) this.current = new CompiledRules(data.version, data.rules, this.options.entities);
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
      snapshotAgeMs: this.current ? this.now() - this.loadedAt : 0,
      degraded: this.degraded,
      lastError: this.lastError,
      storeFailure: this.options.storeFailure,
    };
  }
}
