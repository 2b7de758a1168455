// QueryLib benchmark suite: `npm run bench` (full) or `npm run bench -- --quick`.
//
//   node dist/bench/run.js [--quick] [--dialects=sqlite,postgres,mariadb] [--only=W1,W3]
//                          [--customers=N] [--sqlite-memory] [--no-build] [--no-growth]
//                          [--no-transforms] [--no-vaults] [--no-write]
//
// Progress goes to stderr; the Markdown tables go to stdout. Writes BENCHMARKS.md at the repo
// root, docs/benchmarks/bench.json and docs/benchmarks/growth.png (unless --no-write).
process.env.TZ ??= "UTC";

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { DataSource, type DataSourceOptions, type EntityTarget, type ObjectLiteral } from "typeorm";
import { Customer, OrderItem, domainEntities } from "../test/domain/entities.js";
import { growthChart } from "./chart.js";
import { dialects } from "../test/support/target-list.js";
import { OUT_DIR, PUBLISHED_DIR, REPO_ROOT, openBenchDatabase, type BenchDatabase, type Dialect } from "./db.js";
import { calibrationWork, interleaved, interleavedLoops, stats, type LoopTask, type PassOptions, type RoundOptions, type TimedTask } from "./measure.js";
import {
  conditionsFilter,
  depthFilter,
  firstLine,
  growthBuilder,
  growthRunner,
  guardedBuilder,
  guardedVariant,
  loadGuarded,
  loadQueryLib,
  QUERYLIB_WORKLOADS,
  pageSizeFilter,
  querylibKeys,
  unguardedBuilder,
  unguardedRunner,
  type GuardedEnv,
  type GuardedModule,
  type QueryLibApi,
  type QueryLibResult,
} from "./querylib-workloads.js";
import {
  TENANT_GROUP,
  VARIANTS,
  VARIANT_LABEL,
  renderConsole,
  renderMarkdown,
  type BenchReport,
  type BuildResult,
  type GrowthSeries,
  type BuildPhase,
  type VariantName,
  type VariantResult,
  type WorkloadResult,
} from "./report.js";
import { CONDITION_COUNTS, DEPTHS, PAGE_SIZES, TENANT, TITLES, WORKLOAD_IDS, type WorkloadId } from "./workload-params.js";
import { runTransforms, type TransformOptions } from "./transforms.js";
import { runVaults } from "./vaults.js";
import { HAND_WRITTEN, conditionsBuilder, depthBuilder, pageSizeBuilder, type Ctx, type HandWritten, type Outcome, type Runner } from "./workloads.js";

// ---------------------------------------------------------------------------------------------
// Options

/** A run over all of them (and every workload) publishes its figures; fewer is a partial run. */
const ALL_DIALECTS: Dialect[] = dialects;

/** Sections of BENCHMARKS.md that other bench scripts write (bench/http/run.ts, bench/long-lists.ts): a full run keeps them. */
function keptSections(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return "";
  }
  const starts = ["\n## Over HTTP", "\n## Long value lists", "\n## At scale", "\n## Telemetry", "\n## Private aggregates"].map((heading) => text.indexOf(heading)).filter((at) => at >= 0);
  return starts.length === 0 ? "" : text.slice(Math.min(...starts));
}

interface Options {
  quick: boolean;
  dialects: Dialect[];
  only: WorkloadId[];
  customers: number;
  seed: number;
  sqliteMemory: boolean;
  build: boolean;
  growth: boolean;
  transforms: boolean;
  vaults: boolean;
  write: boolean;
  rounds: RoundOptions;
  buildLoop: PassOptions;
  /** Build-only phases measured again when the machine ran slow during them (see calibrationWork). */
  buildRetries: number;
  growthRounds: RoundOptions;
  growthBuildLoop: PassOptions;
  /** Cold build-only: fresh DataSources (and engines) per workload, one first call each. */
  coldIterations: number;
  transformLoop: TransformOptions;
  vaultPages: number;
}

