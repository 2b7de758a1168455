// Shared helpers of the runtime-rule tests: the rules database of each dialect (domain tables
// and the rule store's tables in the isolated database "querylib_rules"), extra DataSources on
// the same database (a second engine instance, a store brought back after a failure), engines
// with a controllable clock, prepared contexts, guarded runs and error assertions.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DataSource, type DataSourceOptions } from "typeorm";
import {
  LogicException, PolicyErrorCode, PolicyException, QpInMemoryRuleStore, QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTypeOrmRuleStore,
  applyPolicy, type GuardedQuery, type IQpRuleNotifier, type IQpRuleStore, type PolicyTrace, type QpPolicyOptionsInput,
} from "../../lib/index.js";
import { type Dialect, openIsolatedDatabase } from "../support/databases.js";
import { describeOnTargets, dialects, targets } from "../support/targets.js";
import { Department, Employee, catalogue, ruleData, ruleDomainEntities } from "./domain.js";

export type RulesTarget = Dialect | "memory";
export const rulesTargets: RulesTarget[] = targets;
export const rulesDialects: Dialect[] = dialects;
export const storeEntities = [...ruleDomainEntities, ...QpTypeOrmRuleStore.entities];

type Row = Record<string, unknown>;

export interface Guarded {
  pageNumber: number;
  pageSize: number;
  pageCount: number;
  totalCount: number;
  data: Row[];
  queryString: string | null;
  policy: PolicyTrace;
}

// ---- databases ------------------------------------------------------------------------------

const opened = new Map<Dialect, Promise<DataSource>>();
const owned = new Set<DataSource>();
const tempDirs: string[] = [];

const columnsOnly = (row: object, relations: readonly string[]) => Object.fromEntries(Object.entries(row).filter(([key]) => !relations.includes(key)));

export async function seedDomain(dataSource: DataSource): Promise<void> {
  const data = ruleData();
  await dataSource.getRepository(Department).insert(data.departments.map((d) => columnsOnly(d, ["employees"])) as never[]);
  // Managers first: ids ascend and every manager id is smaller than its reports' ids.
  await dataSource.getRepository(Employee).insert(data.employees.map((e) => columnsOnly(e, ["manager", "reports", "department"])) as never[]);
}

async function openAndSeed(dialect: Dialect): Promise<DataSource> {
  const dataSource = await openIsolatedDatabase(dialect, "querylib_rules", storeEntities);
  await seedDomain(dataSource);
  return dataSource;
}

/** The rules database of a dialect (domain seeded, rule tables empty), opened once per process. */
export function rulesDatabase(dialect: Dialect): Promise<DataSource> {
  let pending = opened.get(dialect);
  if (!pending) opened.set(dialect, (pending = openAndSeed(dialect)));
  return pending;
}

/** A SQLite file database (its own file) with the domain and the rule tables. */
export async function sqliteFileDatabase(): Promise<{ file: string; dataSource: DataSource }> {
  const dir = mkdtempSync(join(tmpdir(), "querylib-rules-"));
  tempDirs.push(dir);
  const file = join(dir, "rules.sqlite");
  const dataSource = await track(new DataSource({ type: "better-sqlite3", database: file, entities: storeEntities, synchronize: true, logging: false })).initialize();
  await seedDomain(dataSource);
  return { file, dataSource };
}

/** Another DataSource on the same database as `dataSource` (no schema changes). */
export async function sameDatabase(dataSource: DataSource, overrides: Partial<DataSourceOptions> = {}): Promise<DataSource> {
  const options = { ...dataSource.options, synchronize: false, dropSchema: false, ...overrides } as DataSourceOptions;
  return track(new DataSource(options)).initialize();
}

function track(dataSource: DataSource): DataSource {
  owned.add(dataSource);
  return dataSource;
}

