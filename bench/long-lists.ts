// Long value lists: a page of 100 orders (with its total) whose id is In a list of 10, 1,000 or
// 100,000 ids, on SQLite, PostgreSQL and MariaDB, three ways: QueryLib (the list is one bound
// parameter on SQLite and PostgreSQL), hand-written TypeORM `IN (:...ids)` (one parameter per
// id) and nestjs-paginate's `$in` filter. A driver error is reported as such, not as a time.
//
//   node dist/bench/long-lists.js [--quick] [--dialects=sqlite,postgres,mariadb]
//
// Markdown table on stdout, progress on stderr. SQLite and PostgreSQL use the bench's own
// databases (bench/db.ts); MariaDB a database of its own (QL_BENCH_MARIADB_URL, default
// mysql://root@127.0.0.1:3306/querylib_bench_lists), seeded here with the same domain.
process.env.TZ ??= "UTC";

import "reflect-metadata";
import { DataSource } from "typeorm";
import { FilterOperator, paginate, type PaginateQuery } from "nestjs-paginate";
import { Order, domainEntities } from "../test/domain/entities.js";
import { generateDomain, insertDomain } from "../test/domain/seed.js";
import { openPostgres, openSqlite } from "./db.js";
import { firstLine } from "./querylib-workloads.js";
import { toListAsync } from "../lib/index.js";
import { type Dialect, dialects as allDialects } from "../test/support/target-list.js";

const SIZES = [10, 1_000, 100_000] as const;
const PAGE_SIZE = 100;

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const dialects = (argv.find((a) => a.startsWith("--dialects="))?.slice(11).split(",") ?? allDialects) as Dialect[];
const customers = quick ? 2_000 : 10_000;
const log = (line: string) => process.stderr.write(`${line}\n`);

async function openMariaDb(): Promise<DataSource> {
  const url = new URL(process.env.QL_BENCH_MARIADB_URL ?? "mysql://root@127.0.0.1:3306/querylib_bench_lists");
  const name = url.pathname.slice(1);
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
  const server = new URL(url);
  server.pathname = "/";
  const admin = new DataSource({ type: "mariadb", url: server.toString(), charset: "utf8mb4" } as never);
  await admin.initialize();
  await admin.query(`CREATE DATABASE IF NOT EXISTS ${name} CHARACTER SET utf8mb4`);
  await admin.destroy();
  const dataSource = new DataSource({ type: "mariadb", url: url.toString(), charset: "utf8mb4", entities: domainEntities, synchronize: true, logging: false } as never);
  await dataSource.initialize();
  const [{ n }] = (await dataSource.query("SELECT COUNT(*) AS n FROM customer")) as { n: number }[];
  if (Number(n) !== customers) {
    log(`  mariadb: seeding ${customers} customers…`);
    await dataSource.synchronize(true);
    await insertDomain(dataSource, generateDomain({ customers, seed: 42 }));
  }
  return dataSource;
}

/** Every k-th existing order id, then ids past the last order, `size` in all. */
async function idList(dataSource: DataSource, size: number): Promise<number[]> {
  const rows = (await dataSource.query(`SELECT id FROM customer_order ORDER BY id`)) as { id: number }[];
  const existing = rows.map((r) => Number(r.id));
  const step = Math.max(1, Math.floor(existing.length / size));
  const ids: number[] = [];
  for (let i = 0; i < existing.length && ids.length < size; i += step) ids.push(existing[i]!);
  for (let next = existing[existing.length - 1]! + 1; ids.length < size; next++) ids.push(next);
  return ids;
}

type Variant = "QueryLib" | "TypeORM IN (:...ids)" | "nestjs-paginate $in";
const VARIANTS: Variant[] = ["QueryLib", "TypeORM IN (:...ids)", "nestjs-paginate $in"];

function runner(variant: Variant, dataSource: DataSource, ids: number[]): () => Promise<number> {
  const repo = dataSource.getRepository(Order);
  switch (variant) {
    case "QueryLib": {
      const shape = {
        conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "id", dataType: "Number", operator: "In", values: ids }] },
        orders: [{ sort: 1, field: "id", direction: "Ascending" }],
        page: { pageNumber: 1, pageSize: PAGE_SIZE },
      };
      return async () => ((await toListAsync(repo, shape as never)) as { totalCount: number }).totalCount;
    }
    case "TypeORM IN (:...ids)":
      return async () => (await repo.createQueryBuilder("o").where("o.id IN (:...ids)", { ids }).orderBy("o.id", "ASC").skip(0).take(PAGE_SIZE).getManyAndCount())[1];
    case "nestjs-paginate $in": {
      const query: PaginateQuery = { page: 1, limit: PAGE_SIZE, sortBy: [["id", "ASC"]], filter: { id: `$in:${ids.join(",")}` }, path: "http://localhost/bench" };
      return async () => (await paginate(query, repo, { sortableColumns: ["id"], filterableColumns: { id: [FilterOperator.IN] }, maxLimit: 1000 })).meta.totalItems ?? -1;
    }
  }
}

/** Median wall time in ms over `reps` runs after one warm-up, or the driver's error. */
async function measure(run: () => Promise<number>, reps: number): Promise<{ ms: number; total: number } | { error: string }> {
  try {
    const total = await run();
    const times: number[] = [];
    for (let i = 0; i < reps; i++) {
      const started = performance.now();
      await run();
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    return { ms: times[Math.floor(times.length / 2)]!, total };
  } catch (error) {
    return { error: firstLine(error) };
  }
}

const rows: string[] = [];
for (const dialect of dialects) {
  const db = dialect === "sqlite" ? await openSqlite({ customers, seed: 42 }, log) : dialect === "postgres" ? await openPostgres({ customers, seed: 42 }, log) : null;
  const dataSource = db ? db.dataSource : await openMariaDb();
  for (const size of SIZES) {
    const ids = await idList(dataSource, size);
    const reps = size === 100_000 ? (quick ? 3 : 5) : quick ? 20 : 50;
    for (const variant of VARIANTS) {
      const result = await measure(runner(variant, dataSource, ids), reps);
      const cell = "error" in result ? `fails: ${result.error.replaceAll("|", "\\|").slice(0, 120)}` : `${result.ms.toFixed(result.ms < 10 ? 2 : 1)} ms (total ${result.total})`;
      log(`  ${dialect} ${size} ${variant}: ${cell}`);
      rows.push(`| ${dialect} | ${size.toLocaleString("en")} | ${variant} | ${cell} |`);
    }
  }
  if (db) await db.close();
  else await dataSource.destroy();
}

console.log(`Page of ${PAGE_SIZE} orders with its total, \`id In\` a list (${customers.toLocaleString("en")} customers${quick ? ", --quick" : ""}); median of warm runs.\n`);
console.log("| dialect | ids | variant | time (median) |");
console.log("|---|---:|---|---|");
for (const row of rows) console.log(row);
