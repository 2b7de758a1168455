// Runs one body of tests against every target: the in-memory arrays and each database dialect.
// The same cases must give the same answers everywhere, so the body is written once.
import type { DataSource } from "typeorm";
import type { DomainData } from "../domain/seed.js";
import { seededData, seededDatabase, skipIfUnavailable, type Dialect } from "./databases.js";

export type Target = Dialect | "memory";
export const targets: Target[] = ["memory", "sqlite", "postgres", "mariadb"];

export interface TargetContext {
  target: Target;
  /** The seeded DataSource of a database target; throws for "memory" and before the suite's `before` hook ran. */
  dataSource(): DataSource;
  /** The generated domain; the same objects the databases were seeded with. */
  data(): DomainData;
}

/** Seeding the default domain into MariaDB takes a few seconds; mocha's default is 2 s. */
const SEED_TIMEOUT_MS = 120_000;

/** Declares one mocha `describe(`${title} [${target}]`)` per target; `body` declares its tests with `ctx`. */
export function forEachTarget(title: string, body: (ctx: TargetContext) => void): void {
  for (const target of targets) {
    describe(`${title} [${target}]`, function () {
      const { ctx, attach } = createContext(target);
      if (target !== "memory") {
        before(async function () {
          this.timeout(SEED_TIMEOUT_MS);
          try {
            attach(await seededDatabase(target));
          } catch (error) {
            skipIfUnavailable(this, error);
          }
        });
      }
      body(ctx);
    });
  }
}

/** The context handed to tests, plus the setter only the `before` hook may use. */
function createContext(target: Target): { ctx: TargetContext; attach(dataSource: DataSource): void } {
  let attached: DataSource | undefined;
  const ctx: TargetContext = {
    target,
    dataSource() {
      if (target === "memory") throw new Error("the memory target has no DataSource; use data()");
      if (!attached) throw new Error(`no ${target} DataSource yet: call dataSource() inside a test or hook`);
      return attached;
    },
    data: seededData,
  };
  return { ctx, attach: (dataSource) => (attached = dataSource) };
}