function parseOptions(argv: string[]): Options {
  const flag = (name: string) => argv.includes(`--${name}`);
  const value = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  for (const arg of argv) {
    if (!/^--(quick|sqlite-memory|no-build|no-growth|no-transforms|no-vaults|no-write|dialects=.+|only=.+|customers=\d+|seed=\d+)$/.test(arg)) {
      throw new Error(`unknown argument ${arg} (see the header of bench/run.ts)`);
    }
  }
  const quick = flag("quick");
  const dialects = (value("dialects") ?? ALL_DIALECTS.join(",")).split(",").map((d) => d.trim()) as Dialect[];
  for (const d of dialects) if (d !== "sqlite" && d !== "postgres" && d !== "mariadb") throw new Error(`unknown dialect ${d}`);
  const only = (value("only")?.split(",").map((w) => w.trim().toUpperCase()) ?? WORKLOAD_IDS) as WorkloadId[];
  for (const w of only) if (!WORKLOAD_IDS.includes(w)) throw new Error(`unknown workload ${w}`);
  return {
    quick,
    dialects,
    only,
    customers: Number(value("customers") ?? (quick ? 2000 : 10000)),
    seed: Number(value("seed") ?? 42),
    sqliteMemory: flag("sqlite-memory"),
    build: !flag("no-build"),
    growth: !flag("no-growth"),
    transforms: !flag("no-transforms"),
    vaults: !flag("no-vaults"),
    write: !flag("no-write"),
    // The budgets are long because this machine has slow spells of a few seconds (everything ~1.5×
    // slower): spread over more time, a spell moves fewer of a variant's samples, so the medians
    // (and the differences between them, such as "guarded adds") move less from run to run.
    rounds: quick
      ? { warmupRounds: 5, minRounds: 20, maxRounds: 400, budgetMs: 900 }
      : { warmupRounds: 20, minRounds: 100, maxRounds: 10000, budgetMs: 12000 },
    // Build-only: per workload, all variants interleaved in passes; budget covers all of them.
    buildLoop: quick
      ? { warmup: 300, iterations: 4000, passes: 8, budgetMs: 600 }
      : { warmup: 3000, iterations: 90000, passes: 60, budgetMs: 15000 },
    buildRetries: quick ? 0 : 2,
    // Growth: per axis, every point × variant interleaved; budgets cover the whole axis.
    growthRounds: quick
      ? { warmupRounds: 2, minRounds: 8, maxRounds: 300, budgetMs: 2000 }
      : { warmupRounds: 5, minRounds: 40, maxRounds: 3000, budgetMs: 12000 },
    growthBuildLoop: quick
      ? { warmup: 300, iterations: 2000, passes: 8, budgetMs: 1200 }
      : { warmup: 1000, iterations: 10000, passes: 20, budgetMs: 6000 },
    coldIterations: quick ? 5 : 20,
    transformLoop: quick ? { values: 200_000, passes: 3 } : { values: 200_000, passes: 5 },
    vaultPages: quick ? 5 : 20,
  };
}

const log = (line: string) => process.stderr.write(line + "\n");

function versionOf(pkg: string): string {
  try {
    const url = new URL(`../../node_modules/${pkg}/package.json`, import.meta.url);
    return JSON.parse(readFileSync(url, "utf8")).version;
  } catch {
    return "?";
  }
}

// ---------------------------------------------------------------------------------------------
// Correctness guard

function compare(expected: Outcome, actual: Outcome): string | null {
  if (expected.total !== actual.total) {
    return `total ${actual.total} ≠ raw ${expected.total}`;
  }
  if (expected.keys.length !== actual.keys.length) {
    return `${actual.keys.length} rows ≠ raw ${expected.keys.length} rows`;
  }
  for (let i = 0; i < expected.keys.length; i++) {
    if (expected.keys[i] !== actual.keys[i]) {
      return `row #${i + 1} is ${actual.keys[i]}, raw has ${expected.keys[i]} (first rows: [${actual.keys.slice(0, 5).join(", ")}] vs raw [${expected.keys.slice(0, 5).join(", ")}])`;
    }
  }
  return null;
}

function sqlText(built: unknown): string {
  const [sql, params] = built as [string, unknown[]];
  return `${sql} -- ${JSON.stringify(params)}`;
}

// ---------------------------------------------------------------------------------------------
// One workload on one dialect

/** The guarded side of one dialect: its DataSource + engine, or why it is skipped. */
type GuardedSide = { module: GuardedModule; env: GuardedEnv } | { skipped: string };

