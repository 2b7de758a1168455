// A domain whose fields carry every transformation decorator, for the transform tests.
import "reflect-metadata";
import { Column, Entity, PrimaryColumn } from "typeorm";
import {
  DatePart, GeneralizeMode, MaskStrategy, QpDefault, QpFormat, QpGeneralize, QpMask, QpMutate, QpNoOrder, QpOperators, QpTruncate, Operator,
  type IValueTransformer,
} from "../../lib/index.js";

export class Shout implements IValueTransformer {
  transform(value: unknown): unknown {
    return typeof value === "string" ? value.toUpperCase() : value;
  }
}

@Entity("tr_member")
export class Member {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 10 }) tenant!: string;
  @QpMask({ strategy: MaskStrategy.Email }) @QpNoOrder() @QpOperators({ allow: [Operator.Equal, Operator.In] })
  @Column({ type: "varchar", length: 120, nullable: true }) email!: string | null;
  @QpMask({ strategy: MaskStrategy.Phone }) @Column({ type: "varchar", length: 40, nullable: true }) phone!: string | null;
  @QpMask({ strategy: MaskStrategy.Tokenize, tokenScope: "national-id" }) @Column({ type: "varchar", length: 20 }) nationalId!: string;
  @QpMask({ strategy: MaskStrategy.Hash }) @Column({ type: "varchar", length: 40 }) customerRef!: string;
  @QpGeneralize({ mode: GeneralizeMode.DatePart, part: DatePart.Year }) @Column({ type: "date", nullable: true }) birthDate!: string | null;
  @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 1000, allowAggregate: true, minGroupSize: 3 }) @Column({ type: "int" }) balance!: number;
  @QpTruncate(10) @Column({ type: "varchar", length: 200 }) bio!: string;
  @QpMutate(Shout) @QpMask({ strategy: MaskStrategy.Partial, keepStart: 2, keepEnd: 1 }) @Column({ type: "varchar", length: 40 }) nickname!: string;
  @QpDefault("hidden") @QpMask({ strategy: MaskStrategy.Full }) @Column({ type: "varchar", length: 40 }) secret!: string;
  @QpFormat("{0:F2} EUR") @Column({ type: "int" }) fee!: number;
  @QpMask({ strategy: MaskStrategy.Regex, pattern: "\\d{4}", replacement: "####" }) @Column({ type: "varchar", length: 40 }) card!: string;
  @QpMask({ strategy: MaskStrategy.Partial, keepStart: 1, keepEnd: 1, allowAggregate: true }) @Column({ type: "varchar", length: 20 }) city!: string;
}

export function memberData(): Member[] {
  const cities = ["Zürich", "Paris", "Oslo"];
  return Array.from({ length: 24 }, (_, i) => Object.assign(new Member(), {
    id: i + 1, tenant: i % 2 ? "a" : "b", email: i % 6 === 0 ? null : `user${i}@example.com`, phone: `+44 20 7946 ${String(1000 + i)}`,
    nationalId: `NI-${i % 5}`, customerRef: `REF-${i}`, birthDate: i % 4 === 0 ? null : `19${70 + i}-0${(i % 9) + 1}-15`,
    balance: 500 * i, bio: `A rather long biography number ${i}`, nickname: `nick${i}`, secret: `s${i}`, fee: i * 3, card: `4111 1111 1111 ${String(1000 + i)}`,
    city: cities[i % 3]!,
  }));
}
