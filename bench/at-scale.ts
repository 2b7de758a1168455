// At scale (issue #44): the test domain's Customer with a million rows (or --rows), seeded in the
// database itself (PostgreSQL generate_series, MariaDB's seq_1_to_N, SQLite a recursive CTE), and
// the pages a search screen asks for, deep and shallow, timed side by side in one process:
//   - QueryLib today (a numbered page with its exact COUNT) against TypeORM's getManyAndCount;
//   - QueryLib cursor pages (count none) at depth 1 and at depth 5,000 against a hand-written
//     seek query (TypeORM builder, `WHERE id > :last`, no total) and nestjs-paginate's cursor mode
//     (whose every page costs the same: it compares a string computed from each row);
//   - a numbered page with count none and estimated against the bare page (LIMIT/OFFSET, no total);
//   - guarded (the tenant's forced predicate) against unguarded, cursor pages at depth 5,000.
//
//   node dist/bench/at-scale.js [--rows=1000000] [--depth=5000] [--dialects=postgres,mariadb,sqlite] [--rounds=11] [--no-write]
//
// Medians of --rounds interleaved rounds (every variant once per round, in rotated order), in ms;
// the ratios are the targets' (issue #44). Writes the "At scale" section of BENCHMARKS.md unless
// --no-write. Each database is its own (querylib_bench_scale; bench/out/scale.sqlite), reseeded
// only when its row count differs.
process.env.TZ ??= "UTC";

import "reflect-metadata";
import { Column, Entity, PrimaryColumn } from "typeorm";
import os from "node:os";
import { execSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { DataSource, type DataSourceOptions } from "typeorm";
import { PaginationType, paginate } from "nestjs-paginate";
import { ContactInfo, Customer, CustomerTier, domainEntities } from "../test/domain/entities.js";
import { type Dialect, dialects as allDialects } from "../test/support/target-list.js";
import { OUT_DIR, REPO_ROOT } from "./db.js";
import { interleaved, stats } from "./measure.js";
import { MaskStrategy, QpEntityCatalogue, QpMask, QpPolicyContext, QpPolicyEngine, QpSubjectKind, applyPolicy, exportRows, toListAsync, toNdjson } from "../lib/index.js";
import { UnmaskedCustomer, openGuardedDataSource } from "./guarded-domain.js";
import { firstLine } from "./querylib-workloads.js";

const argv = process.argv.slice(2);
const arg = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const ROWS = Number(arg("rows") ?? 1_000_000);
const ROUNDS = Number(arg("rounds") ?? 11);
const DIALECTS = (arg("dialects")?.split(",") ?? allDialects) as Dialect[];
const WRITE = !argv.includes("--no-write");
const PAGE_SIZE = 50;
const DEPTH = Number(arg("depth") ?? 5_000);
const log = (line: string) => process.stderr.write(`${line}\n`);
const DATABASE = "querylib_bench_scale";


/** The export's entity: the customer table with two masks (name Partial, externalId Full), no tenant scope: every row is exported. */
@Entity("customer")
class MaskedCustomer {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Partial, keepStart: 2, keepEnd: 1 }) @Column({ type: "varchar", length: 120 }) name!: string;
  @QpMask({ strategy: MaskStrategy.Full }) @Column({ type: "varchar", length: 36 }) externalId!: string;
  @Column({ type: "int", nullable: true }) score!: number | null;
  @Column({ type: Date }) createdAt!: Date;
}

