// More decorated entities for the guarded transform tests, beside test/transform/domain.ts:
// - TrBranch: masked and tokenized members reached through a navigation (Holder → branch);
//   `registrationId` shares the "national-id" token scope with Member.nationalId, `code` keeps
//   the default (per-member) scope.
// - TrHolder: every stage of the chain on one member (`score`, and `score2` with the decorators
//   written in another order), QpDefault over a full chain (`label`), QpDefault() (`note`), a
//   mutate-only member (`motto`), a group floor raised by a decorator (`level`, minGroupSize 7),
//   an aggregatable mask for group keys (`region`: North 8, South 6, East 4, West 2 rows), an
//   aliased mask (`name` → `displayName`), the Null strategy on a number (`pin`), tokenized
//   members in a shared and in a private scope, dates (`joined`, `since`) and a decimal (`rate`).
// - TrCard: a Regex mask inside a collection (Holder → cards).
// - TrBadNumberMask: rule 2 broken on purpose (QpMask Full on an int): never exposed by default.
// - TrMaskedNavigation / TrMaskedEmbedded: a text mask on a whole navigation / embedded member
//   (an object, which text cannot be assigned to).
import "reflect-metadata";
import { Column, Entity, JoinColumn, ManyToOne, OneToMany, PrimaryColumn } from "typeorm";
import {
  DatePart, GeneralizeMode, MaskStrategy, QpAlias, QpDefault, QpFormat, QpGeneralize, QpMask, QpMutate, QpTruncate,
  type IValueTransformer,
} from "../../lib/index.js";

/** Adds one to a number: the first stage of the chain, so its effect is visible downstream. */
export class AddOne implements IValueTransformer {
  transform(value: unknown): unknown {
    return typeof value === "number" ? value + 1 : typeof value === "string" && value.trim() !== "" ? Number(value) + 1 : value;
  }
}

/** Counts its calls: QpDefault must short-circuit it. */
export class CountingMutator implements IValueTransformer {
  static calls = 0;
  transform(value: unknown): unknown {
    CountingMutator.calls++;
    return `mutated ${String(value)}`;
  }
}

/** Reverses text (by code points; the test data is ASCII). */
export class Reverse implements IValueTransformer {
  transform(value: unknown): unknown {
    return typeof value === "string" ? [...value].reverse().join("") : value;
  }
}

@Entity("tr_branch")
export class TrBranch {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 40 }) name!: string;
  @QpMask({ strategy: MaskStrategy.Email }) @Column({ type: "varchar", length: 80 }) manager!: string;
  @QpMask({ strategy: MaskStrategy.Tokenize, tokenScope: "national-id" }) @Column({ type: "varchar", length: 20 }) registrationId!: string;
  @QpMask({ strategy: MaskStrategy.Tokenize }) @Column({ type: "varchar", length: 20 }) code!: string;
  /** An aliased, aggregatable mask: summary keys through a navigation (`branch.town`). */
  @QpAlias("town") @QpMask({ strategy: MaskStrategy.Partial, keepStart: 1, keepEnd: 1, allowAggregate: true }) @Column({ type: "varchar", length: 40 }) city!: string;
  @OneToMany(() => TrHolder, (h) => h.branch) holders!: TrHolder[];
}

@Entity("tr_holder")
export class TrHolder {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 10 }) tenant!: string;
  @QpAlias("displayName") @QpMask({ strategy: MaskStrategy.Partial, keepStart: 2, keepEnd: 0 }) @Column({ type: "varchar", length: 40 }) name!: string;
  @QpMask({ strategy: MaskStrategy.Tokenize, tokenScope: "national-id" }) @Column({ type: "varchar", length: 20 }) nationalId!: string;
  @QpMask({ strategy: MaskStrategy.Tokenize, tokenScope: "other-scope" }) @Column({ type: "varchar", length: 20 }) otherId!: string;
  /** mutate (+1) → generalize (round to 10) → format "[{0}] pts" → mask (keep 2 + 2) → truncate (4, "~"). */
  @QpMutate(AddOne) @QpGeneralize({ mode: GeneralizeMode.Round, step: 10 }) @QpFormat("[{0}] pts")
  @QpMask({ strategy: MaskStrategy.Partial, keepStart: 2, keepEnd: 2 }) @QpTruncate(4, { ellipsis: "~" })
  @Column({ type: "int" }) score!: number;
  /** The same chain, decorators written in the reverse order: the chain order is fixed. */
  @QpTruncate(4, { ellipsis: "~" }) @QpMask({ strategy: MaskStrategy.Partial, keepStart: 2, keepEnd: 2 }) @QpFormat("[{0}] pts")
  @QpGeneralize({ mode: GeneralizeMode.Round, step: 10 }) @QpMutate(AddOne)
  @Column({ type: "int" }) score2!: number;
  /** QpDefault short-circuits every other stage (the mutator is never called). */
  @QpDefault("n/a") @QpMutate(CountingMutator) @QpFormat("x{0}") @QpMask({ strategy: MaskStrategy.Full }) @QpTruncate(2)
  @Column({ type: "varchar", length: 40 }) label!: string;
  @QpDefault() @Column({ type: "varchar", length: 40, nullable: true }) note!: string | null;
  @QpMutate(Reverse) @Column({ type: "varchar", length: 40 }) motto!: string;
  @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 10, allowAggregate: true, minGroupSize: 7 }) @Column({ type: "int" }) level!: number;
  @QpMask({ strategy: MaskStrategy.Partial, keepStart: 1, keepEnd: 1, allowAggregate: true }) @Column({ type: "varchar", length: 20 }) region!: string;
  @QpMask({ strategy: MaskStrategy.Null }) @Column({ type: "int" }) pin!: number;
  @QpGeneralize({ mode: GeneralizeMode.Truncate, part: DatePart.Month }) @Column({ type: "date" }) joined!: string;
  @QpFormat("{0:yyyy-MM-dd HH:mm}") @Column({ type: Date }) since!: Date;
  @QpGeneralize({ mode: GeneralizeMode.Round, decimals: 1 }) @Column({ type: "decimal", precision: 8, scale: 2 }) rate!: number | string;
  @Column({ type: "int", nullable: true }) branchId!: number | null;
  @ManyToOne(() => TrBranch, (b) => b.holders) @JoinColumn({ name: "branchId" }) branch!: TrBranch | null;
  @OneToMany(() => TrCard, (c) => c.holder) cards!: TrCard[];
}

