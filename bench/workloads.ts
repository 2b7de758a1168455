// W1–W7 written by hand: the TypeORM SelectQueryBuilder a competent user writes, the raw driver
// running a prepared statement of the same SQL (the floor), and nestjs-paginate's `paginate()`
// where it can express the workload. QueryLib's JSON lives in querylib-workloads.ts.
import type { DataSource, ObjectLiteral, Repository, SelectQueryBuilder } from "typeorm";
import { paginate, type PaginateConfig, type PaginateQuery, type Paginated } from "nestjs-paginate";
import { Customer, Order, OrderItem } from "../test/domain/entities.js";
import type { BenchDatabase, Dialect, RowCounts } from "./db.js";
import { applyTypeormGroup, fieldsOf, growthGroup, toPaginateExpression, w7Group, type Group } from "./predicates.js";
import { DEPTH_PATHS, W1, W2, W3, W4, W6, W7, w5, type TenantScope, type WorkloadId } from "./workload-params.js";

/** What the correctness guard compares: the page's row keys in order, and the total. */
export interface Outcome {
  keys: string[];
  total: number | null;
}

export interface Runner {
  run: () => Promise<unknown>;
  outcome: (result: unknown) => Outcome;
}

export interface HandWritten {
  typeorm: Runner;
  /** Builder construction + getQueryAndParameters() of the data query, without execution. */
  build: () => unknown;
  raw: Runner;
  paginate: Runner | { na: string };
  /** nestjs-paginate's own build cost (paginate() against a builder whose execution is stubbed). */
  paginateBuild?: () => Promise<unknown>;
  /** Footnote shown under the tables. */
  note?: string;
}

export interface Ctx {
  dialect: Dialect;
  dataSource: DataSource;
  db: BenchDatabase;
  counts: RowCounts;
}

const PATH = "http://localhost/bench";

const customerRepo = (ctx: Ctx) => ctx.dataSource.getRepository(Customer);
const orderRepo = (ctx: Ctx) => ctx.dataSource.getRepository(Order);

function num(value: unknown): number {
  return typeof value === "number" ? value : Number(value);
}

// ---------------------------------------------------------------------------------------------
// Shared shapes: a page of entities with the total (getManyAndCount).

/**
 * A workload that returns a page of `alias` entities and the total: TypeORM getManyAndCount
 * (page, then count); raw = the builder's own data SQL plus a COUNT(*) over the same
 * FROM/JOIN/WHERE, each a prepared statement, run concurrently where the driver allows it.
 */
function pagedEntities(
  ctx: Ctx,
  id: WorkloadId,
  alias: string,
  builder: () => SelectQueryBuilder<ObjectLiteral>,
  paginateRunner: Runner | { na: string },
  paginateBuild?: () => Promise<unknown>,
  note?: string,
  scope?: TenantScope,
): HandWritten {
  // The raw driver's SQL is the builder's own, taken on first use (so that a fresh DataSource's
  // first build can be timed as "cold" before anything else touched it).
  let texts: { dataSql: string; dataParams: unknown[]; countSql: string; countParams: unknown[] } | null = null;
  const sql = () => {
    if (!texts) {
      const [dataSql, dataParams] = builder().getQueryAndParameters();
      const countQb = builder().select("COUNT(*)", "cnt").orderBy().skip(undefined).take(undefined).offset(undefined).limit(undefined);
      const [countSql, countParams] = countQb.getQueryAndParameters();
      texts = { dataSql, dataParams, countSql, countParams };
    }
    return texts;
  };
  const idColumn = `${alias}_id`;
  const name = scope ? `${id}_tenant` : id;
  return {
    typeorm: {
      run: () => builder().getManyAndCount(),
      outcome: (result) => {
        const [rows, total] = result as [Array<{ id: number }>, number];
        return { keys: rows.map((row) => String(row.id)), total };
      },
    },
    build: () => builder().getQueryAndParameters(),
    raw: {
      run: async () => {
        const { dataSql, dataParams, countSql, countParams } = sql();
        // Page and COUNT concurrently on two connections (PostgreSQL); SQLite runs them in turn.
        const [rows, count] = await Promise.all([
          ctx.db.raw.all(`${name}_data`, dataSql, dataParams, 0),
          ctx.db.raw.all(`${name}_count`, countSql, countParams, 1),
        ]);
        return [rows, num(count[0].cnt)] as const;
      },
      outcome: (result) => {
        const [rows, total] = result as [Record<string, unknown>[], number];
        return { keys: rows.map((row) => String(row[idColumn])), total };
      },
    },
    paginate: scope ? { na: TENANT_NA } : paginateRunner,
    paginateBuild: scope ? undefined : paginateBuild,
    note: scope ? undefined : note,
  };
}

