// Renders BENCHMARKS.md's "Over HTTP" section and docs/benchmarks/http-latency.png again from the
// committed docs/benchmarks/http.json, without measuring: for a change to the report's wording or
// the chart, the figures stay those of the run that made them.
//
//   node dist/bench/http/render.js
import { readFileSync, writeFileSync } from "node:fs";
import { PUBLISHED_DIR, REPO_ROOT } from "../db.js";
import { httpLatencyChart } from "./chart.js";
import { renderHttpMarkdown, withHttpSection } from "./report.js";
import type { HttpReport } from "./run.js";

const report = JSON.parse(readFileSync(`${PUBLISHED_DIR}http.json`, "utf8")) as HttpReport;
writeFileSync(`${PUBLISHED_DIR}http-latency.png`, httpLatencyChart(report));
const file = `${REPO_ROOT}BENCHMARKS.md`;
writeFileSync(file, withHttpSection(readFileSync(file, "utf8"), renderHttpMarkdown(report)));
process.stderr.write("rendered BENCHMARKS.md (Over HTTP) and docs/benchmarks/http-latency.png from docs/benchmarks/http.json\n");
