// Result types and rendering: the Markdown tables (stdout and BENCHMARKS.md) and bench.json.
import type { RowCounts } from "./db.js";
import type { Stats } from "./measure.js";

export type VariantName = "raw" | "typeorm" | "querylib" | "paginate" | "raw-tenant" | "typeorm-tenant" | "querylib-guarded" | "querylib-cached" | "querylib-guarded-cached" | "querylib-guarded-new-shape";
/** Table order: the unscoped group, then the tenant-scoped group (guarded QueryLib and its baselines). */
export const VARIANTS: VariantName[] = ["raw", "typeorm", "querylib", "paginate", "raw-tenant", "typeorm-tenant", "querylib-guarded"];
export const VARIANT_LABEL: Record<VariantName, string> = {
  raw: "raw driver",
  typeorm: "TypeORM builder",
  querylib: "QueryLib",
  paginate: "nestjs-paginate",
  "raw-tenant": "raw driver + tenant",
  "typeorm-tenant": "TypeORM builder + tenant",
  "querylib-guarded": "QueryLib guarded",
  "querylib-cached": "QueryLib, cached plan",
  "querylib-guarded-cached": "QueryLib guarded, cached plan",
  "querylib-guarded-new-shape": "QueryLib guarded, new shape",
};
/** Variants compared with (and ratioed to) the tenant-scoped baselines. */
export const TENANT_GROUP: ReadonlySet<VariantName> = new Set(["raw-tenant", "typeorm-tenant", "querylib-guarded"]);

export type VariantStatus = "ok" | "n/a" | "skipped" | "error" | "mismatch";

export interface VariantResult {
  variant: VariantName;
  status: VariantStatus;
  /** Why it is n/a, skipped, failed or mismatched. */
  reason?: string;
  stats?: Stats;
  /** Median ÷ median of the hand-written TypeORM builder / of the raw driver. */
  ratioTypeorm?: number;
  ratioRaw?: number;
  rows?: number;
  total?: number | null;
  /** The data query this variant sends (TypeORM: its builder's SQL; QueryLib: its queryString). */
  sql?: string;
}

export interface WorkloadResult {
  dialect: string;
  id: string;
  title: string;
  /** False when some variant returned other rows than the raw driver. */
  valid: boolean;
  rounds: number;
  variants: VariantResult[];
  notes: string[];
}

export interface BuildResult {
  dialect: string;
  id: string;
  variant: VariantName;
  /** Steady state: repeated calls on a warm DataSource/engine (QueryLib: plan-cache misses, or hits for the cached variants). */
  stats?: Stats;
  ratioTypeorm?: number;
  /** Cold: the first call on a fresh DataSource (and, guarded, a fresh engine), one sample per fresh instance. */
  cold?: Stats;
  status: VariantStatus;
  reason?: string;
  /** What the request stream does to QueryLib's caches (the table's "cached plan" column). */
  cache?: string;
}

/** One workload's build-only phase: the calibration work's median per attempt (µs), and the attempt kept. */
export interface BuildPhase {
  dialect: string;
  id: string;
  attempts: number[];
  keptCalibrationUs: number;
}

export interface TransformResult {
  strategy: string;
  /** What is called, e.g. `maskPartial(value, options)`. */
  call: string;
  values: number;
  passes: number;
  /** Median over passes of values per second; min and max pass. */
  perSecond: number;
  minPerSecond: number;
  maxPerSecond: number;
  /** ns per value at the median. */
  nsPerValue: number;
  target?: number;
  status: VariantStatus;
  reason?: string;
}

export interface VaultResult {
  vault: string;
  backend: string;
  /** "new": every value of the page never tokenized before; "existing": the same page again. */
  kind: "new" | "existing";
  pages: number;
  valuesPerPage: number;
  /** Round trips counted by the vault itself (`roundTrips`) per page; null where it keeps no count. */
  roundTripsPerPage: number | null;
  /** Per page, in µs. */
  stats?: Stats;
  status: VariantStatus;
  reason?: string;
  note?: string;
}

export interface GrowthSeries {
  axis: "conditions" | "pageSize" | "depth";
  metric: "build" | "exec";
  dialect: string;
  variant: VariantName;
  points: Array<{ x: number; p50: number; p99: number; n: number }>;
}

export interface DialectInfo {
  dialect: string;
  serverVersion: string;
  location: string;
  counts: RowCounts;
  seededNow: boolean;
  setupMs: number;
}