const TENANT_NA = "the tenant-scoped baselines are hand-written TypeORM and raw SQL only";

/** The guarded variant's tenant stand-in, as a competent user adds it to a builder. */
function tenantWhere<B extends { andWhere(where: string, params?: Record<string, unknown>): B }>(qb: B, alias: string, scope?: TenantScope, param = "tenant"): B {
  return scope ? qb.andWhere(`${alias}.tier = :${param}`, { [param]: scope.tier }) : qb;
}

function paginateRunner<T extends ObjectLiteral>(
  repo: Repository<T>,
  query: PaginateQuery,
  config: PaginateConfig<T>,
): Runner {
  return {
    run: () => paginate(query, repo, config),
    outcome: (result) => {
      const page = result as Paginated<T>;
      return { keys: page.data.map((row) => String((row as unknown as { id: unknown }).id)), total: page.meta.totalItems ?? null };
    },
  };
}

/**
 * nestjs-paginate's build cost: paginate() against a query builder whose execution methods
 * only compile the SQL (getQueryAndParameters) and return an empty page.
 */
function paginateBuildOnly<T extends ObjectLiteral>(
  repo: Repository<T>,
  query: PaginateQuery,
  config: PaginateConfig<T>,
): () => Promise<unknown> {
  let Stub: (new (qb: unknown) => SelectQueryBuilder<T>) | null = null;
  return () => {
    Stub ??= stubBuilderClass(repo.createQueryBuilder("__root").constructor as new (qb: unknown) => SelectQueryBuilder<T>);
    return paginate(query, new Stub(repo.createQueryBuilder("__root")), config);
  };
}

const stubs = new WeakMap<object, unknown>();
function stubBuilderClass<T extends ObjectLiteral>(Base: new (qb: unknown) => SelectQueryBuilder<T>) {
  let Stub = stubs.get(Base) as (new (qb: unknown) => SelectQueryBuilder<T>) | undefined;
  if (!Stub) {
    class StubBuilder extends (Base as new (qb: unknown) => SelectQueryBuilder<ObjectLiteral>) {
      override async getManyAndCount(): Promise<[ObjectLiteral[], number]> {
        this.getQueryAndParameters();
        this.clone().getQueryAndParameters(); // the count query TypeORM would build
        return [[], 0];
      }
      override async getMany(): Promise<ObjectLiteral[]> {
        this.getQueryAndParameters();
        return [];
      }
      override async getCount(): Promise<number> {
        this.getQueryAndParameters();
        return 0;
      }
    }
    Stub = StubBuilder as unknown as new (qb: unknown) => SelectQueryBuilder<T>;
    stubs.set(Base, Stub);
  }
  return Stub;
}

function bool(ctx: Ctx, value: boolean): string {
  // nestjs-paginate hands the text through; SQLite stores booleans as 0/1.
  return ctx.dialect === "postgres" ? String(value) : value ? "1" : "0"; // SQLite and MariaDB store booleans as 0/1
}

// ---------------------------------------------------------------------------------------------
// W1: equality + range, order, page 3 of 50, with total