async function runWorkload(
  ctx: Ctx,
  id: WorkloadId,
  api: QueryLibApi | null,
  querylibNote: string,
  guardedSide: GuardedSide,
  options: Options,
): Promise<WorkloadResult> {
  const result: WorkloadResult = { dialect: ctx.dialect, id, title: TITLES[id], valid: true, rounds: 0, variants: [], notes: [] };
  let hw: HandWritten;
  try {
    hw = HAND_WRITTEN[id](ctx);
  } catch (error) {
    result.valid = false;
    result.notes.push(`${id} (${ctx.dialect}): hand-written setup failed: ${firstLine(error)}`);
    log(`  ${ctx.dialect} ${id}: SETUP FAILED ${firstLine(error)}`);
    return result;
  }
  if (hw.note) result.notes.push(hw.note);

  const runners = new Map<VariantName, Runner>();
  const statuses = new Map<VariantName, VariantResult>();
  runners.set("raw", hw.raw);
  runners.set("typeorm", hw.typeorm);
  if (api) {
    runners.set("querylib", {
      run: unguardedRunner(api, ctx.dataSource, ctx.counts, id),
      outcome: (r) => querylibKeys(id, r as QueryLibResult),
    });
  } else {
    statuses.set("querylib", { variant: "querylib", status: "skipped", reason: querylibNote });
  }
  if ("na" in hw.paginate) statuses.set("paginate", { variant: "paginate", status: "n/a", reason: hw.paginate.na });
  else runners.set("paginate", hw.paginate);

  // Guarded QueryLib and its tenant-scoped baselines (same builder + the same tenant predicate).
  const guarded = guardedVariant(api, guardedSide, ctx.counts, id);
  let hwTenant: HandWritten | null = null;
  if ("run" in guarded) {
    try {
      hwTenant = HAND_WRITTEN[id](ctx, TENANT);
      runners.set("raw-tenant", hwTenant.raw);
      runners.set("typeorm-tenant", hwTenant.typeorm);
      runners.set("querylib-guarded", { run: guarded.run, outcome: (r) => querylibKeys(id, r as QueryLibResult) });
    } catch (error) {
      for (const name of ["raw-tenant", "typeorm-tenant", "querylib-guarded"] as VariantName[]) {
        statuses.set(name, { variant: name, status: "error", reason: `tenant-scoped setup failed: ${firstLine(error)}` });
      }
    }
  } else {
    statuses.set("querylib-guarded", { variant: "querylib-guarded", status: "skipped", reason: guarded.skipped });
  }

  // The references: the raw driver, and the raw driver with the tenant predicate.
  const references = new Map<"plain" | "tenant", Outcome>();
  const groupOf = (name: VariantName) => (TENANT_GROUP.has(name) ? "tenant" : "plain");
  for (const [group, rawName] of [
    ["plain", "raw"],
    ["tenant", "raw-tenant"],
  ] as const) {
    const raw = runners.get(rawName);
    if (!raw) continue;
    try {
      const reference = raw.outcome(await raw.run());
      references.set(group, reference);
      statuses.set(rawName, { variant: rawName, status: "ok", rows: reference.keys.length, total: reference.total });
      if (reference.keys.length === 0) {
        result.notes.push(`${id} (${ctx.dialect}): the ${VARIANT_LABEL[rawName]} returned an empty page, so the row comparison proves little.`);
        log(`  ${ctx.dialect} ${id}: WARNING empty page (${rawName})`);
      }
    } catch (error) {
      log(`  ${ctx.dialect} ${id}: RAW FAILED (${rawName}) ${firstLine(error)}`);
      if (group === "plain") {
        result.valid = false;
        result.notes.push(`${id} (${ctx.dialect}): raw driver failed: ${firstLine(error)}`);
        return result;
      }
      for (const name of TENANT_GROUP) {
        runners.delete(name);
        statuses.set(name, { variant: name, status: "error", reason: `${VARIANT_LABEL[rawName]} failed: ${firstLine(error)}` });
      }
    }
  }
  for (const [name, runner] of runners) {
    if (name === "raw" || name === "raw-tenant") continue;
    const reference = references.get(groupOf(name))!;
    try {
      const outcome = runner.outcome(await runner.run());
      const difference = compare(reference, outcome);
      if (difference) {
        statuses.set(name, { variant: name, status: "mismatch", reason: difference });
        result.valid = false;
        log(`  ${ctx.dialect} ${id}: MISMATCH ${name}: ${difference}`);
      } else {
        statuses.set(name, { variant: name, status: "ok", rows: outcome.keys.length, total: outcome.total });
      }
    } catch (error) {
      statuses.set(name, { variant: name, status: "error", reason: firstLine(error) });
      log(`  ${ctx.dialect} ${id}: ERROR ${name}: ${firstLine(error)}`);
    }
  }

  // Keep the SQL each side sends, for reading the figures (bench.json only).
  for (const [name, side] of [
    ["typeorm", hw],
    ["typeorm-tenant", hwTenant],
  ] as const) {
    try {
      if (side && statuses.get(name)) statuses.get(name)!.sql = sqlText(side.build());
    } catch {
      // shown as an error above
    }
  }
  if (api && statuses.get("querylib")?.status === "ok") {
    try {
      const workload = QUERYLIB_WORKLOADS[id];
      const r = await api.toListAsync!(workload.source(ctx.dataSource), workload.shape(ctx.counts), true);
      statuses.get("querylib")!.sql = r.queryString ?? undefined;
    } catch {
      // not essential
    }
  }
  if ("sql" in guarded && statuses.get("querylib-guarded")?.status === "ok") {
    // A guarded query with a forced predicate refuses getQueryString (QueryStringDenied); the
    // admin simulate shows the sanitized SQL instead (Filters only).
    try {
      statuses.get("querylib-guarded")!.sql = (await guarded.sql()) ?? undefined;
    } catch {
      // not essential
    }
  }

  // Time the variants that returned their reference's rows, all in the same rounds.
  const tasks: TimedTask[] = [...runners]
    .filter(([name]) => statuses.get(name)?.status === "ok")
    .map(([name, runner]) => ({ name, run: runner.run }));
  const samples = await interleaved(tasks, options.rounds);
  result.rounds = Math.min(...[...samples.values()].map((s) => s.length));
  for (const [name, values] of samples) statuses.get(name as VariantName)!.stats = stats(values);
  for (const name of VARIANTS) {
    const v = statuses.get(name);
    if (!v) continue;
    const tenant = TENANT_GROUP.has(name);
    const typeormP50 = statuses.get(tenant ? "typeorm-tenant" : "typeorm")?.stats?.p50;
    const rawP50 = statuses.get(tenant ? "raw-tenant" : "raw")?.stats?.p50;
    if (v.stats && typeormP50) v.ratioTypeorm = v.stats.p50 / typeormP50;
    if (v.stats && rawP50) v.ratioRaw = v.stats.p50 / rawP50;
    result.variants.push(v);
  }
  const plain = references.get("plain")!;
  const tenantRef = references.get("tenant");
  log(
    `  ${ctx.dialect} ${id}: ${result.variants
      .map((v) => (v.stats ? `${v.variant} ${(v.stats.p50 / 1000).toFixed(3)} ms` : `${v.variant} ${v.status}`))
      .join(", ")} (${result.rounds} rounds, ${plain.keys.length} rows of ${plain.total}${tenantRef ? `; tenant ${tenantRef.keys.length} of ${tenantRef.total}` : ""})`,
  );
  return result;
}