export interface BenchReport {
  meta: {
    date: string;
    quick: boolean;
    node: string;
    cpus: number;
    cpuModel: string;
    platform: string;
    totalMemGb: number;
    versions: Record<string, string>;
    querylib: string;
    /** How the guarded variant was set up, or why it is skipped. */
    guarded?: string;
    options: Record<string, unknown>;
    dialects: DialectInfo[];
    skippedDialects: Array<{ dialect: string; reason: string }>;
    durationMs?: number;
  };
  workloads: WorkloadResult[];
  build: BuildResult[];
  /** Absent in reports written before the calibration existed. */
  buildPhases?: BuildPhase[];
  growth: GrowthSeries[];
  transforms: TransformResult[];
  vaults: VaultResult[];
}

// ---------------------------------------------------------------------------------------------

const ms = (us: number) => (us / 1000).toFixed(3);
const us = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
const ratio = (r: number | undefined) => (r === undefined || !Number.isFinite(r) ? "" : `${r.toFixed(2)}×`);

function statusCell(v: VariantResult): string {
  switch (v.status) {
    case "n/a":
      return `n/a — ${v.reason}`;
    case "skipped":
      return `skipped — ${v.reason}`;
    case "error":
      return `ERROR — ${v.reason}`;
    case "mismatch":
      return `MISMATCH — ${v.reason}`;
    default:
      return "";
  }
}

export function endToEndTables(report: BenchReport): string {
  const out: string[] = [];
  for (const info of report.meta.dialects) {
    const rows = report.workloads.filter((w) => w.dialect === info.dialect);
    if (rows.length === 0) continue;
    out.push(`### End to end — ${info.dialect} (${info.serverVersion})`, "");
    out.push("| Workload | Variant | median ms | p99 ms | × TypeORM | × raw | rows / total |");
    out.push("|---|---|--:|--:|--:|--:|--:|");
    for (const w of rows) {
      const label = `**${w.id}**${w.valid ? "" : " ⚠ INVALID"}`;
      w.variants.forEach((v, i) => {
        const head = i === 0 ? label : "";
        if (v.status === "ok" && v.stats) {
          out.push(
            `| ${head} | ${VARIANT_LABEL[v.variant]} | ${ms(v.stats.p50)} | ${ms(v.stats.p99)} | ${ratio(v.ratioTypeorm)} | ${ratio(v.ratioRaw)} | ${v.rows ?? ""} / ${v.total ?? "–"} |`,
          );
        } else {
          out.push(`| ${head} | ${VARIANT_LABEL[v.variant]} | ${statusCell(v)} | | | | |`);
        }
      });
    }
    out.push("");
  }
  return out.join("\n");
}

/**
 * Compact view: median ratio to the hand-written builder, per workload × dialect × variant. The
 * guarded variant is ratioed to the tenant-scoped builder and raw driver (same extra predicate).
 */
export function ratioSummary(report: BenchReport): string {
  const dialects = report.meta.dialects.map((d) => d.dialect);
  const columns: Array<{ variant: VariantName; label: string; ratio: (v: VariantResult) => number | undefined }> = [
    { variant: "raw", label: "raw driver", ratio: (v) => v.ratioTypeorm },
    { variant: "querylib", label: "QueryLib", ratio: (v) => v.ratioTypeorm },
    { variant: "paginate", label: "nestjs-paginate", ratio: (v) => v.ratioTypeorm },
    { variant: "querylib-guarded", label: "guarded ÷ TypeORM+tenant", ratio: (v) => v.ratioTypeorm },
    { variant: "querylib-guarded", label: "guarded ÷ raw+tenant", ratio: (v) => v.ratioRaw },
  ];
  const header = ["Workload"];
  for (const d of dialects) for (const c of columns) header.push(`${d} ${c.label}`);
  const out = [`| ${header.join(" | ")} |`, `|${header.map((_, i) => (i === 0 ? "---" : "--:")).join("|")}|`];
  const ids = [...new Set(report.workloads.map((w) => w.id))];
  for (const id of ids) {
    const cells = [id];
    for (const d of dialects) {
      const w = report.workloads.find((x) => x.dialect === d && x.id === id);
      for (const c of columns) {
        const v = w?.variants.find((x) => x.variant === c.variant);
        cells.push(v?.status === "ok" ? ratio(c.ratio(v)) : v?.status === "n/a" ? "n/a" : v ? "–" : "");
      }
    }
    out.push(`| ${cells.join(" | ")} |`);
  }
  return out.join("\n");
}

