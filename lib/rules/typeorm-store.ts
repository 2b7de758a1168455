// Rules in relational tables through TypeORM (SQLite, PostgreSQL, MariaDB): `querylib_rule`
// holds the rules with who changed them and when; `querylib_rule_version` one row whose
// version every change increments in the same transaction.
import { randomUUID } from "node:crypto";
import { Column, Entity, PrimaryColumn, type DataSource } from "typeorm";
import type { MaskOptions } from "../../decorators/registry.js";
import type { PolicyEffect, PolicyFeature, QpSubjectKind } from "../shapes/policy-enums.js";
import { type QpRule, type QpRuleInput, normalizeRule } from "./rule.js";
import type { IQpRuleStore, QpRuleSnapshotData } from "./store.js";

@Entity("querylib_rule")
export class QpRuleRecord {
  @PrimaryColumn({ type: "varchar", length: 64 }) id!: string;
  @Column({ type: "varchar", length: 16 }) subjectKind!: string;
  @Column({ type: "varchar", length: 200, nullable: true }) subject!: string | null;
  @Column({ type: "varchar", length: 200 }) entity!: string;
  @Column({ type: "varchar", length: 400 }) field!: string;
  @Column({ type: "int" }) features!: number;
  @Column({ type: "varchar", length: 8 }) effect!: string;
  @Column({ type: "text", nullable: true }) mask!: string | null;
  @Column({ type: "int" }) priority!: number;
  @Column({ type: "varchar", length: 400, nullable: true }) description!: string | null;
  @Column({ type: "varchar", length: 200, nullable: true }) changedBy!: string | null;
  @Column({ type: "varchar", length: 40 }) changedAt!: string;
}

@Entity("querylib_rule_version")
export class QpRuleVersionRecord {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "int" }) version!: number;
}

const toRule = (r: QpRuleRecord): QpRule => ({
  id: r.id, subjectKind: r.subjectKind as QpSubjectKind, subject: r.subject, entity: r.entity, field: r.field, features: r.features as PolicyFeature,
  effect: r.effect as PolicyEffect, mask: r.mask ? (JSON.parse(r.mask) as MaskOptions) : null, priority: r.priority, description: r.description,
  changedBy: r.changedBy, changedAt: r.changedAt,
});

export class QpTypeOrmRuleStore implements IQpRuleStore {
  static readonly entities = [QpRuleRecord, QpRuleVersionRecord];

  constructor(private readonly dataSource: DataSource) {}

  async loadAsync(): Promise<QpRuleSnapshotData> {
    return this.dataSource.transaction(async (manager) => {
      const version = await manager.getRepository(QpRuleVersionRecord).findOneBy({ id: 1 });
      const rules = await manager.getRepository(QpRuleRecord).find({ order: { id: "ASC" } });
      return { version: version?.version ?? 0, rules: rules.map(toRule) };
    });
  }

  private async bump(manager: DataSource["manager"]): Promise<void> {
    const repository = manager.getRepository(QpRuleVersionRecord);
    const updated = await repository.increment({ id: 1 }, "version", 1);
    if (!updated.affected) await repository.insert({ id: 1, version: 1 });
  }

  async upsertAsync(input: QpRuleInput, changedBy: string | null): Promise<QpRule> {
    const rule = normalizeRule(input, input.id ?? randomUUID(), changedBy);
    await this.dataSource.transaction(async (manager) => {
      await manager.getRepository(QpRuleRecord).save({ ...rule, mask: rule.mask ? JSON.stringify(rule.mask) : null });
      await this.bump(manager);
    });
    return rule;
  }

  async deleteAsync(id: string): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const result = await manager.getRepository(QpRuleRecord).delete({ id });
      if (!result.affected) return false;
      await this.bump(manager);
      return true;
    });
  }
}