function w1(ctx: Ctx, scope?: TenantScope): HandWritten {
  const repo = customerRepo(ctx);
  const from = new Date(W1.from);
  const to = new Date(W1.to);
  const builder = () =>
    tenantWhere(
      repo
        .createQueryBuilder("c")
        .where("c.tier = :tier", { tier: W1.tier })
        .andWhere("c.createdAt BETWEEN :from AND :to", { from, to }),
      "c",
      scope,
    )
      .orderBy("c.createdAt", "DESC")
      .addOrderBy("c.id", "DESC")
      .skip((W1.pageNumber - 1) * W1.pageSize)
      .take(W1.pageSize);
  const query: PaginateQuery = {
    page: W1.pageNumber,
    limit: W1.pageSize,
    sortBy: [
      ["createdAt", "DESC"],
      ["id", "DESC"],
    ],
    filter: { tier: `$eq:${W1.tier}`, createdAt: `$btw:${W1.from},${W1.to}` },
    path: PATH,
  };
  const config: PaginateConfig<Customer> = {
    sortableColumns: ["id", "createdAt"],
    filterableColumns: { tier: true, createdAt: true },
  };
  return pagedEntities(ctx, "W1", "c", builder as never, paginateRunner(repo, query, config), paginateBuildOnly(repo, query, config), undefined, scope);
}

// ---------------------------------------------------------------------------------------------
// W2: case-insensitive contains + In, page of 100

function w2(ctx: Ctx, scope?: TenantScope): HandWritten {
  const repo = customerRepo(ctx);
  // PostgreSQL: ILIKE. SQLite: LIKE, which is already case-insensitive for ASCII (the pattern is ASCII).
  const like = ctx.dialect === "postgres" ? "c.name ILIKE :name" : "c.name LIKE :name";
  const builder = () =>
    tenantWhere(
      repo
        .createQueryBuilder("c")
        .where(like, { name: `%${W2.nameContains}%` })
        .andWhere("c.tier IN (:...tiers)", { tiers: [...W2.tiers] }),
      "c",
      scope,
    )
      .orderBy("c.id", "ASC")
      .skip((W2.pageNumber - 1) * W2.pageSize)
      .take(W2.pageSize);
  const query: PaginateQuery = {
    page: W2.pageNumber,
    limit: W2.pageSize,
    sortBy: [["id", "ASC"]],
    filter: { name: `$ilike:${W2.nameContains}`, tier: `$in:${W2.tiers.join(",")}` },
    path: PATH,
  };
  const config: PaginateConfig<Customer> = {
    sortableColumns: ["id"],
    filterableColumns: { name: true, tier: true },
    maxLimit: 1000,
  };
  return pagedEntities(ctx, "W2", "c", builder as never, paginateRunner(repo, query, config), paginateBuildOnly(repo, query, config), undefined, scope);
}

// ---------------------------------------------------------------------------------------------
// W3: collection any-match, page of 25 with total

function w3(ctx: Ctx, scope?: TenantScope): HandWritten {
  const repo = customerRepo(ctx);
  const builder = () =>
    tenantWhere(repo.createQueryBuilder("c"), "c", scope)
      .andWhere((qb) => {
        const sub = qb
          .subQuery()
          .select("1")
          .from(Order, "o1")
          .where("o1.customerId = c.id")
          .andWhere("o1.status = :status")
          .getQuery();
        return `EXISTS ${sub}`;
      })
      .andWhere((qb) => {
        const sub = qb
          .subQuery()
          .select("1")
          .from(Order, "o2")
          .where("o2.customerId = c.id")
          .andWhere("o2.total > :minTotal")
          .getQuery();
        return `EXISTS ${sub}`;
      })
      .setParameters({ status: W3.status, minTotal: W3.minTotal })
      .orderBy("c.id", "ASC")
      .skip((W3.pageNumber - 1) * W3.pageSize)
      .take(W3.pageSize);
  // filter= expression: each relation term is its own correlated EXISTS (same semantics).
  const query: PaginateQuery = {
    page: W3.pageNumber,
    limit: W3.pageSize,
    sortBy: [["id", "ASC"]],
    filterExpression: `orders.status=$eq:${W3.status} AND orders.total=$gt:${W3.minTotal}`,
    path: PATH,
  };
  const config: PaginateConfig<Customer> = {
    sortableColumns: ["id"],
    filterableColumns: { "orders.status": true, "orders.total": true },
  };
  return pagedEntities(
    ctx,
    "W3",
    "c",
    builder as never,
    paginateRunner(repo, query, config),
    paginateBuildOnly(repo, query, config),
    "W3: every condition on `orders.x` is its own any-match (two EXISTS), as QueryLib (after 2.1.5) wraps each collection condition; nestjs-paginate via a `filter=` expression, whose relation terms are independent EXISTS.",
    scope,
  );
}