/** Closes the DataSources these helpers opened beyond the harness's (call from an `after` hook). */
export async function closeOwned(): Promise<void> {
  const closing = [...owned].filter((d) => d.isInitialized).map((d) => d.destroy().catch(() => undefined));
  owned.clear();
  await Promise.all(closing);
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Empties the rule tables (rules and version row) so each test starts from an empty store. */
export async function clearRuleTables(dataSource: DataSource): Promise<void> {
  for (const entity of QpTypeOrmRuleStore.entities) await dataSource.getRepository(entity).clear();
}

/** The table name of a rule-store entity, quoted for the dialect. */
export function quotedTable(dataSource: DataSource, entity: Function): string {
  return dataSource.driver.escape(dataSource.getMetadata(entity).tableName);
}

// ---- targets ----------------------------------------------------------------------------------

export interface RulesTargetContext {
  target: RulesTarget;
  dataSource(): DataSource;
  /** The guarded handle on Employee (or Department) for this target. */
  guard(context: QpPolicyContext, entity?: typeof Employee | typeof Department): GuardedQuery<Row>;
}

/** One `describe` per target: the in-memory arrays of ruleData() and each dialect's rules database. */
export function forEachRulesTarget(title: string, body: (ctx: RulesTargetContext) => void, targets: readonly RulesTarget[] = rulesTargets): void {
  describeOnTargets(title, targets, rulesDatabase, (target, dataSource) => {
    const ctx: RulesTargetContext = {
      target,
      dataSource,
      guard(context, entity = Employee) {
        if (target === "memory") {
          const data = ruleData();
          return applyPolicy((entity === Employee ? data.employees : data.departments) as unknown as Row[], context);
        }
        return applyPolicy(dataSource().getRepository(entity) as never, context);
      },
    };
    body(ctx);
  });
}

export async function runDynamic(ctx: RulesTargetContext, context: QpPolicyContext, filter: Row = {}, entity: typeof Employee | typeof Department = Employee): Promise<Guarded> {
  return (await ctx.guard(context, entity).toListAsyncDynamic(filter as never)) as unknown as Guarded;
}

// ---- engines and contexts ---------------------------------------------------------------------

/** A clock the tests move by hand. */
export class TestClock {
  constructor(public now = 1_000_000) {}
  readonly read = () => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
}

export function engine(options: QpPolicyOptionsInput = {}, providers: { ruleStore?: IQpRuleStore; clock?: () => number; ruleNotifier?: IQpRuleNotifier } = {}): QpPolicyEngine {
  return new QpPolicyEngine({ entities: catalogue(), ...options }, {
    ruleStore: providers.ruleStore ?? new QpInMemoryRuleStore(),
    ...(providers.clock ? { clock: providers.clock } : {}),
    ...(providers.ruleNotifier ? { ruleNotifier: providers.ruleNotifier } : {}),
  });
}

export type SubjectSpec = [QpSubjectKind, string];

export function prepare(on: QpPolicyEngine, ...subjects: SubjectSpec[]): Promise<QpPolicyContext> {
  let context = new QpPolicyContext();
  for (const [kind, value] of subjects) context = context.withSubject(kind, value);
  return on.prepareAsync(context);
}

export const role = (name: string): SubjectSpec => [QpSubjectKind.Role, name];
export const user = (name: string): SubjectSpec => [QpSubjectKind.User, name];
export const tenant = (name: string): SubjectSpec => [QpSubjectKind.Tenant, name];
export const custom = (name: string): SubjectSpec => [QpSubjectKind.Custom, name];

// ---- shapes and assertions --------------------------------------------------------------------

export function cond(field: string, operator: string, values: unknown[] = [], sort = 1, dataType?: string): Row {
  const type = dataType ?? (values.length > 0 && values.every((v) => typeof v === "number") ? "Number" : undefined);
  return { sort, field, operator, values, ...(type ? { dataType: type } : {}) };
}

export const where = (...conditions: Row[]): Row => ({ conditionGroup: { connector: "And", conditions } });

export async function expectPolicyError(action: () => Promise<unknown>, code: PolicyErrorCode, messagePart?: string | RegExp): Promise<PolicyException> {
  let caught: unknown;
  try {
    const result = await action();
    assert.fail(`expected PolicyException ${PolicyErrorCode[code]} (${code}), got a result: ${JSON.stringify(result).slice(0, 500)}`);
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    caught = error;
  }
  assert.ok(caught instanceof PolicyException, `expected PolicyException ${PolicyErrorCode[code]}, got ${String(caught)}`);
  assert.equal(caught.errorCode, code, `expected ${PolicyErrorCode[code]} (${code}), got ${caught.errorCode} (${caught.message})`);
  assert.equal(caught.code, PolicyErrorCode[code]);
  if (typeof messagePart === "string") assert.ok(caught.message.includes(messagePart), `message "${caught.message}" should mention "${messagePart}"`);
  else if (messagePart) assert.match(caught.message, messagePart);
  return caught;
}

export async function expectLogicError(action: () => Promise<unknown>, code: string, messagePart?: string | RegExp): Promise<LogicException> {
  let caught: unknown;
  try {
    const result = await action();
    assert.fail(`expected LogicException ${code}, got a result: ${JSON.stringify(result).slice(0, 500)}`);
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    caught = error;
  }
  assert.ok(caught instanceof LogicException, `expected LogicException ${code}, got ${String(caught)} ${(caught as Error)?.stack ?? ""}`);
  assert.equal(caught.code, code, caught.message);
  if (typeof messagePart === "string") assert.ok(caught.message.includes(messagePart), `message "${caught.message}" should mention "${messagePart}"`);
  else if (messagePart) assert.match(caught.message, messagePart);
  return caught;
}

export const ids = (result: Guarded) => result.data.map((row) => Number(row.id));
export const sortedKeys = (row: object) => Object.keys(row).sort();
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