@Entity("tr_card")
export class TrCard {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "int" }) holderId!: number;
  @ManyToOne(() => TrHolder, (h) => h.cards) @JoinColumn({ name: "holderId" }) holder!: TrHolder;
  /** The first twelve of sixteen digits become "*": only the last four stay (RE2 has no lookahead, so a capture keeps them). */
  @QpMask({ strategy: MaskStrategy.Regex, pattern: "\\d{12}(\\d{4})", replacement: "************$1" }) @Column({ type: "varchar", length: 24 }) pan!: string;
}

/** Rule 2 broken on purpose: a text mask on an int column (refused at configure time / first use). */
@Entity("tr_bad_number_mask")
export class TrBadNumberMask {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Full }) @Column({ type: "int" }) amount!: number;
}

export class TrAddress {
  @Column({ type: "varchar", length: 40 }) street!: string;
  @Column({ type: "varchar", length: 40 }) city!: string;
}

/** A text mask on a whole navigation member (an object: text cannot be assigned to it). */
@Entity("tr_masked_navigation")
export class TrMaskedNavigation {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "int" }) branchId!: number;
  @QpMask({ strategy: MaskStrategy.Full }) @ManyToOne(() => TrBranch) @JoinColumn({ name: "branchId" }) branch!: TrBranch;
}

/** A text mask on a whole embedded member. */
@Entity("tr_masked_embedded")
export class TrMaskedEmbedded {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Full }) @Column(() => TrAddress) address!: TrAddress;
}

export const moreTransformEntities = [TrBranch, TrHolder, TrCard, TrBadNumberMask, TrMaskedNavigation, TrMaskedEmbedded];

const pad = (n: number) => String(n).padStart(2, "0");
const names = ["Alice", "Bob", "Chloé", "Dmitri", "Eve", "Frank", "Gül", "Hana", "Ivan", "Júlia", "Karl", "Lea", "Mo", "Nadia", "Otto", "Pia", "Quinn", "Rosa", "Sven", "Tomás"];

/** Branch cities (alias "town"): holders per branch 1, 2, 3 = 6, 7, 6; holder 20 has none. */
export const branchCities = ["Bern", "Genève", "Lugano"];

/** Region of holder i (1-based): North 1-8, South 9-14, East 15-18, West 19-20. */
export const regionOf = (i: number) => (i <= 8 ? "North" : i <= 14 ? "South" : i <= 18 ? "East" : "West");

/** Fresh objects each call: branches, holders (20; holder 20 has no branch) and cards, linked both ways. */
export function moreTransformData() {
  const branches = [1, 2, 3].map((id) => Object.assign(new TrBranch(), {
    id, name: `Branch ${id}`, manager: `manager${id}@bank.example`, registrationId: `NI-${id}`, code: `NI-${id}`, city: branchCities[id - 1]!, holders: [] as TrHolder[],
  }));
  const holders: TrHolder[] = [];
  const cards: TrCard[] = [];
  for (let i = 1; i <= 20; i++) {
    const branch = i === 20 ? null : branches[i % 3]!;
    const holder = Object.assign(new TrHolder(), {
      id: i, tenant: i % 2 ? "a" : "b", name: names[i - 1]!, nationalId: `NI-${i % 5}`, otherId: `NI-${i % 5}`,
      score: i * 7, score2: i * 7, label: `label ${i}`, note: i % 3 ? `note ${i}` : null, motto: `motto-${i}`,
      level: i * 3, region: regionOf(i), pin: 1000 + i, joined: `2020-${pad(((i - 1) % 12) + 1)}-${pad(i)}`,
      since: new Date(Date.UTC(2024, (i - 1) % 12, i, 10, 30, 0)), rate: i + (i % 2 ? 0.13 : 0.87),
      branchId: branch ? branch.id : null, branch, cards: [] as TrCard[],
    });
    branch?.holders.push(holder);
    holders.push(holder);
    for (let k = 0; k < i % 3; k++) {
      const card = Object.assign(new TrCard(), { id: i * 10 + k, holderId: i, holder, pan: `4000${String(i * 100 + k).padStart(12, "0")}` });
      holder.cards.push(card);
      cards.push(card);
    }
  }
  const bad = [1, 2].map((id) => Object.assign(new TrBadNumberMask(), { id, amount: id * 10 }));
  const maskedNavigations = branches.map((branch) => Object.assign(new TrMaskedNavigation(), { id: branch.id, branchId: branch.id, branch }));
  const maskedEmbeddeds = [1, 2].map((id) => Object.assign(new TrMaskedEmbedded(), { id, address: Object.assign(new TrAddress(), { street: `${id} Secret Street`, city: `Hidden City ${id}` }) }));
  return { branches, holders, cards, bad, maskedNavigations, maskedEmbeddeds };
}
