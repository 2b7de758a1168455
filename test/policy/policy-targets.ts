// Runs one body of policy tests against every target: the in-memory arrays of policyData() and
// each database dialect, on a database of its own ("querylib_policy"), so dropping the policy
// schema never touches the shared test database. One DataSource per dialect per process.
import type { DataSource, ObjectLiteral } from "typeorm";
import { applyPolicy, type GuardedQuery, type QpPolicyContext } from "../../lib/index.js";
import { openIsolatedDatabase, type Dialect } from "../support/databases.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { Doctor, Patient, Visit, policyData, policyEntities } from "./domain.js";
import { moreData, moreEntities } from "./more-domain.js";

export type PolicyTarget = Dialect | "memory";
export const policyTargets: PolicyTarget[] = targets;

export type PolicyData = ReturnType<typeof policyData> & ReturnType<typeof moreData>;

export interface PolicyTargetContext {
  target: PolicyTarget;
  /** The DataSource of a database target; throws for "memory". */
  dataSource(): DataSource;
  /** The rows every target holds (a fresh copy per call for memory sources). */
  data(): PolicyData;
  /** The guarded handle on Entity for this target: a repository, or the entity's in-memory array. */
  guard<T extends ObjectLiteral>(entity: new () => T, context: QpPolicyContext): GuardedQuery<T>;
}

const opened = new Map<Dialect, Promise<DataSource>>();

/** The same rows as objects, without relation members (they are inserted by foreign key). */
const columnsOnly = <T extends object>(row: T, relations: readonly string[]): Partial<T> =>
  Object.fromEntries(Object.entries(row).filter(([key]) => !relations.includes(key))) as Partial<T>;

async function openAndSeed(dialect: Dialect): Promise<DataSource> {
  const dataSource = await openIsolatedDatabase(dialect, "querylib_policy", [...policyEntities, ...moreEntities]);
  const data = policyData();
  await dataSource.getRepository(Doctor).insert(data.doctors.map((d) => columnsOnly(d, ["patients"])) as never[]);
  await dataSource.getRepository(Patient).insert(data.patients.map((p) => columnsOnly(p, ["doctor", "visits"])) as never[]);
  await dataSource.getRepository(Visit).insert(data.visits.map((v) => columnsOnly(v, ["patient"])) as never[]);
  const more = moreData();
  for (const [entity, rows] of more.inserts) await dataSource.getRepository(entity).insert(rows as never[]);
  return dataSource;
}

/** The policy database of a dialect, opened and seeded once per process (a failure is cached too). */
export function policyDatabase(dialect: Dialect): Promise<DataSource> {
  let pending = opened.get(dialect);
  if (!pending) opened.set(dialect, (pending = openAndSeed(dialect)));
  return pending;
}

export function allPolicyData(): PolicyData {
  return { ...policyData(), ...moreData() };
}

function arrayOf(data: PolicyData, entity: Function): readonly object[] {
  if (entity === Doctor) return data.doctors;
  if (entity === Patient) return data.patients;
  if (entity === Visit) return data.visits;
  const rows = data.arrays.get(entity);
  if (!rows) throw new Error(`no in-memory rows for ${entity.name}`);
  return rows;
}

/** Declares one mocha `describe(`${title} [${target}]`)` per target. */
export function forEachPolicyTarget(title: string, body: (ctx: PolicyTargetContext) => void): void {
  describeOnTargets(title, policyTargets, policyDatabase, (target, dataSource) => body({
    target,
    dataSource,
    data: allPolicyData,
    guard<T extends ObjectLiteral>(entity: new () => T, context: QpPolicyContext): GuardedQuery<T> {
      if (target === "memory") return applyPolicy(arrayOf(allPolicyData(), entity) as T[], context);
      return applyPolicy(dataSource().getRepository(entity), context);
    },
  }));
}
