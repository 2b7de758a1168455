// The sample app as separate OS processes (`node dist/sample-app/main.js`, as `npm start` runs
// it), for the scaling-out tests: start one with its environment, wait until it listens, stop it.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { DataSource } from "typeorm";
import { isolatedDatabaseUrl, openIsolatedDatabase, skipIfUnavailable } from "../support/databases.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));

export interface Replica {
  readonly index: number;
  readonly port: number;
  readonly url: string;
  child: ChildProcess;
  output: string;
  /** Polled only while up: from its "listening" line until just before it is stopped. */
  up: boolean;
  /** Requests in flight to it, awaited before it is stopped. */
  readonly inFlight: Set<Promise<unknown>>;
}

/** Starts replica `index` on 127.0.0.1:`port` in dev mode over the database at `url`; `env` adds or overrides variables. */
export function startReplica(index: number, port: number, url: string, dialect: "postgres" | "mariadb" = "postgres", env: NodeJS.ProcessEnv = {}): Replica {
  // Replicas share their Hash and vault keys, as a deployment must (dev mode would draw each its own: sample-app/secrets.ts).
  const keys = { QUERYLIB_HASH_SALT: "replica-test-hash-salt-0123456789", QUERYLIB_VAULT_KEY: "replica-test-vault-key-0123456789" };
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...keys, QUERYLIB_DB: dialect, QUERYLIB_DB_URL: url, PORT: String(port), QUERYLIB_DEV: "1", ...env };
  delete childEnv.NODE_ENV;
  const child = spawn(process.execPath, ["dist/sample-app/main.js"], { cwd: root, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  const replica: Replica = { index, port, url: `http://127.0.0.1:${port}`, child, output: "", up: false, inFlight: new Set() };
  child.stdout!.on("data", (chunk) => (replica.output += String(chunk)));
  child.stderr!.on("data", (chunk) => (replica.output += String(chunk)));
  return replica;
}

export async function listening(replica: Replica, deadlineMs = 40_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!replica.output.includes(`QueryLib sample app on ${replica.url} `)) {
    if (replica.child.exitCode !== null) throw new Error(`replica ${replica.index} exited with ${replica.child.exitCode}:\n${replica.output}`);
    if (Date.now() > deadline) throw new Error(`replica ${replica.index} did not start:\n${replica.output}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  replica.up = true;
}

export async function stop(replica: Replica): Promise<void> {
  replica.up = false;
  await Promise.allSettled([...replica.inFlight]);
  if (replica.child.exitCode !== null) return;
  const exited = new Promise((resolve) => replica.child.once("exit", resolve));
  replica.child.kill("SIGTERM");
  await exited;
}

/**
 * For a `before` hook: an empty database of its own for the replicas (created when missing, every
 * table dropped: the explicit reset, since the app never drops), its URL, and a connection to check
 * what the replicas wrote. Pending when the server is unreachable and CI is not "true".
 */
export async function emptyReplicaDatabase(context: Mocha.Context, dialect: "postgres" | "mariadb", database: string): Promise<{ url: string; check: DataSource }> {
  try {
    await (await openIsolatedDatabase(dialect, database, [])).destroy();
  } catch (error) {
    skipIfUnavailable(context, error);
  }
  const url = isolatedDatabaseUrl(dialect, database);
  return { url, check: await new DataSource({ type: dialect, url, logging: false }).initialize() };
}
