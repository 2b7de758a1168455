// The test targets in one list: every test and bench file that runs on each target, or on each
// database, imports these instead of spelling the list. A new database is a row of `needsServer`
// (the type checker then asks databases.ts for its connection options).

export type Dialect = "sqlite" | "postgres" | "mariadb";
export type Target = Dialect | "memory";

/** Each database, in the order the suites run them, and whether it needs a server (SQLite runs in the process). */
const needsServer = { sqlite: false, postgres: true, mariadb: true } as const satisfies Readonly<Record<Dialect, boolean>>;

/** A database that runs as a server of its own. */
export type ServerDialect = { [D in Dialect]: (typeof needsServer)[D] extends true ? D : never }[Dialect];

/** Every database target. */
export const dialects: Dialect[] = Object.keys(needsServer) as Dialect[];
/** The databases that run as a server of their own (not in the test process). */
export const serverDialects: ServerDialect[] = dialects.filter((dialect): dialect is ServerDialect => needsServer[dialect]);
/** Every target: the in-memory arrays, then each database. */
export const targets: Target[] = ["memory", ...dialects];