function phaseTable(report: BenchReport): string {
  const phases = report.buildPhases ?? [];
  if (phases.length === 0) return "_no build phases measured_";
  const fastest = Math.min(...phases.flatMap((p) => p.attempts));
  const rows = phases.map((p) => `| ${p.dialect} | ${p.id} | ${p.attempts.map((a) => a.toFixed(2)).join(" → ")} | ${p.keptCalibrationUs.toFixed(2)} | ${ratio(p.keptCalibrationUs / fastest)} |`);
  return ["| Dialect | Workload | calibration µs per attempt | kept µs | kept × fastest |", "|---|---|---|--:|--:|", ...rows].join("\n");
}

export function buildTable(report: BenchReport): string {
  if (report.build.length === 0) return "_no build-only measurements_";
  const out = [
    "| Dialect | Workload | Variant | cold p50 µs | cold p99 µs | steady p50 µs | steady p99 µs | steady × TypeORM build | cached plan | samples (cold / steady) |",
    "|---|---|---|--:|--:|--:|--:|--:|---|--:|",
  ];
  for (const b of report.build) {
    const cold = b.cold ? [us(b.cold.p50), us(b.cold.p99)] : ["", ""];
    const cache = b.cache ?? "–";
    if (b.status === "ok" && b.stats) {
      out.push(
        `| ${b.dialect} | ${b.id} | ${VARIANT_LABEL[b.variant]} | ${cold[0]} | ${cold[1]} | ${us(b.stats.p50)} | ${us(b.stats.p99)} | ${ratio(b.ratioTypeorm)} | ${cache} | ${b.cold?.n ?? "–"} / ${b.stats.n} |`,
      );
    } else {
      out.push(`| ${b.dialect} | ${b.id} | ${VARIANT_LABEL[b.variant]} | ${b.status}: ${b.reason ?? ""} | | | | | | |`);
    }
  }
  return out.join("\n");
}

const perSecond = (v: number) => (v >= 1e6 ? `${(v / 1e6).toFixed(2)} M` : `${Math.round(v / 1000).toLocaleString("en-US")} k`);

export function transformTable(report: BenchReport): string {
  if (report.transforms.length === 0) return "_not measured_";
  const out = ["| Strategy | Call | values | passes | median values/s | slowest – fastest pass | ns/value | target | verdict |", "|---|---|--:|--:|--:|--:|--:|--:|---|"];
  for (const t of report.transforms) {
    if (t.status !== "ok") {
      out.push(`| ${t.strategy} | \`${t.call}\` | | | ${t.status}: ${t.reason ?? ""} | | | | |`);
      continue;
    }
    const verdict = t.target === undefined ? "–" : t.perSecond >= t.target ? `met (${(t.perSecond / t.target).toFixed(2)}× the target)` : `**missed** (${((1 - t.perSecond / t.target) * 100).toFixed(0)}% short)`;
    out.push(
      `| ${t.strategy} | \`${t.call}\` | ${t.values.toLocaleString("en-US")} | ${t.passes} | ${perSecond(t.perSecond)} | ${perSecond(t.minPerSecond)} – ${perSecond(t.maxPerSecond)} | ${t.nsPerValue.toFixed(0)} | ${t.target === undefined ? "–" : `≥ ${perSecond(t.target)}`} | ${verdict} |`,
    );
  }
  return out.join("\n");
}

export function vaultTable(report: BenchReport): string {
  if (report.vaults.length === 0) return "_not measured_";
  const out = ["| Vault | Backend | page | pages | values/page | round trips/page | p50 ms/page | p99 ms/page | values/s at p50 |", "|---|---|---|--:|--:|--:|--:|--:|--:|"];
  for (const v of report.vaults) {
    if (v.status !== "ok" || !v.stats) {
      out.push(`| ${v.vault} | ${v.backend} | ${v.kind} | ${v.status}: ${v.reason ?? ""} | | | | | |`);
      continue;
    }
    out.push(
      `| ${v.vault} | ${v.backend} | ${v.kind === "new" ? "new values" : "already tokenized"} | ${v.pages} | ${v.valuesPerPage} | ${v.roundTripsPerPage === null ? "n/a" : v.roundTripsPerPage.toFixed(2)} | ${ms(v.stats.p50)} | ${ms(v.stats.p99)} | ${perSecond((v.valuesPerPage * 1e6) / v.stats.p50)} |`,
    );
  }
  return out.join("\n");
}