function dataSourceOptions(dialect: Dialect): DataSourceOptions {
  const common = { entities: domainEntities, logging: false, synchronize: false } as const;
  if (dialect === "sqlite") {
    mkdirSync(OUT_DIR, { recursive: true });
    return { type: "better-sqlite3", database: `${OUT_DIR}scale.sqlite`, ...common };
  }
  if (dialect === "postgres") {
    const url = new URL(process.env.QL_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test");
    url.pathname = `/${DATABASE}`;
    return { type: "postgres", url: url.toString(), ...common };
  }
  const url = new URL(process.env.QL_MARIADB_URL ?? "mysql://root@127.0.0.1:3306/test");
  url.pathname = `/${DATABASE}`;
  return { type: "mariadb", url: url.toString(), ...common };
}

async function createDatabase(dialect: Dialect): Promise<void> {
  if (dialect === "sqlite") return;
  const options = dataSourceOptions(dialect) as { url: string };
  const url = new URL(options.url);
  url.pathname = dialect === "postgres" ? "/postgres" : "/";
  const admin = new DataSource({ type: dialect === "postgres" ? "postgres" : "mariadb", url: url.toString() } as DataSourceOptions);
  await admin.initialize();
  try {
    if (dialect === "postgres") {
      const found = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [DATABASE]);
      if (found.length === 0) await admin.query(`CREATE DATABASE ${DATABASE}`);
    } else await admin.query(`CREATE DATABASE IF NOT EXISTS ${DATABASE} CHARACTER SET utf8mb4`);
  } finally {
    await admin.destroy();
  }
}