// ---------------------------------------------------------------------------------------------
// W4: select of three fields including a reference navigation

function w4(ctx: Ctx, scope?: TenantScope): HandWritten {
  const repo = customerRepo(ctx);
  // offset/limit, not skip/take: the join is to-one, so no DISTINCT-id pre-query is needed.
  const builder = () =>
    tenantWhere(
      repo
        .createQueryBuilder("c")
        .leftJoin("c.contact", "ct")
        .select(["c.id", "c.name", "ct.id", "ct.email"])
        .where("c.isActive = :active", { active: W4.isActive }),
      "c",
      scope,
    )
      .orderBy("c.name", "ASC")
      .addOrderBy("c.id", "ASC")
      .offset((W4.pageNumber - 1) * W4.pageSize)
      .limit(W4.pageSize);
  const query: PaginateQuery = {
    page: W4.pageNumber,
    limit: W4.pageSize,
    sortBy: [
      ["name", "ASC"],
      ["id", "ASC"],
    ],
    filter: { isActive: `$eq:${bool(ctx, W4.isActive)}` },
    path: PATH,
  };
  const config: PaginateConfig<Customer> = {
    sortableColumns: ["name", "id"],
    filterableColumns: { isActive: true },
    relations: ["contact"],
    select: ["id", "name", "contact.email"],
  };
  return pagedEntities(
    ctx,
    "W4",
    "c",
    builder as never,
    paginateRunner(repo, query, config),
    paginateBuildOnly(repo, query, config),
    "W4: nestjs-paginate runs in its default paging mode (take/skip), which adds a DISTINCT-id pre-query when a relation is joined.",
    scope,
  );
}

// ---------------------------------------------------------------------------------------------
// W5: Summary — group by city with count, sum, average and a having

function w5Workload(ctx: Ctx, scope?: TenantScope): HandWritten {
  const p = w5(ctx.counts);
  const repo = orderRepo(ctx);
  const nullsFirst = ctx.dialect === "postgres" ? "NULLS FIRST" : undefined; // SQLite: already first
  const grouped = () => {
    const qb = repo
      .createQueryBuilder("o")
      .innerJoin("o.customer", "c")
      .select("c.address.city", "city")
      .addSelect("COUNT(*)", "orderCount")
      .addSelect("SUM(o.total)", "revenue")
      .addSelect("AVG(o.total)", "avgTotal")
      .where("o.status IN (:...statuses)", { statuses: p.statuses });
    // Orders have no tenant column: the guarded variant's stand-in is `status <> 'Pending'`.
    if (scope) qb.andWhere("o.status <> :hiddenStatus", { hiddenStatus: scope.hiddenOrderStatus });
    // MariaDB groups text by its collation (case and accents folded); QueryLib groups exact values, as the other databases do.
    return qb
      .groupBy(ctx.dialect === "mariadb" ? "CAST(c.address.city AS BINARY)" : "c.address.city")
      .having("COUNT(*) >= :minCount", { minCount: p.minCount });
  };
  const page = () =>
    grouped()
      .orderBy("COUNT(*)", "DESC")
      .addOrderBy("c.address.city", "ASC", nullsFirst)
      .offset((p.pageNumber - 1) * p.pageSize)
      .limit(p.pageSize);
  const count = () => {
    const inner = grouped();
    return ctx.dataSource
      .createQueryBuilder()
      .select("COUNT(*)", "cnt")
      .from(`(${inner.getQuery()})`, "g")
      .setParameters(inner.getParameters());
  };
  let texts: { pageSql: string; pageParams: unknown[]; countSql: string; countParams: unknown[] } | null = null;
  const sql = () => {
    if (!texts) {
      const [pageSql, pageParams] = page().getQueryAndParameters();
      const [countSql, countParams] = count().getQueryAndParameters();
      texts = { pageSql, pageParams, countSql, countParams };
    }
    return texts;
  };
  const name = scope ? "W5_tenant" : "W5";
  const keys = (rows: Record<string, unknown>[]) => rows.map((row) => `${row.city ?? "<null>"}:${num(row.orderCount)}`);
  return {
    typeorm: {
      run: async () => {
        const rows = await page().getRawMany();
        const total = await count().getRawOne();
        return [rows, num(total.cnt)] as const;
      },
      outcome: (result) => {
        const [rows, total] = result as [Record<string, unknown>[], number];
        return { keys: keys(rows), total };
      },
    },
    build: () => page().getQueryAndParameters(),
    raw: {
      run: async () => {
        const { pageSql, pageParams, countSql, countParams } = sql();
        const [rows, total] = await Promise.all([
          ctx.db.raw.all(`${name}_page`, pageSql, pageParams, 0),
          ctx.db.raw.all(`${name}_count`, countSql, countParams, 1),
        ]);
        return [rows, num(total[0].cnt)] as const;
      },
      outcome: (result) => {
        const [rows, total] = result as [Record<string, unknown>[], number];
        return { keys: keys(rows), total };
      },
    },
    paginate: { na: scope ? TENANT_NA : "no GROUP BY, aggregates or HAVING in nestjs-paginate" },
    note: scope ? undefined : `W5: having orderCount >= ${p.minCount} (about the mean per city at this scale); ordered by count desc, city asc (nulls first).`,
  };
}