// ---------------------------------------------------------------------------------------------
// Build-only

const BUILD_IDS: WorkloadId[] = ["W1", "W2", "W3", "W4", "W5", "W6", "W7"];
/** Cold build-only (fresh DataSource per sample) for these. */
const COLD_IDS: WorkloadId[] = ["W1", "W2", "W3", "W4"];

/** A Summary is always sanitized in full (its group floor reads the Having's values): no shape to reuse. */
function cacheColumn(variant: VariantName, id: WorkloadId): string {
  if (variant.endsWith("-cached")) return "hit";
  if (variant === "querylib-guarded") return QUERYLIB_WORKLOADS[id].build === "summary" ? "miss (a Summary is sanitized in full)" : "miss, shape reused";
  if (variant === "querylib-guarded-new-shape") return "miss, new shape";
  return "miss";
}

async function runBuild(ctx: Ctx, api: QueryLibApi | null, querylibNote: string, guardedSide: GuardedSide, options: Options): Promise<BuildResult[]> {
  const out: BuildResult[] = [];
  for (const id of BUILD_IDS.filter((w) => options.only.includes(w))) {
    let hw: HandWritten;
    try {
      hw = HAND_WRITTEN[id](ctx);
    } catch {
      continue;
    }
    const tasks: LoopTask[] = [{ name: "typeorm", fn: hw.build }];
    const failed: BuildResult[] = [];
    if (api) {
      for (const [variant, cached] of [["querylib", false], ["querylib-cached", true]] as const) {
        const build = unguardedBuilder(api, ctx.dataSource, ctx.counts, id, cached);
        if (!build) {
          if (!cached) failed.push({ dialect: ctx.dialect, id, variant, status: "skipped", reason: "`toStatements`/`summary` not exported by QueryLib" });
          continue;
        }
        try {
          build();
          tasks.push({ name: variant, fn: build });
        } catch (error) {
          failed.push({ dialect: ctx.dialect, id, variant, status: "error", reason: firstLine(error) });
        }
      }
    } else {
      failed.push({ dialect: ctx.dialect, id, variant: "querylib", status: "skipped", reason: querylibNote });
    }
    if ("env" in guardedSide && api) {
      for (const [variant, requests] of [["querylib-guarded", "miss"], ["querylib-guarded-cached", "cached"], ["querylib-guarded-new-shape", "new-shape"]] as const) {
        const build = guardedBuilder(api, guardedSide.module, guardedSide.env, ctx.counts, id, requests);
        if (!build) continue;
        try {
          await build();
          tasks.push({ name: variant, fn: build, async: true });
        } catch (error) {
          failed.push({ dialect: ctx.dialect, id, variant, status: "error", reason: firstLine(error) });
        }
      }
    } else {
      failed.push({ dialect: ctx.dialect, id, variant: "querylib-guarded", status: "skipped", reason: "skipped" in guardedSide ? guardedSide.skipped : querylibNote });
    }
    if (hw.paginateBuild) {
      try {
        await hw.paginateBuild();
        tasks.push({ name: "paginate", fn: hw.paginateBuild, async: true });
      } catch (error) {
        failed.push({ dialect: ctx.dialect, id, variant: "paginate", status: "error", reason: firstLine(error) });
      }
    }
    const samples = await steadyLoops(ctx.dialect, id, tasks, options);
    const cold = COLD_IDS.includes(id) ? await coldBuild(ctx, id, api, guardedSide, options) : new Map<VariantName, number[]>();
    const typeorm = stats(samples.get("typeorm")!);
    for (const task of tasks) {
      const s = task.name === "typeorm" ? typeorm : stats(samples.get(task.name)!);
      const coldSamples = cold.get(task.name as VariantName);
      out.push({
        dialect: ctx.dialect,
        id,
        variant: task.name as VariantName,
        status: "ok",
        stats: s,
        ratioTypeorm: s.p50 / typeorm.p50,
        ...(coldSamples?.length ? { cold: stats(coldSamples) } : {}),
        ...(task.name === "typeorm" || task.name === "paginate" ? {} : { cache: cacheColumn(task.name as VariantName, id) }),
      });
    }
    out.push(...failed);
    const line = out
      .filter((b) => b.dialect === ctx.dialect && b.id === id)
      .map((b) => (b.stats ? `${b.variant} ${b.stats.p50.toFixed(1)} µs${b.cold ? ` (cold ${b.cold.p50.toFixed(0)} µs)` : ""}` : `${b.variant} ${b.status}`))
      .join(", ");
    log(`  ${ctx.dialect} build ${id}: ${line}`);
  }
  return out;
}