// ---------------------------------------------------------------------------------------------
// Targets of issue 8, checked against this run's figures

interface TargetRow {
  target: string;
  where: string;
  measured: string;
  verdict: string;
}

const pct = (r: number) => `${r >= 1 ? "+" : "−"}${Math.abs((r - 1) * 100).toFixed(0)}%`;

export function targetRows(report: BenchReport): TargetRow[] {
  const rows: TargetRow[] = [];
  const dialects = report.meta.dialects.map((d) => d.dialect);
  const buildIds = ["W1", "W2", "W3", "W4"];
  const build = (d: string, id: string, v: VariantName) => report.build.find((b) => b.dialect === d && b.id === id && b.variant === v && b.status === "ok");
  const ratioRow = (target: string, where: string, limit: number, items: Array<{ id: string; value: number | undefined }>, unit = "×") => {
    const present = items.filter((i): i is { id: string; value: number } => i.value !== undefined && Number.isFinite(i.value));
    if (present.length === 0) return rows.push({ target, where, measured: "not measured", verdict: "–" });
    const measured = present.map((i) => `${i.id} ${unit === "×" ? i.value.toFixed(2) + "×" : i.value.toFixed(1) + " " + unit}`).join(", ");
    const missed = present.filter((i) => i.value > limit);
    const worst = present.reduce((a, b) => (b.value > a.value ? b : a));
    const verdict = missed.length === 0
      ? `met (worst ${worst.id}: ${unit === "×" ? worst.value.toFixed(2) + "×" : worst.value.toFixed(1) + " " + unit})`
      : `**missed** on ${missed.map((m) => m.id).join(", ")} (worst ${worst.id}: ${unit === "×" ? `${worst.value.toFixed(2)}× vs ${limit}×, ${pct(worst.value / limit)}` : `${worst.value.toFixed(1)} ${unit} vs ${limit} ${unit}, ${(worst.value - limit).toFixed(1)} ${unit} over`})`;
    rows.push({ target, where, measured, verdict });
  };
  for (const d of dialects) {
    ratioRow("build-only, unguarded ≤ 1.5× the TypeORM build (p50)", d, 1.5, buildIds.map((id) => ({ id, value: build(d, id, "querylib")?.ratioTypeorm })));
  }
  for (const d of dialects) {
    ratioRow("build-only with a cached plan ≤ 0.5× the TypeORM build", d, 0.5, buildIds.map((id) => ({ id, value: build(d, id, "querylib-cached")?.ratioTypeorm })));
  }
  const guardedAdds = (d: string, guarded: VariantName, plain: VariantName) => buildIds.map((id) => {
    const g = build(d, id, guarded)?.stats?.p50;
    const u = build(d, id, plain)?.stats?.p50;
    return { id, value: g !== undefined && u !== undefined ? g - u : undefined };
  });
  for (const d of dialects) {
    ratioRow("build-only, guarded adds ≤ 15 µs (guarded p50 − unguarded p50, plan-cache misses; the sanitized shape reused)", d, 15, guardedAdds(d, "querylib-guarded", "querylib"), "µs");
    ratioRow("build-only, guarded adds ≤ 15 µs (a shape never seen: sanitized in full)", d, 15, guardedAdds(d, "querylib-guarded-new-shape", "querylib"), "µs");
    ratioRow("build-only, guarded adds ≤ 15 µs (cached plans)", d, 15, guardedAdds(d, "querylib-guarded-cached", "querylib-cached"), "µs");
  }
  const e2e = (d: string, id: string, v: VariantName) => report.workloads.find((w) => w.dialect === d && w.id === id)?.variants.find((x) => x.variant === v && x.status === "ok");
  const ids = [...new Set(report.workloads.map((w) => w.id))];
  for (const d of dialects) {
    ratioRow("end to end, guarded ≤ 1.10× the hand-written builder (+ tenant)", d, 1.1, ids.map((id) => ({ id, value: e2e(d, id, "querylib-guarded")?.ratioTypeorm })));
  }
  for (const d of dialects) {
    // Faster than nestjs-paginate where it can express the workload: unguarded QueryLib against it
    // directly (same rows), guarded by ratio (its rows are tenant-scoped, paginate's are not).
    const items = ids
      .map((id) => ({ id, p: e2e(d, id, "paginate"), q: e2e(d, id, "querylib"), g: e2e(d, id, "querylib-guarded") }))
      .filter((i) => i.p?.stats);
    if (items.length === 0) continue;
    const slowerQ = items.filter((i) => i.q?.stats && i.q.stats.p50 >= i.p!.stats!.p50);
    const slowerG = items.filter((i) => i.g?.ratioTypeorm !== undefined && i.g.ratioTypeorm >= i.p!.ratioTypeorm!);
    rows.push({
      target: "end to end, faster than nestjs-paginate where it can express the workload",
      where: d,
      measured: items.map((i) => `${i.id} QueryLib ${i.q?.stats ? (i.q.stats.p50 / i.p!.stats!.p50).toFixed(2) + "×" : "–"}, guarded ${i.g?.ratioTypeorm !== undefined ? i.g.ratioTypeorm.toFixed(2) + "×" : "–"} vs paginate ${i.p!.ratioTypeorm!.toFixed(2)}×`).join("; "),
      verdict:
        slowerQ.length === 0 && slowerG.length === 0
          ? "met"
          : `**missed**: ${[
              slowerQ.length ? `QueryLib not faster on ${slowerQ.map((i) => `${i.id} (${(i.q!.stats!.p50 / i.p!.stats!.p50).toFixed(2)}× paginate's time)`).join(", ")}` : "",
              slowerG.length ? `guarded's ratio not below paginate's on ${slowerG.map((i) => `${i.id} (${i.g!.ratioTypeorm!.toFixed(2)}× vs ${i.p!.ratioTypeorm!.toFixed(2)}×)`).join(", ")}` : "",
            ]
              .filter(Boolean)
              .join("; ")}`,
    });
  }
  for (const t of report.transforms.filter((x) => x.target !== undefined)) {
    rows.push({
      target: `${t.strategy} ≥ ${perSecond(t.target!)} values/s`,
      where: "in process",
      measured: t.status === "ok" ? `${perSecond(t.perSecond)} values/s` : t.status,
      verdict: t.status !== "ok" ? "–" : t.perSecond >= t.target! ? `met (${(t.perSecond / t.target!).toFixed(2)}×)` : `**missed** (${((1 - t.perSecond / t.target!) * 100).toFixed(0)}% short)`,
    });
  }
  const vaults = report.vaults.filter((v) => v.status === "ok" && v.roundTripsPerPage !== null);
  if (vaults.length) {
    const over = vaults.filter((v) => v.roundTripsPerPage! > 1);
    rows.push({
      target: "Redis and relational vaults: one round trip per page per scope",
      where: [...new Set(vaults.map((v) => v.backend.split(" ")[0]))].join(", "),
      measured: vaults.map((v) => `${v.backend.split(" ")[0]} ${v.kind} ${v.roundTripsPerPage!.toFixed(2)}`).join(", "),
      verdict: over.length === 0 ? "met" : `**missed** on ${over.map((v) => `${v.backend.split(" ")[0]} ${v.kind} (${v.roundTripsPerPage!.toFixed(2)})`).join(", ")}`,
    });
  }
  return rows;
}

