// A decorated domain for the policy tests: tenant-scoped patients with an aliased, operator-
// restricted email, denied and partly denied fields, costs, a required filter on visits, and
// a doctor reached by navigation. Tables live in their own database (see openIsolatedDatabase).
import "reflect-metadata";
import { Column, Entity, JoinColumn, ManyToOne, OneToMany, PrimaryColumn } from "typeorm";
import {
  Operator, PolicyFeature, QpAlias, QpCost, QpDeny, QpDenied, QpDescribe, QpEntity, QpForceWhere, QpNoOrder, QpNoSelect, QpNoWhere,
  QpOperators, QpRequireWhere, QpNoGroup, QpNoAggregate,
} from "../../lib/index.js";

@Entity("pol_doctor")
export class Doctor {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 80 }) name!: string;
  @QpDenied() @Column({ type: "varchar", length: 20 }) secretCode!: string;
  @OneToMany(() => Patient, (p) => p.doctor) patients!: Patient[];
}

@QpEntity({ requirePolicy: true })
@Entity("pol_patient")
export class Patient {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenantId" })
  @Column({ type: "varchar", length: 20 }) tenantId!: string;
  @QpDescribe({ label: "Name", group: "Identity", order: 1 })
  @Column({ type: "varchar", length: 80 }) name!: string;
  @QpAlias("mail") @QpOperators({ allow: [Operator.Equal, Operator.In] })
  @Column({ type: "varchar", length: 120, nullable: true }) email!: string | null;
  @QpDenied() @Column({ type: "varchar", length: 20 }) ssn!: string;
  @QpNoOrder() @Column({ type: "varchar", length: 40 }) diagnosis!: string;
  @QpNoSelect() @Column({ type: "varchar", length: 80 }) internalNote!: string;
  @QpNoWhere() @Column({ type: "int" }) age!: number;
  @QpDeny(PolicyFeature.Group | PolicyFeature.Aggregate) @Column({ type: "int" }) salary!: number;
  @QpNoGroup() @QpNoAggregate({ overridable: true }) @Column({ type: "varchar", length: 40 }) ward!: string;
  @QpCost(400) @Column({ type: "varchar", length: 400, nullable: true }) notes!: string | null;
  @Column({ type: "int" }) doctorId!: number;
  @QpDenied() @ManyToOne(() => Doctor, (d) => d.patients) @JoinColumn({ name: "doctorId" }) doctor!: Doctor;
  @OneToMany(() => Visit, (v) => v.patient) visits!: Visit[];
}

@Entity("pol_visit")
export class Visit {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpRequireWhere() @Column({ type: "int" }) patientId!: number;
  @ManyToOne(() => Patient, (p) => p.visits) @JoinColumn({ name: "patientId" }) patient!: Patient;
  @Column({ type: "varchar", length: 40 }) reason!: string;
  @QpDenied() @Column({ type: "varchar", length: 40 }) billingCode!: string;
}

export const policyEntities = [Doctor, Patient, Visit];

export function policyData() {
  const doctors = [1, 2].map((id) => Object.assign(new Doctor(), { id, name: `Dr ${id}`, secretCode: `S${id}`, patients: [] as Patient[] }));
  const patients: Patient[] = [];
  const visits: Visit[] = [];
  for (let id = 1; id <= 40; id++) {
    const doctor = doctors[id % 2]!;
    const p = Object.assign(new Patient(), {
      id, tenantId: id % 4 === 0 ? "t-2" : "t-1", name: `Patient ${String(id).padStart(2, "0")}`,
      email: id % 5 === 0 ? null : `p${id}@example.com`, ssn: `SSN-${id}`, diagnosis: ["flu", "cold", "asthma"][id % 3]!,
      internalNote: `note ${id}`, age: 20 + (id % 50), salary: 1000 * (id % 7), ward: ["A", "B"][id % 2]!, notes: id % 3 ? `long notes ${id}` : null,
      doctorId: doctor.id, doctor, visits: [] as Visit[],
    });
    doctor.patients.push(p);
    patients.push(p);
    for (let v = 0; v < id % 3; v++) {
      const visit = Object.assign(new Visit(), { id: id * 10 + v, patientId: id, patient: p, reason: ["checkup", "followup"][v % 2]!, billingCode: `B${v}` });
      p.visits.push(visit);
      visits.push(visit);
    }
  }
  return { doctors, patients, visits };
}
