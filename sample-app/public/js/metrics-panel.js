// "Policy health" continued, for admins only (the callers who see the linter's panel, the same
// rule as GET /metrics): a few of QueryLib's OpenTelemetry metrics as the app's Prometheus
// exporter serves them (sample-app/telemetry.ts): query runs by outcome, refusals by code, the
// plan cache's hit rate. Read from GET /metrics, which only an admin may ask (so no other caller
// asks, and none gets a 403), when the caller changes and after each run.
import { h, replaceChildren } from "./dom.js";

/** One sample line of the Prometheus text exposition: `name{label="value",…} value`; null for a comment or a blank line. */
export function parseSample(line) {
  const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$/.exec(line.trim());
  if (!match || line.startsWith("#")) return null;
  const labels = {};
  for (const [, name, value] of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
    labels[name] = value.replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
  }
  return { name: match[1], labels, value: Number(match[3]) };
}

/** Runs by outcome, refusals by code, plan-cache hits and misses, from the exposition's samples. */
export function summarize(text) {
  const samples = text.split("\n").map(parseSample).filter((s) => s !== null);
  const sum = (name, label, value) => samples.filter((s) => s.name === name && (label === undefined || s.labels[label] === value)).reduce((n, s) => n + s.value, 0);
  const refusals = new Map();
  for (const s of samples.filter((s) => s.name === "querylib_refusals_total")) {
    const code = s.labels.querylib_error_code ?? "?";
    refusals.set(code, (refusals.get(code) ?? 0) + s.value);
  }
  const hits = sum("querylib_plan_cache_lookups_total", "querylib_plan_cache_result", "hit");
  const misses = sum("querylib_plan_cache_lookups_total", "querylib_plan_cache_result", "miss");
  return {
    runs: sum("querylib_request_duration_count"),
    ok: sum("querylib_request_duration_count", "querylib_outcome", "ok"),
    refused: sum("querylib_request_duration_count", "querylib_outcome", "refused"),
    refusals: [...refusals].sort((a, b) => b[1] - a[1]),
    hits, misses,
    hitRate: hits + misses === 0 ? null : hits / (hits + misses),
  };
}

export function metricsView(summary) {
  const rate = summary.hitRate === null ? "no lookup yet" : `${Math.round(summary.hitRate * 100)} % (${summary.hits} of ${summary.hits + summary.misses})`;
  return h("section", { class: "metrics", "aria-label": "Query metrics", "data-runs": String(summary.runs), "data-refused": String(summary.refused) },
    h("h3", {}, "Query metrics"),
    h("p", { class: "metrics-summary" }, `Query runs since start: ${summary.runs} (${summary.ok} answered, ${summary.refused} refused). Plan cache hit rate: `,
      h("span", { class: "metrics-hit-rate", "data-hits": String(summary.hits), "data-misses": String(summary.misses) }, rate), "."),
    summary.refusals.length === 0 ? h("p", { class: "hint" }, "No refusal yet.") : h("ul", { class: "metrics-refusals" },
      summary.refusals.map(([code, n]) => h("li", { "data-code": code, "data-count": String(n) }, h("strong", {}, code), `: ${n}`))),
    h("p", { class: "hint" }, "From GET /metrics (Prometheus text, admins only)."));
}

/** The panel in `container`: refresh(token, shown) reads GET /metrics when `shown` (an admin), else empties it. */
export function metricsPanel(container) {
  let seq = 0;
  const page = document.body.dataset;
  return {
    async refresh(token, shown) {
      const mine = ++seq;
      let view = null;
      if (shown) {
        try {
          const response = await fetch("/metrics", { headers: { authorization: `Bearer ${token}`, accept: "text/plain" } });
          if (response.ok) view = metricsView(summarize(await response.text()));
        } catch {
          view = null;
        }
      }
      if (mine !== seq) return;
      replaceChildren(container, view);
      page.metrics = view ? "shown" : "none";
      page.metricsSeq = String(mine);
    },
  };
}
