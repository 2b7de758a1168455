// Rules in relational tables through TypeORM (SQLite, PostgreSQL, MariaDB): `querylib_rule`
// holds the rules with who changed them and when; `querylib_rule_version` one row whose
// version every change increments in the same transaction, and whose epoch is drawn when the
// row is created (so a re-created store is a new store life, whatever its version). On
// PostgreSQL each write also NOTIFYs the new (epoch, version) on `notifyChannel` in its own
// transaction, so a listener never hears of a version it cannot read yet.
import { randomUUID } from "node:crypto";
import { Column, Entity, PrimaryColumn, type DataSource, type EntityManager } from "typeorm";
import { dialectOf } from "../dialect/dialect-of.js";
import type { MaskOptions } from "../registry/qp-registry.js";
import { PolicyEffect, type PolicyFeature, type QpSubjectKind } from "../shapes/policy-enums.js";
import type { QpPrivateOptions } from "../privacy/private-options.js";
import { type QpRule, type QpRuleInput, normalizeRule } from "./rule.js";
import type { IQpRuleStore, QpRuleSnapshotData } from "./store.js";
import { type AsyncLock, connectionLock } from "./async-lock.js";
import { type BackOffOptions, type IQpRuleNotifier, changePayload, checkNotifyChannel, defaultNotifyChannel } from "./notifications.js";
import { QpPostgresRuleNotifier } from "./pg-listener.js";

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
  /** Drawn when the row is created: a re-created store starts a new epoch. */
  @Column({ type: "varchar", length: 64 }) epoch!: string;
}

const toRule = (r: QpRuleRecord): QpRule => ({
  id: r.id, subjectKind: r.subjectKind as QpSubjectKind, subject: r.subject, entity: r.entity, field: r.field, features: r.features as PolicyFeature,
  // The mask column holds the effect's settings: a Mask rule's mask, a Private rule's private settings (#45, no new column).
  effect: r.effect as PolicyEffect,
  mask: r.mask && r.effect !== PolicyEffect.Private ? (JSON.parse(r.mask) as MaskOptions) : null,
  private: r.mask && r.effect === PolicyEffect.Private ? (JSON.parse(r.mask) as QpPrivateOptions) : null,
  priority: r.priority, description: r.description,
  changedBy: r.changedBy, changedAt: r.changedAt,
});

/** The version row is gone (the tables were emptied or re-created after this store created it). */
class VersionRowMissing extends Error {}
/** A delete that found nothing: its transaction rolls back so the version does not move. */
class NothingChanged extends Error {}

export interface QpTypeOrmRuleStoreOptions {
  /**
   * PostgreSQL only: the LISTEN/NOTIFY channel of rule changes (default "querylib_rules"; a
   * lower-case identifier); null turns notifications off (engines then poll only).
   */
  notifyChannel?: string | null;
  /** Reconnection delays of the listening connection. */
  notifyBackOff?: BackOffOptions;
}

export class QpTypeOrmRuleStore implements IQpRuleStore {
  static readonly entities = [QpRuleRecord, QpRuleVersionRecord];
  private versionRow: Promise<void> | null = null;
  private readonly lock: AsyncLock | null;
  /** The channel writes notify on: PostgreSQL with notifications on, else null. */
  readonly notifyChannel: string | null;
  /** What engines on this store listen to (null: they poll only). */
  readonly changeNotifier: IQpRuleNotifier | null;

  constructor(private readonly dataSource: DataSource, options: QpTypeOrmRuleStoreOptions = {}) {
    this.lock = connectionLock(dataSource);
    const channel = options.notifyChannel === null ? null : checkNotifyChannel(options.notifyChannel ?? defaultNotifyChannel, "QpTypeOrmRuleStore");
    this.notifyChannel = dialectOf(dataSource).changeChannel ? channel : null;
    this.changeNotifier = this.notifyChannel ? new QpPostgresRuleNotifier(dataSource, this.notifyChannel, options.notifyBackOff) : null;
  }

