// The domain of the runtime-rule tests: employees in a cycle (Employee.manager → Employee,
// Employee.reports → Employee[]) and departments (Department.employees → Employee[],
// Employee.department → Department), with one field per precedence case:
//   plain fields that rules decide (title, email, city, team, grade, salary, active, birthDate),
//   sealed attributes (ssn: QpDenied; secret: QpNoWhere + an overridable QpNoOrder; badge: a
//   sealed QpMask), overridable ones (bonus: QpNoSelect; phone: QpMask; hobby: QpDeny(Where|Order)),
//   an aliased field (nick, public name "nickname") and an audited one (audited: QpAudit).
// Tables live in their own database ("querylib_rules") with the rule store's tables.
import "reflect-metadata";
import { Column, Entity, JoinColumn, ManyToOne, OneToMany, PrimaryColumn } from "typeorm";
import {
  MaskStrategy, PolicyFeature, QpAlias, QpAllowedValues, QpAudit, QpCost, QpDeny, QpDenied, QpDescribe, QpEntityCatalogue, QpMask, QpNoOrder,
  QpNoSelect, QpNoWhere,
} from "../../lib/index.js";

@Entity("rul_department")
export class Department {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 60 }) name!: string;
  @Column({ type: "int" }) budget!: number;
  @OneToMany(() => Employee, (e) => e.department) employees!: Employee[];
}

@Entity("rul_employee")
export class Employee {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpDescribe({ label: "Full name", description: "Given and family name", group: "Identity", order: 1 })
  @Column({ type: "varchar", length: 80 }) name!: string;
  /** The user > role > tenant > global ladder. */
  @Column({ type: "varchar", length: 40 }) title!: string;
  /** Mask rules (a text field). */
  @Column({ type: "varchar", length: 120 }) email!: string;
  /** Wildcard vs exact, priority, effect ties. */
  @Column({ type: "varchar", length: 40 }) city!: string;
  /** Multi-role conflicts. */
  @Column({ type: "varchar", length: 40 }) team!: string;
  @QpAllowedValues(["junior", "senior", "lead"]) @Column({ type: "varchar", length: 20 }) grade!: string;
  /** A number: Deny and Null-mask rules only. */
  @QpCost(7) @Column({ type: "int" }) salary!: number;
  @Column({ type: "boolean" }) active!: boolean;
  @Column({ type: "date" }) birthDate!: string;
  /** Sealed for every feature. */
  @QpDenied() @Column({ type: "varchar", length: 20 }) ssn!: string;
  /** Sealed for Where only; Order denied by an overridable attribute. */
  @QpNoWhere() @QpNoOrder({ overridable: true }) @Column({ type: "varchar", length: 40 }) secret!: string;
  /** A sealed transformation: sealed for Select. */
  @QpMask({ strategy: MaskStrategy.Fixed, text: "SEALED" }) @Column({ type: "varchar", length: 40 }) badge!: string;
  /** An overridable denial of Select. */
  @QpNoSelect({ overridable: true }) @Column({ type: "int" }) bonus!: number;
  /** An overridable transformation. */
  @QpMask({ strategy: MaskStrategy.Fixed, text: "###", overridable: true }) @Column({ type: "varchar", length: 30 }) phone!: string;
  /** An overridable denial of Where and Order. */
  @QpDeny(PolicyFeature.Where | PolicyFeature.Order, { overridable: true }) @Column({ type: "varchar", length: 40 }) hobby!: string;
  @QpAlias("nickname") @Column({ type: "varchar", length: 40 }) nick!: string;
  @QpAudit(PolicyFeature.Where | PolicyFeature.Select | PolicyFeature.Order) @Column({ type: "varchar", length: 40 }) audited!: string;
  @Column({ type: "int", nullable: true }) managerId!: number | null;
  @ManyToOne(() => Employee, (e) => e.reports, { nullable: true }) @JoinColumn({ name: "managerId" }) manager!: Employee | null;
  @OneToMany(() => Employee, (e) => e.manager) reports!: Employee[];
  @Column({ type: "int" }) departmentId!: number;
  @ManyToOne(() => Department, (d) => d.employees) @JoinColumn({ name: "departmentId" }) department!: Department;
}

export const ruleDomainEntities = [Department, Employee];

/** Public names: entities are found only by these. */
export const STAFF = "staff";
export const DEPARTMENTS = "departments";

export function catalogue(): QpEntityCatalogue {
  return new QpEntityCatalogue().expose(Employee, STAFF).expose(Department, DEPARTMENTS);
}

export const cities = ["Oslo", "Lima", "Pune"] as const;
export const titles = ["engineer", "analyst", "manager", "clerk"] as const;
export const grades = ["junior", "senior", "lead"] as const;

/** 30 employees: 1 has no manager; 2-5 report to 1; 6-13 to 2-5; 14-30 to 6-13. */
export function managerOf(id: number): number | null {
  if (id === 1) return null;
  if (id <= 5) return 1;
  if (id <= 13) return 2 + ((id - 6) % 4);
  return 6 + ((id - 14) % 8);
}

export interface RuleDomainData {
  departments: Department[];
  employees: Employee[];
}

export function ruleData(): RuleDomainData {
  const departments = [1, 2, 3].map((id) => Object.assign(new Department(), { id, name: `Dept ${id}`, budget: id * 1000, employees: [] as Employee[] }));
  const employees: Employee[] = [];
  for (let id = 1; id <= 30; id++) {
    const department = departments[id % 3]!;
    employees.push(Object.assign(new Employee(), {
      id,
      name: `Emp ${String(id).padStart(2, "0")}`,
      title: titles[id % 4]!,
      email: `e${id}@corp.test`,
      city: cities[id % 3]!,
      team: id % 2 === 0 ? "red" : "blue",
      grade: grades[id % 3]!,
      salary: 1000 * id,
      active: id % 2 === 0,
      birthDate: `19${70 + (id % 30)}-0${1 + (id % 9)}-1${id % 9}`,
      ssn: `SSN-${id}`,
      secret: `secret ${id}`,
      badge: `B-${id}`,
      bonus: id * 10,
      phone: `555-01${String(id).padStart(2, "0")}`,
      hobby: ["chess", "golf", "judo"][id % 3]!,
      nick: `n${id}`,
      audited: `a${id}`,
      managerId: managerOf(id),
      manager: null as Employee | null,
      reports: [] as Employee[],
      departmentId: department.id,
      department,
    }));
  }
  for (const e of employees) {
    e.manager = e.managerId === null ? null : employees[e.managerId - 1]!;
    e.manager?.reports.push(e);
    e.department.employees.push(e);
  }
  return { departments, employees };
}

/** The plain oracle rows (no engine involved): relations wired, for navigation oracles. */
export const oracleData = ruleData();
export const byIdAsc = (ids: number[]) => [...ids].sort((a, b) => a - b);
