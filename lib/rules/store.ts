// Rule stores behind one interface. A store keeps a version that every change increments, so
// engines sharing it see a change as a new snapshot version, and an epoch that names this
// store's life: a store created anew (another instance, tables re-created, a restored backup)
// starts a new epoch, so its version N is never mistaken for another store's version N.
import { randomUUID } from "node:crypto";
import { type QpRule, type QpRuleInput, normalizeRule } from "./rule.js";
import type { IQpRuleNotifier } from "./notifications.js";

export interface QpRuleSnapshotData {
  /** Names the store's life; the snapshot identity is (epoch, version). */
  readonly epoch: string;
  readonly version: number;
  readonly rules: readonly QpRule[];
}

export interface IQpRuleStore {
  loadAsync(): Promise<QpRuleSnapshotData>;
  upsertAsync(input: QpRuleInput, changedBy: string | null): Promise<QpRule>;
  deleteAsync(id: string): Promise<boolean>;
  /** The store's own change notifications (the relational store on PostgreSQL), if any. */
  readonly changeNotifier?: IQpRuleNotifier | null;
}

/** The identity of a loaded snapshot: equal only for the same store life at the same version. */
export const snapshotIdentity = (data: Pick<QpRuleSnapshotData, "epoch" | "version">): string => `${data.epoch}#${data.version}`;

export class QpInMemoryRuleStore implements IQpRuleStore {
  private readonly rules = new Map<string, QpRule>();
  private readonly epoch = randomUUID();
  private version = 0;

  async loadAsync(): Promise<QpRuleSnapshotData> {
    return { epoch: this.epoch, version: this.version, rules: [...this.rules.values()] };
  }

  async upsertAsync(input: QpRuleInput, changedBy: string | null): Promise<QpRule> {
    const rule = normalizeRule(input, input.id ?? randomUUID(), changedBy);
    this.rules.set(rule.id, rule);
    this.version++;
    return rule;
  }

  async deleteAsync(id: string): Promise<boolean> {
    const existed = this.rules.delete(id);
    if (existed) this.version++;
    return existed;
  }
}
