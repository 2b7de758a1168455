// Runs one body of tests against every target: the in-memory arrays and each database dialect.
// The same cases must give the same answers everywhere, so the body is written once.
import type { DataSource } from "typeorm";
import type { DomainData } from "../domain/seed.js";
import { seededData, seededDatabase, skipIfUnavailable } from "./databases.js";
import { type Dialect, type Target, targets } from "./target-list.js";

export { type Target, dialects, serverDialects, targets } from "./target-list.js";

export interface TargetContext {
  target: Target;
  /** The seeded DataSource of a database target; throws for "memory" and before the suite's `before` hook ran. */
  dataSource(): DataSource;
  /** The generated domain; the same objects the databases were seeded with. */
  data(): DomainData;
}

/** Seeding a domain into MariaDB takes a few seconds; mocha's default is 2 s. */
const SEED_TIMEOUT_MS = 120_000;

/** Declares one mocha `describe(`${title} [${target}]`)` per target; `body` declares its tests with `ctx`. */
export function forEachTarget(title: string, body: (ctx: TargetContext) => void): void {
  describeOnTargets(title, targets, seededDatabase, (target, dataSource) => body({ target, dataSource, data: seededData }));
}

/**
 * One mocha `describe(`${title} [${target}]`)` per target. A database target opens its DataSource
 * with `open` in a `before` hook (pending when the server is unreachable and CI is not "true");
 * `dataSource()` hands it to the tests, and throws for "memory" or before the hook ran.
 */
export function describeOnTargets<T extends Target>(title: string, list: readonly T[], open: (dialect: Dialect) => Promise<DataSource>, body: (target: T, dataSource: () => DataSource) => void): void {
  for (const target of list) {
    describe(`${title} [${target}]`, function () {
      let attached: DataSource | undefined;
      if (target !== "memory") {
        before(async function () {
          this.timeout(SEED_TIMEOUT_MS);
          try {
            attached = await open(target as Dialect);
          } catch (error) {
            skipIfUnavailable(this, error);
          }
        });
      }
      body(target, () => {
        if (target === "memory") throw new Error("the memory target has no DataSource");
        if (!attached) throw new Error(`no ${target} DataSource yet: call dataSource() inside a test or hook`);
        return attached;
      });
    });
  }
}
