// Extra decorated entities for the policy tests, beside test/policy/domain.ts:
// - AliasClash: an alias that reads as another member's name (AmbiguousFieldName, 13);
// - CaseTwin: two members whose names differ only by case (a path segment matching both is 13);
// - Clinic: an embedded address with a denied member (whole-embedded selects), a field denied
//   for Segment only, and a field with a sealed and an overridable denial (precedence);
// - Ward and Bed: an UNSCOPED pair reached by navigation both ways (Bed → ward, Ward → beds),
//   each with a denied member and an aliased, operator-restricted member, and a QpRequireWhere
//   on Bed.wardId. Navigation into Patient (QpForceWhere) is denied as a whole, so the tests of
//   "denied under every name through a navigation", operators, whole-relation expansion,
//   collections under a reference and navigation depth run on these.
import "reflect-metadata";
import { Column, Entity, JoinColumn, ManyToOne, OneToMany, PrimaryColumn } from "typeorm";
import { Operator, PolicyFeature, QpAlias, QpDeny, QpDenied, QpNoSelect, QpOperators, QpRequireWhere } from "../../lib/index.js";

@Entity("pol_alias_clash")
export class AliasClash {
  @PrimaryColumn({ type: "int" }) id!: number;
  /** Public name "code", which is also the name of the member below. */
  @QpAlias("code") @Column({ type: "varchar", length: 20 }) secret!: string;
  @Column({ type: "varchar", length: 20 }) code!: string;
}

@Entity("pol_case_twin")
export class CaseTwin {
  @PrimaryColumn({ type: "int" }) id!: number;
  // Column names differ: SQLite and MariaDB column names are case-insensitive.
  @Column({ name: "code_lower", type: "varchar", length: 20 }) code!: string;
  @Column({ name: "code_upper", type: "varchar", length: 20 }) Code!: string;
}

export class ClinicAddress {
  @Column({ type: "varchar", length: 40 }) city!: string;
  @Column({ type: "varchar", length: 40 }) street!: string;
  @QpDenied() @Column({ type: "varchar", length: 10 }) doorCode!: string;
}

@Entity("pol_clinic")
export class Clinic {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 40 }) name!: string;
  @Column(() => ClinicAddress) address!: ClinicAddress;
  /** Filterable, but not inside a Segment set. */
  @QpDeny(PolicyFeature.Segment) @Column({ type: "int" }) rating!: number;
  /** The overridable denial is registered first; the sealed one (level 1) must still win. */
  @QpDeny(PolicyFeature.Select | PolicyFeature.Order) @QpNoSelect({ overridable: true }) @Column({ type: "varchar", length: 40 }) note!: string;
}

@Entity("pol_ward")
export class Ward {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 40 }) name!: string;
  @QpDenied() @Column({ type: "varchar", length: 20 }) accessCode!: string;
  /** Public name "phone"; the internal name never shows under a guard. */
  @QpAlias("phone") @QpOperators({ allow: [Operator.Equal, Operator.In] })
  @Column({ type: "varchar", length: 40, nullable: true }) phoneNumber!: string | null;
  @OneToMany(() => Bed, (b) => b.ward) beds!: Bed[];
}

@Entity("pol_bed")
export class Bed {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpRequireWhere() @Column({ type: "int" }) wardId!: number;
  @ManyToOne(() => Ward, (w) => w.beds) @JoinColumn({ name: "wardId" }) ward!: Ward;
  @Column({ type: "varchar", length: 40 }) label!: string;
  @QpDenied() @Column({ type: "varchar", length: 20 }) lockCode!: string;
  /** Public name "tag". */
  @QpAlias("tag") @QpOperators({ allow: [Operator.Equal, Operator.In] })
  @Column({ type: "varchar", length: 20 }) serialNo!: string;
}

export const moreEntities = [AliasClash, CaseTwin, Clinic, Ward, Bed];

/**
 * Wards 1–3 and beds 1–8: odd beds in ward 2, even beds in ward 1, ward 3 has none; ward 2 has
 * no phone. Rows are linked both ways (bed.ward, ward.beds) for the in-memory target.
 */
export function wardData() {
  const wards = [1, 2, 3].map((id) => Object.assign(new Ward(), { id, name: `Ward ${id}`, accessCode: `ACCESS-${id}`, phoneNumber: id === 2 ? null : `+1-555-010${id}`, beds: [] as Bed[] }));
  const beds = [1, 2, 3, 4, 5, 6, 7, 8].map((id) => {
    const ward = wards[id % 2 === 0 ? 0 : 1]!;
    const bed = Object.assign(new Bed(), { id, wardId: ward.id, ward, label: `Bed ${id}`, lockCode: `LOCK-${id}`, serialNo: `SN-${id}` });
    ward.beds.push(bed);
    return bed;
  });
  return { wards, beds };
}

export function moreData() {
  const aliasClashes = [1, 2, 3].map((id) => Object.assign(new AliasClash(), { id, secret: `secret-${id}`, code: `code-${id}` }));
  const caseTwins = [1, 2, 3].map((id) => Object.assign(new CaseTwin(), { id, code: `lower-${id}`, Code: `UPPER-${id}` }));
  const clinics = [1, 2, 3].map((id) =>
    Object.assign(new Clinic(), { id, name: `Clinic ${id}`, rating: id * 2, note: `note ${id}`, address: Object.assign(new ClinicAddress(), { city: `City ${id}`, street: `Street ${id}`, doorCode: `D${id}` }) }),
  );
  const plain = (rows: object[]) => rows.map((row) => JSON.parse(JSON.stringify(row)) as object);
  const { wards, beds } = wardData();
  return {
    aliasClashes,
    caseTwins,
    clinics,
    wards,
    beds,
    /** In-memory arrays of the extra entities. */
    arrays: new Map<Function, readonly object[]>([
      [AliasClash, aliasClashes],
      [CaseTwin, caseTwins],
      [Clinic, clinics],
      [Ward, wards],
      [Bed, beds],
    ]),
    /** Rows to insert into a database, entity by entity (wards before the beds that reference them). */
    inserts: [
      [AliasClash, plain(aliasClashes)],
      [CaseTwin, plain(caseTwins)],
      [Clinic, plain(clinics)],
      [Ward, wards.map(({ beds: _beds, ...columns }) => columns)],
      [Bed, beds.map(({ ward: _ward, ...columns }) => columns)],
    ] as [Function, object[]][],
  };
}