/** The customer table holds ROWS rows, seeded by the database itself (seconds, not minutes). */
async function seeded(dialect: Dialect): Promise<DataSource> {
  await createDatabase(dialect);
  let dataSource = new DataSource(dataSourceOptions(dialect));
  await dataSource.initialize();
  let count = 0;
  try {
    count = Number((await dataSource.query("SELECT COUNT(*) AS n FROM customer"))[0].n);
  } catch {
    count = -1;
  }
  if (count === ROWS) return dataSource;
  log(`${dialect}: seeding ${ROWS.toLocaleString("en")} customers`);
  await dataSource.destroy();
  dataSource = new DataSource({ ...dataSourceOptions(dialect), synchronize: true, dropSchema: true } as DataSourceOptions);
  await dataSource.initialize();
  const t0 = performance.now();
  // Tier by id: Gold every third row; createdAt spread over ~3 years with ties; score NULL every seventh.
  const columns = `"id", "name", "externalId", "tier", "isActive", "score", "balance", "createdAt", "birthDate", "notes", "addressStreet", "addressCity", "addressCountry", "contactId"`;
  if (dialect === "postgres") {
    await dataSource.query(`INSERT INTO customer (${columns})
      SELECT i, 'Customer ' || i, md5(i::text), ((ARRAY['Bronze','Silver','Gold'])[1 + i % 3])::customer_tier_enum, i % 2 = 0,
        CASE WHEN i % 7 = 0 THEN NULL ELSE i % 1000 END, (i % 100000) / 100.0,
        TIMESTAMP '2023-01-01' + ((i::bigint * 7919) % 100000000) * INTERVAL '1 second', NULL, NULL, NULL, 'City ' || (i % 500), 'PE', NULL
      FROM generate_series(1, ${ROWS}) AS i`);
    await dataSource.query("ANALYZE customer");
  } else if (dialect === "mariadb") {
    await dataSource.query(`INSERT INTO customer (${columns.replaceAll('"', "`")})
      SELECT seq, CONCAT('Customer ', seq), MD5(seq), ELT(1 + seq % 3, 'Bronze', 'Silver', 'Gold'), seq % 2 = 0,
        IF(seq % 7 = 0, NULL, seq % 1000), (seq % 100000) / 100.0,
        TIMESTAMP '2023-01-01 00:00:00' + INTERVAL ((seq * 7919) % 100000000) SECOND, NULL, NULL, NULL, CONCAT('City ', seq % 500), 'PE', NULL
      FROM seq_1_to_${ROWS}`);
    await dataSource.query("ANALYZE TABLE customer");
  } else {
    await dataSource.query(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${ROWS})
      INSERT INTO customer (${columns})
      SELECT i, 'Customer ' || i, hex(i), CASE i % 3 WHEN 0 THEN 'Bronze' WHEN 1 THEN 'Silver' ELSE 'Gold' END, i % 2 = 0,
        CASE WHEN i % 7 = 0 THEN NULL ELSE i % 1000 END, (i % 100000) / 100.0,
        strftime('%Y-%m-%d %H:%M:%f', '2023-01-01', '+' || ((i * 7919) % 100000000) || ' seconds'), NULL, NULL, NULL, 'City ' || (i % 500), 'PE', NULL
      FROM s`);
    await dataSource.query("ANALYZE");
  }
  log(`${dialect}: seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return dataSource;
}

interface Row { name: string; dialect: Dialect; ms: number; note?: string }

async function measure(dialect: Dialect): Promise<Row[]> {
  const dataSource = await seeded(dialect);
  const repo = dataSource.getRepository(Customer);
  const byId = { orders: [{ sort: 1, field: "id", direction: "Ascending" }] };
  const goldByCreated = {
    conditionGroup: { conditions: [{ field: "tier", dataType: "Enum", operator: "Equal", values: ["Gold"] }] },
    orders: [{ sort: 1, field: "createdAt", direction: "Descending" }],
  };
  type Page = { data: Customer[]; nextCursor?: string | null };
  const cursorAt = async (run: (after: string) => Promise<Page>, depth: number): Promise<string> => {
    let after = "";
    for (let page = 1; page < depth; page++) after = (await run(after)).nextCursor!;
    return after;
  };
  log(`${dialect}: walking to page ${DEPTH} by cursor`);
  const idPage = (after: string) => toListAsync(repo, { ...byId, page: { pageSize: PAGE_SIZE, after, count: "none" } } as never) as Promise<Page>;
  const goldPage = (after: string) => toListAsync(repo, { ...goldByCreated, page: { pageSize: PAGE_SIZE, after, count: "none" } } as never) as Promise<Page>;
  const deepId = await cursorAt(idPage, DEPTH);
  const deepGold = await cursorAt(goldPage, DEPTH);
  // The same row a hand-written seek starts after: the last id of page DEPTH - 1.
  const lastId = (DEPTH - 1) * PAGE_SIZE;

  // Guarded: the Gold tenant (the benchmark's tenant stand-in: tier forced from the context, bench/guarded-domain.ts), the same order.
  const guardedSource = await openGuardedDataSource(dataSource, [UnmaskedCustomer, ContactInfo]);
  const engine = new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(UnmaskedCustomer, "customers"), lint: "off" });
  const context = await engine.prepareAsync(new QpPolicyContext([{ kind: QpSubjectKind.Tenant, value: "Gold" }], new Map([["tenant", CustomerTier.Gold]])));
  const tenantRepo = guardedSource.getRepository(UnmaskedCustomer);
  const guardedPage = (after: string) => applyPolicy(tenantRepo, context).toListAsync({ orders: goldByCreated.orders, page: { pageSize: PAGE_SIZE, after, count: "none" } } as never) as unknown as Promise<Page>;
  const deepGuarded = await cursorAt(guardedPage, DEPTH);

  const paginateCursor = async (cursor?: string) => paginate({ path: "/c", limit: PAGE_SIZE, sortBy: [["id", "ASC"]], ...(cursor ? { cursor } : {}) }, repo, { sortableColumns: ["id"], paginationType: PaginationType.CURSOR, maxLimit: 100 });
  // nestjs-paginate compares a string computed from every row's sort columns with the cursor
  // (`LPAD(…) < :cursor ORDER BY cursor`): no index serves it, so a page costs the same at any
  // depth; its page 2 stands for every depth (walking it 5,000 pages deep would take hours).
  // A driver error is reported as such, not as a time (PostgreSQL: "integer out of range" from its cursor expression over a million ids).
  let paginateFailure: string | null = null;
  let paginateDeep: string | undefined;
  try {
    const second = (await paginateCursor()).links.next;
    paginateDeep = second ? new URL(second, "http://x").searchParams.get("cursor") ?? undefined : undefined;
    await paginateCursor(paginateDeep);
  } catch (error) {
    paginateFailure = firstLine(error);
    log(`${dialect}: nestjs-paginate's cursor mode fails: ${paginateFailure}`);
  }

  const tasks = [
    { name: "querylib numbered page 1 by id (exact count)", run: () => toListAsync(repo, { ...byId, page: { pageNumber: 1, pageSize: PAGE_SIZE } } as never) },
    { name: "typeorm getManyAndCount page 1 by id", run: () => repo.createQueryBuilder("c").orderBy("c.id", "ASC").take(PAGE_SIZE).skip(0).getManyAndCount() },
    { name: `querylib numbered page ${DEPTH} by id (exact count)`, run: () => toListAsync(repo, { ...byId, page: { pageNumber: DEPTH, pageSize: PAGE_SIZE } } as never) },
    { name: `typeorm getManyAndCount page ${DEPTH} by id`, run: () => repo.createQueryBuilder("c").orderBy("c.id", "ASC").take(PAGE_SIZE).skip((DEPTH - 1) * PAGE_SIZE).getManyAndCount() },
    { name: "querylib cursor page 1 by id (count none)", run: () => idPage("") },
    { name: `querylib cursor page ${DEPTH} by id (count none)`, run: () => idPage(deepId) },
    { name: `hand-written seek page ${DEPTH} by id`, run: () => repo.createQueryBuilder("c").where("c.id > :last", { last: lastId }).orderBy("c.id", "ASC").limit(PAGE_SIZE).getMany() },
    ...(paginateFailure === null ? [{ name: "nestjs-paginate cursor page 2 by id (any depth costs the same)", run: () => paginateCursor(paginateDeep) }] : []),
    { name: "bare page 1 by id (LIMIT, no total)", run: () => repo.createQueryBuilder("c").orderBy("c.id", "ASC").limit(PAGE_SIZE).getMany() },
    { name: "querylib numbered page 1 by id (count none)", run: () => toListAsync(repo, { ...byId, page: { pageNumber: 1, pageSize: PAGE_SIZE, count: "none" } } as never) },
    { name: "querylib numbered page 1 by id (count estimated)", run: () => toListAsync(repo, { ...byId, page: { pageNumber: 1, pageSize: PAGE_SIZE, count: "estimated" } } as never) },
    { name: "querylib Gold by createdAt desc, numbered page 1 (exact count)", run: () => toListAsync(repo, { ...goldByCreated, page: { pageNumber: 1, pageSize: PAGE_SIZE } } as never) },
    { name: "querylib Gold by createdAt desc, cursor page 1", run: () => goldPage("") },
    { name: `querylib Gold by createdAt desc, cursor page ${DEPTH}`, run: () => goldPage(deepGold) },
    { name: `guarded (Gold tenant forced) by createdAt desc, cursor page ${DEPTH}`, run: () => guardedPage(deepGuarded) },
  ];
  // The rows agree before anything is timed: the deep cursor page is the hand-written seek's page.
  const seek = await tasks[6]!.run() as Customer[];
  const cursor = await idPage(deepId);
  if (JSON.stringify(cursor.data.map((c) => c.id)) !== JSON.stringify(seek.map((c) => c.id))) throw new Error(`${dialect}: the cursor page ${DEPTH} is not the hand-written seek's page`);
  const guarded = await guardedPage(deepGuarded);
  const unguarded = await goldPage(deepGold);
  if (JSON.stringify(guarded.data.map((c) => c.id)) !== JSON.stringify(unguarded.data.map((c) => c.id))) throw new Error(`${dialect}: the guarded deep page differs from the unguarded one`);
  log(`${dialect}: timing ${tasks.length} variants, ${ROUNDS} rounds`);
  const samples = await interleaved(tasks, { warmupRounds: 2, minRounds: ROUNDS, maxRounds: ROUNDS, budgetMs: Number.POSITIVE_INFINITY });
  const timed: Row[] = tasks.map((t) => ({ name: t.name, dialect, ms: stats(samples.get(t.name)!).p50 / 1000 }));
  if (paginateFailure !== null) timed.push({ name: "nestjs-paginate cursor page 2 by id (any depth costs the same)", dialect, ms: NaN, note: `fails: ${paginateFailure}` });
  // The export: every row, masked, as NDJSON (the route's encoding), once; RSS read every batch.
  const exportSource = new DataSource({ ...dataSourceOptions(dialect), entities: [MaskedCustomer] } as DataSourceOptions);
  await exportSource.initialize();
  const exportEngine = new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(MaskedCustomer, "masked"), lint: "off" });
  const anyone = await exportEngine.prepareAsync(new QpPolicyContext());
  const measured = async (name: string, chunks: AsyncIterable<string>) => {
    if (global.gc) global.gc();
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    let lines = 0;
    const t0 = performance.now();
    for await (const chunk of chunks) {
      lines += chunk.split("\n").length - 1;
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    const seconds = (performance.now() - t0) / 1000;
    log(`${dialect}: ${name}: ${lines} rows in ${seconds.toFixed(1)} s, RSS +${((peak - rss0) / 1e6).toFixed(0)} MB`);
    if (lines !== ROWS) throw new Error(`${dialect}: ${name} exported ${lines} rows, not ${ROWS}`);
    timed.push({ name: `${name}: rows/s`, dialect, ms: lines / seconds, note: "rate" }, { name: `${name}: RSS growth (MB)`, dialect, ms: (peak - rss0) / 1e6, note: "mb" });
  };
  await measured("export of every row, guarded, two masks (NDJSON)", toNdjson(applyPolicy(exportSource.getRepository(MaskedCustomer), anyone).exportAsync({ orders: [{ sort: 1, field: "id" }] } as never, { batchSize: 1000 })));
  await measured("export of every row, unguarded (NDJSON)", toNdjson(exportRows(repo, { orders: [{ sort: 1, field: "id" }] } as never, { batchSize: 1000 })));
  await exportSource.destroy();
  await guardedSource.destroy();
  await dataSource.destroy();
  return timed;
}

