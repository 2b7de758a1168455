// What the sample app does to its database at start, so that any number of replicas can start
// over one database, at once or one by one, without destroying anything another wrote:
//   1. take the start-up lock (PostgreSQL: an advisory lock; MariaDB/MySQL: GET_LOCK; SQLite: none),
//   2. run QueryLib's migrations (its rule, audit and token tables; a no-op once recorded),
//   3. create the sample's own domain tables when any is missing (TypeORM synchronize, never a drop),
//   4. seed rules and rows when the domain holds no tenant yet, else leave everything as it is,
//   5. release the lock.
// Why a lock: neither TypeORM's migrations nor synchronize nor the seed guard each other across
// processes, so two replicas starting at the same moment would both create tables and insert the
// same keys (duplicate-key errors, missing tables). One lock around the whole check-create-seed
// makes every other starter wait and then find the work done. Both locks belong to a database
// session, so a replica that dies while holding one releases it with its connection.
// SQLite takes none: it is the embedded single-process default (`npm start` on ":memory:", empty
// at every start); replicas sharing a database need PostgreSQL or MariaDB.
import type { DataSource, QueryRunner } from "typeorm";

/** The PostgreSQL advisory-lock key of the sample's start-up ("QLSTART" as a number; advisory locks are per database). */
const postgresLockKey = "81768384658284";
/** How long a starter waits for another replica's start-up on MariaDB/MySQL (GET_LOCK's timeout, seconds). */
const mysqlLockSeconds = 300;

export type StartupOutcome = "seeded" | "found";

export interface SampleStartupSteps {
  /** True when the sample's data is already there (a replica finished seeding before). */
  isSeeded(): Promise<boolean>;
  /** Writes the seed; runs only when isSeeded() said false, with the lock held. */
  seed(): Promise<void>;
}

/** Runs the start-up steps above with the start-up lock held; says whether this process seeded. */
export async function prepareSampleDatabase(dataSource: DataSource, entities: readonly Function[], steps: SampleStartupSteps): Promise<StartupOutcome> {
  return withStartupLock(dataSource, async () => {
    await dataSource.runMigrations({ transaction: "each" });
    if (await anyTableMissing(dataSource, entities)) await dataSource.synchronize(false);
    if (await steps.isSeeded()) return "found";
    await steps.seed();
    return "seeded";
  });
}

async function anyTableMissing(dataSource: DataSource, entities: readonly Function[]): Promise<boolean> {
  const runner = dataSource.createQueryRunner();
  try {
    for (const entity of entities) if (!(await runner.hasTable(dataSource.getMetadata(entity).tablePath))) return true;
    return false;
  } finally {
    await runner.release();
  }
}

/** Runs work while this process holds the sample's start-up lock on the database (see above). */
export async function withStartupLock<T>(dataSource: DataSource, work: () => Promise<T>): Promise<T> {
  const type = dataSource.options.type;
  if (type !== "postgres" && type !== "mysql" && type !== "mariadb") return work();
  // The lock lives in one session: take and release it on one dedicated connection.
  const runner = dataSource.createQueryRunner();
  try {
    await runner.connect();
    if (type === "postgres") await runner.query("SELECT pg_advisory_lock($1)", [postgresLockKey]);
    else await mysqlGetLock(runner, await mysqlLockName(runner));
    try {
      return await work();
    } finally {
      if (type === "postgres") await runner.query("SELECT pg_advisory_unlock($1)", [postgresLockKey]);
      else await runner.query("SELECT RELEASE_LOCK(?)", [await mysqlLockName(runner)]);
    }
  } finally {
    await runner.release();
  }
}

/** GET_LOCK names are server-wide: the name carries the database's, so two databases on one server do not wait for each other. */
async function mysqlLockName(runner: QueryRunner): Promise<string> {
  const [row] = (await runner.query("SELECT DATABASE() AS name")) as { name: string | null }[];
  return `querylib-sample-start:${row?.name ?? ""}`.slice(0, 64);
}

async function mysqlGetLock(runner: QueryRunner, name: string): Promise<void> {
  const [row] = (await runner.query("SELECT GET_LOCK(?, ?) AS granted", [name, mysqlLockSeconds])) as { granted: number | string | null }[];
  if (Number(row?.granted) !== 1) throw new Error(`another replica held the sample's start-up lock for over ${mysqlLockSeconds} s`);
}