// ---------------------------------------------------------------------------------------------
// W6: Segment — union and except by primary key, paged

function w6(ctx: Ctx, scope?: TenantScope): HandWritten {
  const repo = customerRepo(ctx);
  const builder = () => {
    // TypeORM has no UNION/EXCEPT builder: a user composes the id sets as a compound subquery.
    // Tenant-scoped: every set gets the tenant predicate, as QueryLib's forced predicate does.
    const s1 = tenantWhere(repo.createQueryBuilder("s1").select("s1.id").where("s1.tier = :segTier", { segTier: W6.tier }), "s1", scope, "segTenant");
    const s2 = tenantWhere(repo.createQueryBuilder("s2").select("s2.id").where("s2.balance > :segBalance", { segBalance: W6.minBalance }), "s2", scope, "segTenant");
    const s3 = tenantWhere(repo.createQueryBuilder("s3").select("s3.id").where("s3.isActive = :segActive", { segActive: W6.exceptActive }), "s3", scope, "segTenant");
    return repo
      .createQueryBuilder("c")
      .where(`c.id IN (${s1.getQuery()} UNION ${s2.getQuery()} EXCEPT ${s3.getQuery()})`)
      .setParameters({ ...s1.getParameters(), ...s2.getParameters(), ...s3.getParameters() })
      .orderBy("c.id", "ASC")
      .skip((W6.pageNumber - 1) * W6.pageSize)
      .take(W6.pageSize);
  };
  // nestjs-paginate has no set operations; over one table with non-null columns the same rows
  // are (A OR B) AND NOT C, which its filter= expression can say.
  const query: PaginateQuery = {
    page: W6.pageNumber,
    limit: W6.pageSize,
    sortBy: [["id", "ASC"]],
    filterExpression: `(tier=$eq:${W6.tier} OR balance=$gt:${W6.minBalance}) AND NOT isActive=$eq:${bool(ctx, W6.exceptActive)}`,
    path: PATH,
  };
  const config: PaginateConfig<Customer> = {
    sortableColumns: ["id"],
    filterableColumns: { tier: true, balance: true, isActive: true },
  };
  return pagedEntities(
    ctx,
    "W6",
    "c",
    builder as never,
    paginateRunner(repo, query, config),
    undefined,
    "W6: hand-written and raw use `id IN (s1 UNION s2 EXCEPT s3)`; nestjs-paginate cannot do set operations and is given the equivalent boolean filter `(A OR B) AND NOT C` (valid here because all three sets are over one table with non-null columns).",
    scope,
  );
}

// ---------------------------------------------------------------------------------------------
// W7: a 50-condition nested filter