const ratio = (rows: Row[], dialect: Dialect, a: string, b: string) => {
  const x = rows.find((r) => r.dialect === dialect && r.name === a)?.ms;
  const y = rows.find((r) => r.dialect === dialect && r.name === b)?.ms;
  return x === undefined || y === undefined ? "n/a" : Number.isFinite(x / y) ? `${(x / y).toFixed(2)}×` : "fails";
};

function render(rows: Row[], dialects: Dialect[], meta: string): string {
  const names = [...new Set(rows.map((r) => r.name))];
  const head = `| request | ${dialects.join(" | ")} |\n|---|${dialects.map(() => "--:").join("|")}|`;
  const body = names.map((name) => `| ${name} | ${dialects.map((d) => {
    const row = rows.find((r) => r.dialect === d && r.name === name);
    if (!row) return "";
    if (row.note?.startsWith("fails")) return row.note.replaceAll("|", "\\|");
    if (row.note === "rate") return `${Math.round(row.ms).toLocaleString("en")} rows/s`;
    if (row.note === "mb") return `${row.ms.toFixed(0)} MB`;
    return `${row.ms < 10 ? row.ms.toFixed(2) : row.ms.toFixed(1)} ms`;
  }).join(" | ")} |`).join("\n");
  const targets: [string, string, string, string][] = [
    [`cursor page ${DEPTH} ÷ cursor page 1 (target ≤ 1.5×)`, `querylib cursor page ${DEPTH} by id (count none)`, "querylib cursor page 1 by id (count none)", ""],
    [`cursor page ${DEPTH} ÷ hand-written seek (target ≤ 2×)`, `querylib cursor page ${DEPTH} by id (count none)`, `hand-written seek page ${DEPTH} by id`, ""],
    ["count none ÷ bare page (target ≤ 2×)", "querylib numbered page 1 by id (count none)", "bare page 1 by id (LIMIT, no total)", ""],
    ["count estimated ÷ bare page (target ≤ 2×)", "querylib numbered page 1 by id (count estimated)", "bare page 1 by id (LIMIT, no total)", ""],
    ["exact page 1 ÷ getManyAndCount (target ≤ 1×: no slower than today)", "querylib numbered page 1 by id (exact count)", "typeorm getManyAndCount page 1 by id", ""],
    [`guarded ÷ unguarded cursor page ${DEPTH} (target ≤ 1.2×)`, `guarded (Gold tenant forced) by createdAt desc, cursor page ${DEPTH}`, `querylib Gold by createdAt desc, cursor page ${DEPTH}`, ""],
    [`nestjs-paginate cursor ÷ QueryLib cursor, page ${DEPTH}`, "nestjs-paginate cursor page 2 by id (any depth costs the same)", `querylib cursor page ${DEPTH} by id (count none)`, ""],
  ];
  const ratios = `| ratio | ${dialects.join(" | ")} |\n|---|${dialects.map(() => "--:").join("|")}|\n` +
    targets.map(([label, a, b]) => `| ${label} | ${dialects.map((d) => ratio(rows, d, a, b)).join(" | ")} |`).join("\n");
  return `## At scale\n\n${meta}\n\n${head}\n${body}\n\nRatios (the targets of issue #44):\n\n${ratios}\n`;
}