/** A build phase slower than this × the run's fastest calibration so far is measured again. */
const SLOW_SPELL = 1.15;
/** The fastest calibration (µs per call) seen in this run's build phases. */
let fastestCalibration = Infinity;
/** Every build phase's calibration and attempts, for the report. */
const buildPhases: BuildPhase[] = [];

/**
 * The build-only loops with the calibration work among the variants; a phase whose calibration
 * ran more than SLOW_SPELL × the run's fastest so far (a slow spell of the machine) is measured
 * again, up to buildRetries times, and the attempt on the fastest machine is kept. Every
 * attempt's calibration is reported.
 */
async function steadyLoops(dialect: Dialect, id: WorkloadId, tasks: LoopTask[], options: Options): Promise<Map<string, number[]>> {
  const attempts: number[] = [];
  let kept: { samples: Map<string, number[]>; calibration: number } | null = null;
  for (;;) {
    const samples = await interleavedLoops([...tasks, { name: CALIBRATION, fn: calibrationWork }], options.buildLoop);
    const calibration = stats(samples.get(CALIBRATION)!).p50;
    samples.delete(CALIBRATION);
    attempts.push(calibration);
    fastestCalibration = Math.min(fastestCalibration, calibration);
    if (!kept || calibration < kept.calibration) kept = { samples, calibration };
    const slowdown = calibration / fastestCalibration;
    if (slowdown <= SLOW_SPELL || attempts.length > options.buildRetries) break;
    log(`  ${dialect} build ${id}: calibration ${calibration.toFixed(2)} µs, ${slowdown.toFixed(2)}× the fastest so far (a slow spell): measuring again`);
  }
  buildPhases.push({ dialect, id, attempts, keptCalibrationUs: kept.calibration });
  return kept.samples;
}