export function targetsTable(report: BenchReport): string {
  const rows = targetRows(report);
  if (rows.length === 0) return "_nothing to check_";
  return ["| Target | Where | Measured (medians) | Verdict |", "|---|---|---|---|", ...rows.map((r) => `| ${r.target} | ${r.where} | ${r.measured} | ${r.verdict} |`)].join("\n");
}

const AXIS_LABEL: Record<GrowthSeries["axis"], string> = {
  conditions: "conditions",
  pageSize: "page size",
  depth: "path depth",
};

export function growthTable(report: BenchReport, axis: GrowthSeries["axis"]): string {
  const series = report.growth.filter((s) => s.axis === axis && s.points.length > 0);
  if (series.length === 0) return "_not measured_";
  const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p.x)))].sort((a, b) => a - b);
  const out = [
    `| ${AXIS_LABEL[axis]} | ${series.map((s) => `${s.dialect} ${VARIANT_LABEL[s.variant]} ${s.metric === "build" ? "build µs" : "e2e ms"}`).join(" | ")} |`,
    `|--:|${series.map(() => "--:").join("|")}|`,
  ];
  for (const x of xs) {
    const cells = series.map((s) => {
      const p = s.points.find((q) => q.x === x);
      if (!p) return "";
      return s.metric === "build" ? us(p.p50) : ms(p.p50);
    });
    out.push(`| ${x} | ${cells.join(" | ")} |`);
  }
  return out.join("\n");
}