async function main(): Promise<void> {
  const dialects = DIALECTS.filter((d) => allDialects.includes(d));
  const rows: Row[] = [];
  for (const dialect of dialects) rows.push(...await measure(dialect));
  const commit = (() => { try { return execSync("git rev-parse --short HEAD", { cwd: REPO_ROOT }).toString().trim(); } catch { return "unknown"; } })();
  const meta = `Generated by \`npm run bench:scale\` (code in \`bench/at-scale.ts\`) at ${commit} on ${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}, Node ${process.version}: ` +
    `${ROWS.toLocaleString("en")} customers seeded in the database itself, pages of ${PAGE_SIZE}, medians of ${ROUNDS} interleaved rounds (every variant once a round, rotated), in one process. ` +
    `Page ${DEPTH.toLocaleString("en")} by cursor is reached by walking the cursors first (untimed); the hand-written seek starts after the same row, and the two pages are compared before timing. ` +
    `"count none" reads one row past the page instead of a COUNT; "estimated" asks the planner (PostgreSQL, MariaDB) and counts exactly under MaxExactEstimate (10,000), SQLite has no estimate. ` +
    `The guarded variant forces the tenant column (here the tier, Gold) from the caller's context, as QpForceWhere does. ` +
    `The exports run once each after the timed rounds (every row as NDJSON, batches of 1,000, the guarded one with a Partial and a Full mask): rows per second, and the growth of the bench process's RSS over the export (target: at most 100 MB).`;
  const markdown = render(rows, dialects, meta);
  process.stdout.write(markdown + "\n");
  if (WRITE) {
    const file = `${REPO_ROOT}BENCHMARKS.md`;
    const text = existsSync(file) ? readFileSync(file, "utf8") : "";
    const start = text.indexOf("\n## At scale");
    const next = start < 0 ? -1 : text.indexOf("\n## ", start + 5);
    const updated = start < 0 ? `${text.trimEnd()}\n\n${markdown}` : `${text.slice(0, start)}\n${markdown}${next < 0 ? "" : text.slice(next)}`;
    writeFileSync(file, updated);
    log("wrote the At scale section of BENCHMARKS.md");
  }
}

main().catch((error) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