  async loadAsync(): Promise<QpRuleSnapshotData> {
    return this.withVersionRow((manager) => this.read(manager));
  }

  private async read(manager: EntityManager): Promise<QpRuleSnapshotData> {
    const row = await manager.getRepository(QpRuleVersionRecord).findOneBy({ id: 1 });
    if (!row) throw new VersionRowMissing();
    const rules = await manager.getRepository(QpRuleRecord).find({ order: { id: "ASC" } });
    return { epoch: row.epoch, version: row.version, rules: rules.map(toRule) };
  }

  async upsertAsync(input: QpRuleInput, changedBy: string | null): Promise<QpRule> {
    const rule = normalizeRule(input, input.id ?? randomUUID(), changedBy);
    await this.write(async (manager) => {
      await manager.getRepository(QpRuleRecord).save({ ...rule, mask: rule.mask ? JSON.stringify(rule.mask) : rule.private ? JSON.stringify(rule.private) : null });
    });
    return rule;
  }

  async deleteAsync(id: string): Promise<boolean> {
    try {
      await this.write(async (manager) => {
        const result = await manager.getRepository(QpRuleRecord).delete({ id });
        if (!result.affected) throw new NothingChanged();
      });
      return true;
    } catch (error) {
      if (error instanceof NothingChanged) return false;
      throw error;
    }
  }

  /**
   * One change and its version bump in one transaction. The bump comes first: its row lock
   * queues concurrent writers (any process) instead of letting them deadlock, and it only ever
   * updates the row, which exists before any write (see ensureVersionRow). The notification is
   * part of the transaction: PostgreSQL delivers it on commit, and never on a rollback.
   */
  private write(change: (manager: EntityManager) => Promise<void>): Promise<void> {
    return this.withVersionRow(async (manager) => {
      const versions = manager.getRepository(QpRuleVersionRecord);
      const bumped = await versions.increment({ id: 1 }, "version", 1);
      if (!bumped.affected) throw new VersionRowMissing();
      await change(manager);
      if (this.notifyChannel) {
        const row = await versions.findOneByOrFail({ id: 1 });
        const notify = dialectOf(this.dataSource).changeChannel!.notify(this.notifyChannel, changePayload(row));
        await manager.query(notify.sql, [...notify.parameters]);
      }
    });
  }

  /**
   * Runs work in a transaction once the version row exists; if it vanished since, creates it again
   * and retries once. Always on the primary (a master runner, also when the DataSource reads from
   * replicas): a snapshot read from a lagging replica would keep a revoked rule in force.
   */
  private async withVersionRow<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      await this.ensureVersionRow();
      try {
        return await this.exclusive(() => this.onPrimary((manager) => manager.transaction(work)));
      } catch (error) {
        if (!(error instanceof VersionRowMissing) || attempt > 0) throw error;
        this.versionRow = null;
      }
    }
  }

  /**
   * Creates the version row (version 0, a new epoch) once per store, in a statement of its own
   * that leaves an existing row alone: concurrent first writes, from this process or another,
   * then all find the row and only increment it. Retried on the next call after a failure.
   */
  private ensureVersionRow(): Promise<void> {
    this.versionRow ??= this.exclusive(async () => {
      await this.dataSource.createQueryBuilder().insert().into(QpRuleVersionRecord).values({ id: 1, version: 0, epoch: randomUUID() }).orIgnore().execute();
    }).catch((error: unknown) => {
      this.versionRow = null;
      throw error;
    });
    return this.versionRow;
  }

  private async onPrimary<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner("master");
    try {
      return await work(runner.manager);
    } finally {
      await runner.release();
    }
  }

  /** On SQLite (one connection) the store's statements run one at a time; pooled drivers need no lock. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.lock ? this.lock.run(work) : work();
  }
}