export function notesOf(report: BenchReport): string[] {
  const notes = new Set<string>();
  for (const w of report.workloads) for (const n of w.notes) notes.add(n);
  return [...notes];
}

function machineLines(report: BenchReport): string[] {
  const m = report.meta;
  const lines = [
    `- Date: ${m.date}${m.quick ? " — **quick run** (`--quick`: small data, few rounds; for spot checks only)" : ""}`,
    `- Machine: ${m.cpus} cores, ${m.cpuModel}, ${m.totalMemGb} GB RAM, ${m.platform}`,
    `- Node ${m.node}; ${Object.entries(m.versions).map(([k, v]) => `${k} ${v}`).join(", ")}`,
    `- QueryLib: ${m.querylib}`,
  ];
  if (m.guarded) lines.push(`- Guarded QueryLib: ${m.guarded}`);
  for (const d of m.dialects) {
    const c = d.counts;
    lines.push(
      `- ${d.dialect}: ${d.serverVersion} at \`${d.location}\` — ${c.customer.toLocaleString("en-US")} customers, ${c.contact_info.toLocaleString("en-US")} contacts, ${c.customer_order.toLocaleString("en-US")} orders, ${c.order_item.toLocaleString("en-US")} items, ${c.product} products (${d.seededNow ? `seeded this run in ${(d.setupMs / 1000).toFixed(1)} s` : "reused existing seed"})`,
    );
  }
  for (const s of m.skippedDialects) lines.push(`- ${s.dialect}: **not run** — ${s.reason}`);
  const o = m.options as {
    rounds?: { warmupRounds: number; minRounds: number; maxRounds: number; budgetMs: number };
    buildLoop?: { warmup: number; iterations: number; passes: number; budgetMs: number };
    buildRetries?: number;
  };
  if (o.rounds) {
    lines.push(
      `- Method: one process; per workload ${o.rounds.warmupRounds} warm-up rounds, then at least ${o.rounds.minRounds} timed rounds (≤ ${o.rounds.maxRounds}, ~${o.rounds.budgetMs} ms budget), each round runs every variant once in rotated order; median and p99 (nearest rank) of per-call wall time; ratios are median ÷ median.`,
    );
  }
  if (o.buildLoop) {
    lines.push(
      `- Build only: per workload ${o.buildLoop.warmup} warm-up calls per variant, then up to ${o.buildLoop.iterations} timed calls per variant in ${o.buildLoop.passes} passes (~${o.buildLoop.budgetMs} ms budget for all variants), each pass a tight loop of every variant in rotated order. Budgets are long on purpose: this machine has slow spells (seconds to minutes) in which everything runs ~1.5× slower, and a spell spread over more passes moves the medians less; a fixed calibration work runs among the variants, and a phase measured during a spell is measured again (up to ${o.buildRetries ?? 0} times; see Machine speed under Build only).`,
    );
  }
  return lines;
}

const READING = [
  "**raw driver** runs the hand-written builder's own SQL (TypeORM's text, taken from `getQueryAndParameters()`) as prepared statements: better-sqlite3 `prepare().all()`, pg named queries on two dedicated connections (page and COUNT concurrently) with `plan_cache_mode = force_custom_plan`, so that PostgreSQL's switch to a generic plan after five executions does not make the floor slower than TypeORM's unnamed statements.",
  "**TypeORM builder** is what a competent user writes: `getManyAndCount()` (page, then count, one after the other), `getRawMany()` + a COUNT over the grouped subquery for W5, `offset/limit` where the join is to-one.",
  "QueryLib generates its own SQL, so it can be faster than the raw driver running TypeORM's SQL (e.g. it runs the page and the COUNT concurrently on PostgreSQL, and `lower(x) LIKE lower($1)` can plan differently from `ILIKE`); read `× raw` as distance from the hand-written SQL's floor. The SQL of each side is in `bench.json` (`variants[].sql`).",
  "**QueryLib guarded** is `applyPolicy(repository, context).toListAsync(json)` over bench-only decorated classes that map the same tables (`bench/guarded-domain.ts`, own DataSource, `synchronize: false`; on SQLite it runs on the base DataSource's connection, as one application DataSource holding every entity would: a second connection has a page cache of its own, which the interleaved rounds leave cold — W1's guarded queries took 1.35 ms there against 0.99 ms on the shared connection when measured): a forced tenant predicate (`QpForceWhere` on `tier`, the tenant stand-in, context value `Gold`; W5, rooted at Order, which has no tenant column, gets a forced `status <> 'Pending'` on the order instead), two masks (`Email` on contact.email, `Partial` on name), one `Hash` (externalId, HMAC-SHA256) and one `Tokenize` (address.street, in-memory vault); the context is prepared once. Its rows are the tenant's, so it is compared with **raw driver + tenant** and **TypeORM builder + tenant** — the same hand-written builder and its SQL with the same extra predicate (in every set for W6) — and its `× TypeORM` / `× raw` are ratios to those two. Masked values differ by design: the check compares ids (in order) and totals only. Masks only touch what a workload returns: W4 (id, name, contact.email) shows Partial + Email; the default projection of W1–W3, W6, W7 shows Partial, Hash and Tokenize; W5 returns group keys and aggregates only, and gets the engine's group floor (`HAVING COUNT(*) >= 5`).",
  "Every variant is checked before timing: the ids of the page (in order) and the total must equal the raw driver's (the tenant-scoped raw driver's for the tenant group); a variant that differs is reported as MISMATCH, not timed, and its workload is marked ⚠ INVALID.",
  "Medians are robust to the occasional GC pause or noisy neighbour; p99 is not, and on a shared 2-core machine it mostly measures the machine.",
];

