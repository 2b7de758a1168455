// The feature app's own domain: shared clinics and tenant-scoped patients. The patient has a
// forced tenant predicate, a masked e-mail, a denied national number behind an alias, an aliased
// record number, an enum, a date, a boolean and a number column, and a navigation to its clinic, whose
// licence key is denied (so a denied member is also reachable through a path).
import "reflect-metadata";
import { Column, Entity, JoinColumn, ManyToOne, OneToMany, PrimaryColumn } from "typeorm";
import { MaskStrategy, Operator, PolicyFeature, QpAlias, QpAudit, QpDenied, QpEntity, QpForceWhere, QpMask } from "../../../lib/index.js";

export enum PatientStatus { Active = "Active", Discharged = "Discharged", Transferred = "Transferred" }

@Entity("feat_clinic")
export class Clinic {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 80 }) name!: string;
  @Column({ type: "varchar", length: 60 }) city!: string;
  @QpDenied() @Column({ type: "varchar", length: 40 }) licenseKey!: string;
  @OneToMany(() => Patient, (p) => p.clinic) patients!: Patient[];
}

@QpEntity({ requirePolicy: true })
@Entity("feat_patient")
export class Patient {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenantId" })
  @Column({ type: "varchar", length: 20 }) tenantId!: string;
  @Column({ type: "varchar", length: 80 }) name!: string;
  @QpMask({ strategy: MaskStrategy.Email })
  @Column({ type: "varchar", length: 120, nullable: true }) email!: string | null;
  // Callers know it only as nationalId; "ssn" stays an unknown name to them.
  @QpDenied() @QpAlias("nationalId") @Column({ type: "varchar", length: 20 }) ssn!: string;
  @QpAlias("mrn") @Column({ type: "varchar", length: 20 }) recordNumber!: string;
  @Column({ type: "simple-enum", enum: PatientStatus }) status!: PatientStatus;
  @Column({ type: "date" }) admittedOn!: string;
  @Column({ type: "boolean" }) insured!: boolean;
  @QpAudit(PolicyFeature.Where | PolicyFeature.Select)
  @Column({ type: "int" }) score!: number;
  @Column({ type: "int" }) clinicId!: number;
  @ManyToOne(() => Clinic, (c) => c.patients) @JoinColumn({ name: "clinicId" }) clinic!: Clinic;
}

export const featureEntities = [Clinic, Patient];

export const featureTenants = ["t-1", "t-2", "t-3"] as const;

// Names with the characters a query string must escape (& = + % # ? / [ ] ; space, emoji).
const clinicNames = ["North Care", "South & Sons", "East 50% Clinic", "West+Side"];
const firstNames = ["Ann Lee", "Bo & Co", "Cy 50%", "Dana+Eve", "Ed [x]", "Fay=Gray", "Gus 🚀", "Hal?Ask", "Ivy#Hash", "Jo/Slash", "Kit;Semi", "Lou Ray"];

/** The four shared clinics. */
export function clinicRows(): Clinic[] {
  return clinicNames.map((name, i) => Object.assign(new Clinic(), { id: i + 1, name, city: ["Lima", "Oslo"][i % 2]!, licenseKey: `LIC-${i + 1}` }));
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

/** 36 patients: ids 1..36, tenant t-1/t-2/t-3 by id modulo 3; the other columns vary independently of the tenant. */
export function patientRows(): Patient[] {
  return Array.from({ length: 36 }, (_, i) => {
    const id = i + 1;
    return Object.assign(new Patient(), {
      id,
      tenantId: featureTenants[id % 3]!,
      name: `${firstNames[id % 12]!} ${pad(id, 2)}`,
      email: id % 5 === 0 ? null : `patient${id}@care.example`,
      ssn: `SSN-${1000 + id}`,
      recordNumber: `MRN-${pad(id, 4)}`,
      status: [PatientStatus.Active, PatientStatus.Discharged, PatientStatus.Transferred][Math.floor(id / 3) % 3]!,
      admittedOn: `2024-${pad(1 + (id % 12), 2)}-${pad(1 + ((id * 5) % 28), 2)}`,
      insured: id % 4 !== 1,
      score: (id * 37) % 100,
      clinicId: 1 + (id % 4),
    });
  });
}

/** The patients a caller of `tenant` may see, with their clinic (the tests' oracle). */
export function patientsOf(tenant: string): (Patient & { clinic: Clinic })[] {
  const clinics = clinicRows();
  return patientRows().filter((p) => p.tenantId === tenant).map((p) => Object.assign(p, { clinic: clinics[p.clinicId - 1]! }));
}
