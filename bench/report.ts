// Result types and rendering: the Markdown tables (stdout and BENCHMARKS.md) and bench.json.
import type { RowCounts } from "./db.js";
import type { Stats } from "./measure.js";

export type VariantName = "raw" | "typeorm" | "querylib" | "querylib-guarded" | "paginate";
export const VARIANTS: VariantName[] = ["raw", "typeorm", "querylib", "querylib-guarded", "paginate"];
export const VARIANT_LABEL: Record<VariantName, string> = {
  raw: "raw driver",
  typeorm: "TypeORM builder",
  querylib: "QueryLib",
  "querylib-guarded": "QueryLib guarded",
  paginate: "nestjs-paginate",
};

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
  stats?: Stats;
  ratioTypeorm?: number;
  status: VariantStatus;
  reason?: string;
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
    options: Record<string, unknown>;
    dialects: DialectInfo[];
    skippedDialects: Array<{ dialect: string; reason: string }>;
    durationMs?: number;
  };
  workloads: WorkloadResult[];
  build: BuildResult[];
  growth: GrowthSeries[];
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

/** Compact view: median ratio to the hand-written builder, per workload × dialect × variant. */
export function ratioSummary(report: BenchReport): string {
  const dialects = report.meta.dialects.map((d) => d.dialect);
  const shown: VariantName[] = ["raw", "querylib", "querylib-guarded", "paginate"];
  const header = ["Workload"];
  for (const d of dialects) for (const v of shown) header.push(`${d} ${VARIANT_LABEL[v]}`);
  const out = [`| ${header.join(" | ")} |`, `|${header.map((_, i) => (i === 0 ? "---" : "--:")).join("|")}|`];
  const ids = [...new Set(report.workloads.map((w) => w.id))];
  for (const id of ids) {
    const cells = [id];
    for (const d of dialects) {
      const w = report.workloads.find((x) => x.dialect === d && x.id === id);
      for (const name of shown) {
        const v = w?.variants.find((x) => x.variant === name);
        cells.push(v?.status === "ok" ? ratio(v.ratioTypeorm) : v?.status === "n/a" ? "n/a" : v ? "–" : "");
      }
    }
    out.push(`| ${cells.join(" | ")} |`);
  }
  return out.join("\n");
}

export function buildTable(report: BenchReport): string {
  if (report.build.length === 0) return "_no build-only measurements_";
  const out = ["| Dialect | Workload | Variant | p50 µs | p99 µs | × TypeORM build | samples |", "|---|---|---|--:|--:|--:|--:|"];
  for (const b of report.build) {
    if (b.status === "ok" && b.stats) {
      out.push(`| ${b.dialect} | ${b.id} | ${VARIANT_LABEL[b.variant]} | ${us(b.stats.p50)} | ${us(b.stats.p99)} | ${ratio(b.ratioTypeorm)} | ${b.stats.n} |`);
    } else {
      out.push(`| ${b.dialect} | ${b.id} | ${VARIANT_LABEL[b.variant]} | ${b.status}: ${b.reason ?? ""} | | | |`);
    }
  }
  return out.join("\n");
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
  for (const d of m.dialects) {
    const c = d.counts;
    lines.push(
      `- ${d.dialect}: ${d.serverVersion} at \`${d.location}\` — ${c.customer.toLocaleString("en-US")} customers, ${c.contact_info.toLocaleString("en-US")} contacts, ${c.customer_order.toLocaleString("en-US")} orders, ${c.order_item.toLocaleString("en-US")} items, ${c.product} products (${d.seededNow ? `seeded this run in ${(d.setupMs / 1000).toFixed(1)} s` : "reused existing seed"})`,
    );
  }
  for (const s of m.skippedDialects) lines.push(`- ${s.dialect}: **not run** — ${s.reason}`);
  const o = m.options as { rounds?: { warmupRounds: number; minRounds: number; maxRounds: number; budgetMs: number } };
  if (o.rounds) {
    lines.push(
      `- Method: one process; per workload ${o.rounds.warmupRounds} warm-up rounds, then at least ${o.rounds.minRounds} timed rounds (≤ ${o.rounds.maxRounds}, ~${o.rounds.budgetMs} ms budget), each round runs every variant once in rotated order; median and p99 (nearest rank) of per-call wall time; ratios are median ÷ median.`,
    );
  }
  return lines;
}