const CALIBRATION = "calibration";

/**
 * Cold build: per sample a freshly initialized DataSource on the same database (and, guarded, a
 * fresh guarded DataSource, engine, vault and prepared context), then the first call of each
 * variant on it, in rotated order. One sample per variant per fresh instance.
 */
async function coldBuild(ctx: Ctx, id: WorkloadId, api: QueryLibApi | null, guardedSide: GuardedSide, options: Options): Promise<Map<VariantName, number[]>> {
  const samples = new Map<VariantName, number[]>();
  const push = (name: VariantName, us: number) => samples.set(name, [...(samples.get(name) ?? []), us]);
  for (let i = 0; i < options.coldIterations; i++) {
    const plain = new DataSource({
      ...ctx.dataSource.options,
      entities: domainEntities,
      synchronize: false,
      dropSchema: false,
      migrationsRun: false,
      logging: false,
    } as DataSourceOptions);
    let env: GuardedEnv | null = null;
    try {
      await plain.initialize();
      if ("module" in guardedSide) {
        try {
          env = await guardedSide.module.openGuarded(plain);
        } catch {
          env = null; // e.g. --sqlite-memory: reported by the steady-state row
        }
      }
      const fresh: Ctx = { ...ctx, dataSource: plain };
      const calls: Array<{ name: VariantName; fn: () => unknown }> = [{ name: "typeorm", fn: HAND_WRITTEN[id](fresh).build }];
      const build = api ? unguardedBuilder(api, plain, ctx.counts, id) : null;
      if (build) calls.push({ name: "querylib", fn: build });
      const simulate = env && api && "module" in guardedSide ? guardedBuilder(api, guardedSide.module, env, ctx.counts, id) : null;
      if (simulate) calls.push({ name: "querylib-guarded", fn: simulate });
      const k = i % calls.length;
      for (const call of [...calls.slice(k), ...calls.slice(0, k)]) {
        const t0 = process.hrtime.bigint();
        try {
          await call.fn();
        } catch {
          continue; // the steady-state run reports the error
        }
        push(call.name, Number(process.hrtime.bigint() - t0) / 1000);
      }
    } finally {
      await env?.close();
      if (plain.isInitialized) await plain.destroy();
    }
  }
  return samples;
}

// ---------------------------------------------------------------------------------------------
// Growth curves: all points of an axis are measured interleaved (round by round), so a
// transient disturbance does not bend one point of the curve.

