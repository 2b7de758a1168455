// The private-aggregates domain (#45): branches with accounts. Account.balance is private for
// every caller (QpPrivate, not selectable); Account.score is private only for callers a Private
// rule names (the role "analyst"), so the same attack can be run with and without the protection.
import "reflect-metadata";
import { Column, type DataSource, Entity, JoinColumn, ManyToOne, OneToMany, PrimaryColumn } from "typeorm";
import { type IQpBudgetLedger, type IQpReleaseStore, MaskStrategy, type QpBudgetCharge, type QpBudgetWindow, QpEntityCatalogue, QpInMemoryBudgetLedger, QpAllowedValues, QpMask, QpNoSelect, QpPrivate } from "../../lib/index.js";
import { openIsolatedDatabase } from "../support/databases.js";
import type { Dialect } from "../support/target-list.js";

@Entity("pa_branch")
export class PaBranch {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 40 }) name!: string;
  /** Private for analysts by a rule (reserveBounds): reached from an account, one per account of the branch. */
  @Column({ type: "int" }) reserve!: number;
  @OneToMany(() => PaAccount, (a) => a.branch) accounts!: PaAccount[];
}

@Entity("pa_account")
export class PaAccount {
  @PrimaryColumn({ type: "int" }) id!: number;
  /** Declared keys (#45): a private Summary grouped by segment releases all three, empty ones too. */
  @QpAllowedValues(["retail", "business", "private"]) @Column({ type: "varchar", length: 20 }) segment!: string;
  @QpNoSelect() @QpPrivate({ lower: 0, upper: 10000, granularity: 1 }) @Column({ type: "int" }) balance!: number;
  @Column({ type: "int" }) score!: number;
  /** Masked: under inference protection and a guess budget, an Equal on it is a charged guess (the no-charge test). */
  @QpMask({ strategy: MaskStrategy.Full }) @Column({ type: "varchar", length: 20 }) holder!: string;
  @Column({ type: "int" }) branchId!: number;
  @ManyToOne(() => PaBranch, (b) => b.accounts) @JoinColumn({ name: "branchId" }) branch!: PaBranch;
}

export const privacyEntities = [PaBranch, PaAccount];
export const privacyCatalogue = () => new QpEntityCatalogue().expose(PaAccount, "accounts").expose(PaBranch, "branches");

/** The score rule's settings: analysts aggregate Account.score between 300 and 850. */
export const scoreBounds = { lower: 300, upper: 850, granularity: 1, epsilon: 0.25 } as const;
/** The reserve rule's settings. */
export const reserveBounds = { lower: 0, upper: 1_000_000, granularity: 100 } as const;

/** 2 branches, 24 accounts in 3 segments; balances and scores spread so that a bisection has work to do. */
export function privacyData(): { branches: PaBranch[]; accounts: PaAccount[] } {
  const branches = [1, 2].map((id) => Object.assign(new PaBranch(), { id, name: `B${id}`, reserve: id * 120_000 + 3_400 }));
  const accounts = Array.from({ length: 24 }, (_, i) => Object.assign(new PaAccount(), {
    id: i + 1, segment: ["retail", "business", "private"][i % 3]!, balance: (i * 389 + 17) % 10000, score: 300 + ((i * 97 + 11) % 551), holder: `H${i + 1}`, branchId: (i % 2) + 1,
  }));
  for (const b of branches) b.accounts = accounts.filter((a) => a.branchId === b.id);
  for (const a of accounts) a.branch = branches.find((b) => b.id === a.branchId)!;
  return { branches, accounts };
}

const opened = new Map<string, Promise<DataSource>>();
/** The domain in a database of its own per dialect ("querylib_private"), opened and seeded once per process. */
export function privacyDatabase(dialect: Dialect): Promise<DataSource> {
  let pending = opened.get(dialect);
  if (!pending) {
    opened.set(dialect, (pending = (async () => {
      const dataSource = await openIsolatedDatabase(dialect, "querylib_private", privacyEntities);
      const data = privacyData();
      await dataSource.getRepository(PaBranch).insert(data.branches.map(({ id, name, reserve }) => ({ id, name, reserve })));
      await dataSource.getRepository(PaAccount).insert(data.accounts.map(({ branch: _b, ...row }) => row) as never[]);
      return dataSource;
    })()));
  }
  return pending;
}

/** A ledger that records every charge (a charge of 0 reads what is left: not recorded) and passes it, and its stored answers, to an in-memory one. */
export class CountingLedger implements IQpBudgetLedger, IQpReleaseStore {
  readonly charges: QpBudgetCharge[] = [];
  private readonly inner = new QpInMemoryBudgetLedger();
  charge(charge: QpBudgetCharge) {
    if (charge.cost > 0) this.charges.push(charge);
    return this.inner.charge(charge);
  }
  getRelease(key: string, window: QpBudgetWindow) {
    return this.inner.getRelease(key, window);
  }
  putRelease(key: string, window: QpBudgetWindow, answer: string) {
    return this.inner.putRelease(key, window, answer);
  }
}