const READING = [
  "**raw driver** runs the hand-written builder's own SQL (TypeORM's text, taken from `getQueryAndParameters()`) as prepared statements: better-sqlite3 `prepare().all()`, pg named queries on two dedicated connections (page and COUNT concurrently) with `plan_cache_mode = force_custom_plan`, so that PostgreSQL's switch to a generic plan after five executions does not make the floor slower than TypeORM's unnamed statements.",
  "**TypeORM builder** is what a competent user writes: `getManyAndCount()` (page, then count, one after the other), `getRawMany()` + a COUNT over the grouped subquery for W5, `offset/limit` where the join is to-one.",
  "QueryLib generates its own SQL, so it can be faster than the raw driver running TypeORM's SQL (e.g. it runs the page and the COUNT concurrently on PostgreSQL, and `lower(x) LIKE lower($1)` can plan differently from `ILIKE`); read `× raw` as distance from the hand-written SQL's floor. The SQL of each side is in `bench.json` (`variants[].sql`).",
  "Every variant is checked before timing: the ids of the page (in order) and the total must equal the raw driver's; a variant that differs is reported as MISMATCH, not timed, and its workload is marked ⚠ INVALID.",
  "Medians are robust to the occasional GC pause or noisy neighbour; p99 is not, and on a shared 2-core machine it mostly measures the machine.",
];

export function renderMarkdown(report: BenchReport, chartPath: string | null): string {
  const out: string[] = [];
  out.push("# QueryLib benchmarks", "");
  out.push(
    "Generated by `npm run bench" + (report.meta.quick ? " -- --quick" : "") + "` (code in `bench/`, figures also in `bench/out/bench.json`). " +
      "Each workload is run four ways — the raw driver with a prepared statement of the same SQL (the floor), a hand-written TypeORM `SelectQueryBuilder`, QueryLib (`toListAsync` with the workload's JSON; guarded later), and nestjs-paginate's `paginate()` where it can express the query — interleaved in one process. Before timing, every variant's rows (ids in order) and total are compared with the raw driver's.",
    "",
  );
  out.push("## Machine and data", "", ...machineLines(report), "");
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
    "TypeORM: builder construction + `getQueryAndParameters()` of the data query. nestjs-paginate: `paginate()` against a builder whose execution methods only compile their SQL. QueryLib: `filter(repo, json).getQueryAndParameters()` (JSON parsed per call).",
    "",
    buildTable(report),
    "",
  );
  out.push("## Growth", "");
  out.push(
    "Hand-written TypeORM and QueryLib (when loadable): build cost and end-to-end cost (page 1 with total) against the number of ANDed conditions on Customer (page of 50), against page size (active customers by id), and against path depth (one In condition on an OrderItem path of 1–4 segments through reference navigations — `quantity`, `order.status`, `order.customer.tier`, `order.customer.contact.city` — each keeping about a fifth of the items).",
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
  out.push(endToEndTables(report));
  out.push("Median ratio to hand-written TypeORM:", "", ratioSummary(report), "");
  const notes = notesOf(report);
  if (notes.length) out.push(...notes.map((n) => `- ${n}`), "");
  out.push("Build only:", "", buildTable(report), "");
  out.push("Growth — conditions:", "", growthTable(report, "conditions"), "");
  out.push("Growth — page size:", "", growthTable(report, "pageSize"), "");
  out.push("Growth — path depth:", "", growthTable(report, "depth"), "");
  return out.join("\n");
}