export function renderMarkdown(report: BenchReport, chartPath: string | null): string {
  const out: string[] = [];
  out.push("# QueryLib benchmarks", "");
  out.push(
    "Generated by `npm run bench" + (report.meta.quick ? " -- --quick" : "") + "` (code in `bench/`, figures also in `" + (report.meta.quick ? "bench/out/bench.quick.json" : "docs/benchmarks/bench.json") + "`). " +
      "Each workload is run four ways — the raw driver with a prepared statement of the same SQL (the floor), a hand-written TypeORM `SelectQueryBuilder`, QueryLib unguarded (`toListAsync` with the workload's JSON) and guarded (`applyPolicy(…).toListAsync`, against the same builder and raw SQL with the same tenant predicate), and nestjs-paginate's `paginate()` where it can express the query — interleaved in one process (all seven variants in every round). Before timing, every variant's rows (ids in order) and total are compared with the raw driver's.",
    "",
  );
  out.push("## Machine and data", "", ...machineLines(report), "");
  out.push("## Targets (issue 8)", "", "Checked against this run's medians; a miss says by how much.", "", targetsTable(report), "");
  out.push("## Reading the figures", "", ...READING.map((line) => `- ${line}`), "");
  out.push("## Workloads", "");
  const seen = new Set<string>();
  for (const w of report.workloads) {
    if (seen.has(w.id)) continue;
    seen.add(w.id);
    out.push(`- **${w.id}** — ${w.title}`);
  }
  out.push("");
  out.push("## End to end", "", endToEndTables(report));
  out.push("### Median ratio to the hand-written TypeORM builder", "", ratioSummary(report), "");
  const notes = notesOf(report);
  if (notes.length) out.push("Notes:", "", ...notes.map((n) => `- ${n}`), "");
  out.push("## Build only (no execution)", "");
  out.push(
    "JSON in, SQL and parameters out. TypeORM: builder construction + `getQueryAndParameters()` of the data query. nestjs-paginate: `paginate()` against a builder whose execution methods only compile their SQL. QueryLib: `toStatements(repo, json)` — the statements `toListAsync` would run — with a new page number on every call, so its plan cache misses (parse, plan, compile; TypeORM's SQL text for the same fragments is reused). QueryLib guarded: `applyPolicy(repo, context).toStatementsAsync(json)` the same way — parse, sanitize under the policy (forced tenant predicate, masks noted), plan, compile, page suffix; nothing runs, no audit event. A guarded request that differs from an earlier one only in values and page (the miss rows: a new page each call) reuses that request's sanitized shape — the policy's decisions, trace and transforms — and binds its own values after checking them; the **new shape** rows change the condition group's sort on every call as well, so every request is a shape never seen and is sanitized in full. JSON is parsed on every call, like a request body.",
    "",
    "**Cached plan** rows send the same request on every call: the plan cache (keyed by the request's exact content, the entity's DataSource model and, guarded, the caller's decision table and context values) returns the prepared statements without parsing, sanitizing, planning or building a TypeORM builder. A request that differs in any value (another page, another search text) is a miss and costs what the miss rows show. **Cold** is the first call on a freshly initialized DataSource (guarded: plus a fresh engine, vault and prepared context), one sample per fresh instance: QueryLib builds its metadata model for that DataSource, the engine its decision table; the process itself is warm (JIT, decorator registry, compiled class policies).",
    "",
    buildTable(report),
    "",
    "**Machine speed.** Each build phase (one workload on one dialect, all its variants) also times a fixed piece of CPU work (`calibrationWork` in `bench/measure.ts`) among its variants. This machine has slow spells in which everything runs ~1.5× slower for seconds to minutes; ratios survive them, absolute figures such as \"guarded adds ≤ 15 µs\" do not. A phase whose calibration ran more than 1.15× the fastest seen so far in the run is measured again (at most twice; not in `--quick`), and the attempt with the fastest calibration is kept. Every attempt is listed; `kept ×` is the kept attempt against the fastest calibration of the whole run.",
    "",
    phaseTable(report),
    "",
  );
  out.push("## Transform throughput", "");
  out.push(
    "The transform functions of `lib/transform/strategies.ts` and the in-memory vault called directly (no query), over generated values: person names (about one in eight with non-ASCII letters, which take the grapheme-segmentation path of `characters()`; the ASCII-only and non-ASCII-only rows show the two paths apart — the seeded domain has about half its customer names non-ASCII), ASCII e-mail addresses, phone numbers, free text of 5–80 characters for Truncate (to 24 + \"...\", one in eight with a non-ASCII word). Each strategy runs a warm-up (20,000 values) and then several timed passes over all values; the median pass gives values per second. Tokenize is `QpInMemoryTokenVault.tokenize(scope, page)` on pages of 1,000 distinct values, new values (first pass of a scope) and already tokenized (second pass).",
    "",
    transformTable(report),
    "",
  );
  out.push("## Token vaults", "");
  out.push(
    "Pages of 1,000 distinct values of one scope: `tokenize(scope, values)` on new values (never seen) and on the same pages again (already tokenized). Round trips are the vault's own `roundTrips` counter per page. Redis: `QpRedisTokenVault` on an ioredis client (one pipeline of `SET key token NX GET`), a unique key prefix per run, every key deleted afterwards. Relational: `QpTypeOrmTokenVault` (one `INSERT … ON CONFLICT DO UPDATE … RETURNING`) on a temporary SQLite file (deleted afterwards) and on PostgreSQL `querylib_bench` (never synchronized: when `querylib_token` is missing it is created with the migration of docs/OPERATIONS.md for the run and dropped afterwards, otherwise only this run's rows are deleted). In-memory: the same pages for reference (no round trip).",
    "",
    vaultTable(report),
    "",
  );
  out.push("## Growth", "");
  out.push(
    "Hand-written TypeORM and QueryLib (when loadable): build cost (QueryLib: `toStatements` with a new request each call, a plan-cache miss) and end-to-end cost (page 1 with total; QueryLib repeats the same request, so its plan is cached) against the number of ANDed conditions on Customer (page of 50), against page size (active customers by id), and against path depth (one In condition on an OrderItem path of 1–4 segments through reference navigations — `quantity`, `order.status`, `order.customer.tier`, `order.customer.contact.city` — each keeping about a fifth of the items).",
    "",
  );
  out.push("### Conditions 1 → 50", "", growthTable(report, "conditions"), "");
  out.push("### Page size 10 → 1,000", "", growthTable(report, "pageSize"), "");
  out.push("### Path depth 1 → 4", "", growthTable(report, "depth"), "");
  if (chartPath) out.push(`![Growth curves](${chartPath})`, "");
  return out.join("\n");
}

/** The stdout form: same tables, shorter preamble. */
export function renderConsole(report: BenchReport): string {
  const out: string[] = [];
  out.push(...machineLines(report), "");
  out.push("Targets:", "", targetsTable(report), "");
  out.push(endToEndTables(report));
  out.push("Median ratio to hand-written TypeORM:", "", ratioSummary(report), "");
  const notes = notesOf(report);
  if (notes.length) out.push(...notes.map((n) => `- ${n}`), "");
  out.push("Build only (QueryLib: a new request per call = plan-cache miss; cached plan = the same request per call):", "", buildTable(report), "");
  out.push("Transform throughput:", "", transformTable(report), "");
  out.push("Token vaults:", "", vaultTable(report), "");
  out.push("Growth — conditions:", "", growthTable(report, "conditions"), "");
  out.push("Growth — page size:", "", growthTable(report, "pageSize"), "");
  out.push("Growth — path depth:", "", growthTable(report, "depth"), "");
  return out.join("\n");
}
