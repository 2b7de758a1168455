// Rule stores behind one interface. A store keeps a version that every change increments, so
// engines sharing it see a change as a new snapshot version.
import { randomUUID } from "node:crypto";
import { type QpRule, type QpRuleInput, normalizeRule } from "./rule.js";

export interface QpRuleSnapshotData {
  readonly version: number;
  readonly rules: readonly QpRule[];
}

export interface IQpRuleStore {
  loadAsync(): Promise<QpRuleSnapshotData>;
  upsertAsync(input: QpRuleInput, changedBy: string | null): Promise<QpRule>;
  deleteAsync(id: string): Promise<boolean>;
}

export class QpInMemoryRuleStore implements IQpRuleStore {
  private readonly rules = new Map<string, QpRule>();
  private version = 0;

  async loadAsync(): Promise<QpRuleSnapshotData> {
    return { version: this.version, rules: [...this.rules.values()] };
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