function treeWorkload(ctx: Ctx, id: WorkloadId, group: Group, pageSize: number, scope?: TenantScope): HandWritten {
  const repo = customerRepo(ctx);
  const builder = () => {
    const qb = repo.createQueryBuilder("c");
    applyTypeormGroup(qb, group, "c", ctx.dialect);
    return tenantWhere(qb, "c", scope).orderBy("c.id", "ASC").skip(0).take(pageSize);
  };
  const query: PaginateQuery = {
    page: 1,
    limit: pageSize,
    sortBy: [["id", "ASC"]],
    filterExpression: toPaginateExpression(group, ctx.dialect),
    path: PATH,
  };
  const filterableColumns: Record<string, true> = {};
  for (const field of fieldsOf(group)) filterableColumns[field] = true;
  const config: PaginateConfig<Customer> = {
    sortableColumns: ["id"],
    filterableColumns: filterableColumns as PaginateConfig<Customer>["filterableColumns"],
    filterExpressionMaxComplexity: 1000,
    maxLimit: 1000,
  };
  // nestjs-paginate's $ilike and $sw are LIKE on MariaDB, under the column's collation, which also folds accents: another question.
  const paginate = ctx.dialect === "mariadb" && hasInsensitiveText(group)
    ? { na: "on MariaDB its $ilike/$sw follow the collation, which also ignores accents (another question)" }
    : paginateRunner(repo, query, config);
  return pagedEntities(ctx, id, "c", builder as never, paginate, paginateBuildOnly(repo, query, config), undefined, scope);
}

function hasInsensitiveText(group: Group): boolean {
  return group.conditions.some((c) => c.operator === "IContains" || c.operator === "IStartsWith") || group.groups.some(hasInsensitiveText);
}

function w7(ctx: Ctx, scope?: TenantScope): HandWritten {
  return treeWorkload(ctx, "W7", w7Group(), W7.pageSize, scope);
}

/**
 * Each workload written by hand; with `scope`, the tenant-scoped baselines of the guarded
 * variant (the same builder plus the tenant stand-in predicate; no nestjs-paginate).
 */
export const HAND_WRITTEN: Record<WorkloadId, (ctx: Ctx, scope?: TenantScope) => HandWritten> = {
  W1: w1,
  W2: w2,
  W3: w3,
  W4: w4,
  W5: w5Workload,
  W6: w6,
  W7: w7,
};

// ---------------------------------------------------------------------------------------------
// Growth curves (hand-written side)

/** `n` ANDed conditions, page 1 of 50 with total. */
export function conditionsBuilder(ctx: Ctx, n: number): () => SelectQueryBuilder<Customer> {
  const repo = customerRepo(ctx);
  const group = growthGroup(n);
  return () => {
    const qb = repo.createQueryBuilder("c");
    applyTypeormGroup(qb, group, "c", ctx.dialect);
    return qb.orderBy("c.id", "ASC").skip(0).take(50);
  };
}

/** Active customers by id, page 1 of `size` with total. */
export function pageSizeBuilder(ctx: Ctx, size: number): () => SelectQueryBuilder<Customer> {
  const repo = customerRepo(ctx);
  return () =>
    repo.createQueryBuilder("c").where("c.isActive = :active", { active: true }).orderBy("c.id", "ASC").skip(0).take(size);
}

/**
 * One In condition at the end of an OrderItem path of `depth` segments, page 1 of 50 with total.
 * Inner joins (the condition excludes a missing reference anyway) and offset/limit, which is
 * correct for to-one joins and avoids TypeORM's DISTINCT-id pre-query.
 */
export function depthBuilder(ctx: Ctx, depth: number): () => SelectQueryBuilder<OrderItem> {
  const repo = ctx.dataSource.getRepository(OrderItem);
  const p = DEPTH_PATHS[depth - 1];
  return () => {
    const qb = repo.createQueryBuilder("i");
    let column = `i.${p.path}`;
    if (depth >= 2) qb.innerJoin("i.order", "o");
    if (depth >= 3) qb.innerJoin("o.customer", "c");
    if (depth >= 4) qb.innerJoin("c.contact", "ct");
    if (depth === 2) column = "o.status";
    if (depth === 3) column = "c.tier";
    if (depth === 4) column = "ct.city";
    return qb.where(`${column} IN (:...v)`, { v: [...p.values] }).orderBy("i.id", "ASC").offset(0).limit(50);
  };
}