async function runGrowth(ctx: Ctx, api: QueryLibApi | null, options: Options): Promise<GrowthSeries[]> {
  const series: GrowthSeries[] = [];
  const axes: Array<{
    axis: GrowthSeries["axis"];
    xs: number[];
    entity: EntityTarget<ObjectLiteral>;
    builder: (x: number) => () => { getQueryAndParameters(): unknown; getManyAndCount(): Promise<[unknown[], number]> };
    shape: (x: number) => unknown;
  }> = [
    { axis: "conditions", xs: CONDITION_COUNTS, entity: Customer, builder: (n) => conditionsBuilder(ctx, n), shape: conditionsFilter },
    { axis: "pageSize", xs: PAGE_SIZES, entity: Customer, builder: (s) => pageSizeBuilder(ctx, s), shape: pageSizeFilter },
    { axis: "depth", xs: DEPTHS, entity: OrderItem, builder: (d) => depthBuilder(ctx, d), shape: depthFilter },
  ];
  for (const { axis, xs, entity, builder, shape } of axes) {
    const buildTasks: LoopTask[] = [];
    const execTasks: TimedTask[] = [];
    for (const x of xs) {
      const build = builder(x);
      buildTasks.push({ name: `typeorm@${x}`, fn: () => build().getQueryAndParameters() });
      execTasks.push({ name: `typeorm@${x}`, run: () => build().getManyAndCount() });
      if (!api) continue;
      const run = growthRunner(api, ctx.dataSource, entity, shape(x));
      try {
        const expected = await build().getManyAndCount();
        const got = (await run()) as QueryLibResult;
        const same =
          got.totalCount === expected[1] &&
          got.data.length === expected[0].length &&
          got.data.every((row, i) => String(row.id) === String((expected[0][i] as { id: unknown }).id));
        if (same) execTasks.push({ name: `querylib@${x}`, run });
        else log(`  ${ctx.dialect} growth ${axis}=${x}: QueryLib MISMATCH (total ${got.totalCount} vs ${expected[1]}); point left out`);
      } catch (error) {
        log(`  ${ctx.dialect} growth ${axis}=${x}: QueryLib ERROR ${firstLine(error)}; point left out`);
      }
      const qb = growthBuilder(api, ctx.dataSource, entity, shape(x));
      if (qb) {
        try {
          qb();
          buildTasks.push({ name: `querylib@${x}`, fn: qb });
        } catch {
          // reported through the exec check above
        }
      }
    }
    const buildSamples = await interleavedLoops(buildTasks, options.growthBuildLoop);
    const execSamples = await interleaved(execTasks, options.growthRounds);
    for (const [metric, samples] of [
      ["build", buildSamples],
      ["exec", execSamples],
    ] as const) {
      for (const variant of ["typeorm", "querylib"] as VariantName[]) {
        const points = xs
          .filter((x) => samples.has(`${variant}@${x}`))
          .map((x) => {
            const s = stats(samples.get(`${variant}@${x}`)!);
            return { x, p50: s.p50, p99: s.p99, n: s.n };
          });
        if (points.length) series.push({ axis, metric, dialect: ctx.dialect, variant, points });
      }
    }
    const line = series
      .filter((s) => s.axis === axis && s.dialect === ctx.dialect)
      .map((s) => `${s.variant} ${s.metric} ${s.points.map((p) => (s.metric === "build" ? p.p50.toFixed(0) : (p.p50 / 1000).toFixed(2))).join("/")}${s.metric === "build" ? " µs" : " ms"}`)
      .join("; ");
    log(`  ${ctx.dialect} growth ${axis}: ${line}`);
  }
  return series;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const started = performance.now();
  const cpus = os.cpus();
  log(`QueryLib bench${options.quick ? " (quick)" : ""}: ${options.customers} customers, dialects ${options.dialects.join(", ")}, workloads ${options.only.join(", ")}`);
  const loaded = await loadQueryLib();
  log(`  ${loaded.note}${loaded.detail ? ` — ${loaded.detail}` : ""}`);
  const guardedModule = await loadGuarded(loaded.api);
  log(`  guarded: ${guardedModule.note}`);

  const report: BenchReport = {
    meta: {
      date: new Date().toISOString(),
      quick: options.quick,
      node: process.version,
      cpus: cpus.length,
      cpuModel: cpus[0]?.model.trim() ?? "unknown",
      platform: `${os.type()} ${os.release()} ${os.arch()}`,
      totalMemGb: Math.round(os.totalmem() / 1024 ** 3),
      versions: {
        typeorm: versionOf("typeorm"),
        "nestjs-paginate": versionOf("nestjs-paginate"),
        "better-sqlite3": versionOf("better-sqlite3"),
        pg: versionOf("pg"),
      },
      querylib: loaded.note + (loaded.detail ? ` (${loaded.detail})` : ""),
      guarded: guardedModule.module
        ? `applyPolicy over bench/guarded-domain.ts (own DataSource per dialect, synchronize: false; SQLite: on the base DataSource's connection); tenant stand-in tier = '${TENANT.tier}' (W5: status <> '${TENANT.hiddenOrderStatus}'); Partial(name), Email(contact.email), Hash(externalId), Tokenize(address.street, in-memory vault)`
        : `skipped — ${guardedModule.note}`,
      options: {
        customers: options.customers,
        seed: options.seed,
        only: options.only,
        rounds: options.rounds,
        buildLoop: options.buildLoop,
        buildRetries: options.buildRetries,
        growthRounds: options.growthRounds,
        growthBuildLoop: options.growthBuildLoop,
      },
      dialects: [],
      skippedDialects: [],
    },
    workloads: [],
    build: [],
    buildPhases,
    growth: [],
    transforms: [],
    vaults: [],
  };

  for (const dialect of options.dialects) {
    let db: BenchDatabase;
    try {
      const spec = { customers: options.customers, seed: options.seed };
      db = await openBenchDatabase(dialect, spec, log, options.sqliteMemory);
    } catch (error) {
      log(`  ${dialect}: NOT RUN — ${firstLine(error)}`);
      report.meta.skippedDialects.push({ dialect, reason: firstLine(error) });
      continue;
    }
    report.meta.dialects.push({
      dialect,
      serverVersion: db.serverVersion,
      location: db.location,
      counts: db.counts,
      seededNow: db.seededNow,
      setupMs: db.seedMs,
    });
    log(`  ${dialect}: ${db.serverVersion}, ${db.seededNow ? "seeded" : "reused seed"} (${db.counts.customer} customers, ${db.counts.customer_order} orders, ${db.counts.order_item} items)`);
    const ctx: Ctx = { dialect, dataSource: db.dataSource, db, counts: db.counts };
    let guardedSide: GuardedSide = { skipped: guardedModule.note };
    if (guardedModule.module) {
      try {
        guardedSide = { module: guardedModule.module, env: await guardedModule.module.openGuarded(db.dataSource) };
      } catch (error) {
        guardedSide = { skipped: `guarded DataSource not opened: ${firstLine(error)}` };
        log(`  ${dialect}: guarded skipped — ${firstLine(error)}`);
      }
    }
    try {
      for (const id of options.only) {
        report.workloads.push(await runWorkload(ctx, id, loaded.api, loaded.note, guardedSide, options));
        (globalThis as { gc?: () => void }).gc?.();
      }
      if (options.build) report.build.push(...(await runBuild(ctx, loaded.api, loaded.note, guardedSide, options)));
      if (options.growth) report.growth.push(...(await runGrowth(ctx, loaded.api, options)));
    } finally {
      if ("env" in guardedSide) {
        const vault = guardedSide.env.vault;
        log(`  ${dialect}: guarded in-memory vault made ${vault.calls} tokenize calls`);
        await guardedSide.env.close();
      }
      await db.close();
    }
  }
  if (options.transforms) report.transforms = await runTransforms(options.transformLoop, log);
  if (options.vaults) {
    report.vaults = await runVaults({ pages: options.vaultPages, valuesPerPage: 1000, postgres: options.dialects.includes("postgres") }, log);
  }
  report.meta.durationMs = Math.round(performance.now() - started);

  // A full run publishes BENCHMARKS.md at the repo root with its figures (JSON) and chart in
  // docs/benchmarks/ (committed); a --quick spot check (or a partial run with --only /
  // --dialects) writes its files under bench/out/ (ignored) with a ".quick" / ".partial"
  // suffix, so it never overwrites the published figures.
  const partial = options.only.length !== WORKLOAD_IDS.length || !ALL_DIALECTS.every((d) => options.dialects.includes(d));
  const suffix = options.quick ? ".quick" : partial ? ".partial" : "";
  const [dir, dirRel] = suffix ? [OUT_DIR, "bench/out/"] : [PUBLISHED_DIR, "docs/benchmarks/"];
  const written: string[] = [];
  if (options.write) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}bench${suffix}.json`, JSON.stringify(report, null, 2) + "\n");
    written.push(`${dirRel}bench${suffix}.json`);
    let chartRel: string | null = null;
    if (report.growth.some((s) => s.points.length > 0)) {
      writeFileSync(`${dir}growth${suffix}.png`, growthChart(report.growth));
      chartRel = `${dirRel}growth${suffix}.png`;
      written.push(chartRel);
    }
    if (suffix) {
      writeFileSync(`${OUT_DIR}BENCHMARKS${suffix}.md`, renderMarkdown(report, chartRel ? `growth${suffix}.png` : null));
      written.push(`bench/out/BENCHMARKS${suffix}.md`);
    } else {
      writeFileSync(`${REPO_ROOT}BENCHMARKS.md`, renderMarkdown(report, chartRel) + keptSections(`${REPO_ROOT}BENCHMARKS.md`));
      written.push("BENCHMARKS.md");
    }
  }
  process.stdout.write(renderConsole(report) + "\n");
  log(`done in ${(report.meta.durationMs! / 1000).toFixed(1)} s${written.length ? `; wrote ${written.join(", ")}` : ""}`);
  const invalid = report.workloads.filter((w) => !w.valid);
  if (invalid.length) log(`INVALID workloads: ${invalid.map((w) => `${w.dialect} ${w.id}`).join(", ")}`);
}

main().catch((error) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
