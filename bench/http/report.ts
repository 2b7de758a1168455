// The "Over HTTP" section of BENCHMARKS.md from one bench:http run: per dialect, requests/s and
// latency percentiles of the five endpoints at each concurrency, as ratios to the hand-written
// endpoint, the server's event-loop delay, and the issue's targets with their verdicts.
import { ENDPOINT_FACTS, ENDPOINTS, type Endpoint } from "./requests.js";
import type { HttpCell, HttpReport } from "./run.js";

const fixed = (value: number, digits = 1) => value.toFixed(digits);
const ratio = (value: number) => `${value.toFixed(2)}×`;

function cellOf(report: HttpReport, dialect: string, workload: string, concurrency: number, endpoint: Endpoint): HttpCell | undefined {
  return report.cells.find((c) => c.dialect === dialect && c.workload === workload && c.concurrency === concurrency && c.endpoint === endpoint);
}

export function renderHttpMarkdown(report: HttpReport): string {
  const dialects = [...new Set(report.cells.map((c) => c.dialect))];
  const workloads = [...new Set(report.cells.map((c) => c.workload))];
  const concurrencies = [...new Set(report.cells.map((c) => c.concurrency))].sort((a, b) => a - b);
  const lines: string[] = [
    "## Over HTTP",
    "",
    "`npm run bench:http`: one NestJS process per setting on the benchmark's seeded data (10,000 customers), the same question asked of the endpoints a team could write: "
      + "(a) a controller with a class-validator DTO and a TypeORM `SelectQueryBuilder` (`GET /hand/w1?…`), (b) nestjs-paginate's `@Paginate()` + `paginate()` (`GET /paginate/w1?filter.tier=$eq:Gold&…`), "
      + "(c) `QueryLibModule.forFeature`'s guarded route (`POST /querylib/customers/filter`: the tenant predicate forced from the caller's claims, the guarded bench domain's masks), with audit off, with audit on to the relational sink (one INSERT per event, before the response), and with audit on through group commit (`audit: { groupCommit: true }`: the events of concurrent requests share one INSERT, each request still waits for its own events' commit). "
      + "Every endpoint scopes to the caller's tenant (tier Gold). autocannon drives each endpoint from a process of its own; only responses inside the timed window count, and the window starts once every connection has been admitted (see the note under the tables). "
      + "Before timing, the endpoints return the same ids in the same order and the same total.",
    "",
    `- Date: ${report.date}`,
    `- Machine: ${report.machine}; Node ${report.node}; the load generator shares the machine with the server.`,
    `- Method: ${report.method}.`,
    ...Object.entries(report.servers).map(([dialect, version]) => `- ${dialect}: ${version}`),
    "",
  ];
  const top = Math.max(...concurrencies);
  lines.push(
    `![Latency percentiles at ${top} concurrent connections](docs/benchmarks/http-latency.png)`,
    "",
    `### Targets (at ${top} concurrent connections)`,
    "",
    "The verdicts of this run: medians of its runs per cell, which on a machine shared by the server, the database and the load generator cannot tell 0.9× from 1.0×. The verdicts that decide the throughput targets are the paired runner's (`npm run bench:http:paired`: docs/benchmarks/http-paired.md, quoted in \"Under load\" below).",
    "",
    "| Target | Dialect | Measured | Verdict |",
    "|---|---|---|---|",
  );
  for (const dialect of dialects) {
    const at = (workload: string, endpoint: Endpoint) => cellOf(report, dialect, workload, top, endpoint)?.median;
    const tail = workloads.flatMap((w) => ENDPOINTS.map((e) => ({ w, e, m: at(w, e) }))).filter((x) => x.m);
    const worstTail = tail.reduce((worst, x) => (x.m!.p99 / x.m!.p50 > worst.r ? { r: x.m!.p99 / x.m!.p50, label: `${x.w} ${x.e}` } : worst), { r: 0, label: "" });
    lines.push(`| p99 ≤ 3× p50, every endpoint | ${dialect} | worst ${worstTail.label}: ${fixed(worstTail.r, 2)}× | ${worstTail.r <= 3 ? "met" : "**missed**"} |`);
    const inServer = tail.reduce((worst, x) => (x.m!.serverP99 / x.m!.serverP50 > worst.r ? { r: x.m!.serverP99 / x.m!.serverP50, label: `${x.w} ${x.e}` } : worst), { r: 0, label: "" });
    lines.push(`| the same, time in the server only (routing to last byte) | ${dialect} | worst ${inServer.label}: ${fixed(inServer.r, 2)}× | ${inServer.r <= 3 ? "met" : "**missed**"} |`);
    const versus = (endpoint: Endpoint, floor: number, label: string) => {
      const ratios = workloads.map((w) => ({ w, r: at(w, endpoint)!.rps / at(w, "hand")!.rps }));
      const low = ratios.filter((x) => x.r < floor);
      lines.push(`| ${label} | ${dialect} | ${ratios.map((x) => `${x.w} ${ratio(x.r)}`).join(", ")} | ${low.length ? `**missed** on ${low.map((x) => x.w).join(", ")}` : "met"} |`);
    };
    versus("querylib", 1.0, "QueryLib, audit off ≥ 1.0× the hand-written endpoint's requests/s");
    versus("querylib-audit", 0.9, "QueryLib, audit on ≥ 0.9× the hand-written endpoint's requests/s");
    versus("querylib-audit-group", 0.9, "QueryLib, audit on with group commit ≥ 0.9× the hand-written endpoint's requests/s");
    const paginate = workloads.map((w) => ({ w, r: at(w, "querylib")!.rps / at(w, "paginate")!.rps }));
    const behind = paginate.filter((x) => x.r < 1);
    lines.push(`| QueryLib (audit off) not behind nestjs-paginate | ${dialect} | ${paginate.map((x) => `${x.w} ${ratio(x.r)}`).join(", ")} | ${behind.length ? `**missed** on ${behind.map((x) => x.w).join(", ")}` : "met"} |`);
  }
  lines.push("");
  for (const dialect of dialects) {
    lines.push(`### ${dialect}`, "");
    lines.push("| Workload | Connections | Endpoint | req/s | × hand | p50 ms | p99 ms | p99.9 ms | p99 ÷ p50 | in server p50 / p99 ms | loop delay p99 ms | not admitted | errors |");
    lines.push("|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for (const workload of workloads) {
      for (const concurrency of concurrencies) {
        const hand = cellOf(report, dialect, workload, concurrency, "hand")?.median;
        ENDPOINTS.forEach((endpoint, i) => {
          const m = cellOf(report, dialect, workload, concurrency, endpoint)?.median;
          if (!m || !hand) return;
          lines.push(`| ${i === 0 ? `**${workload}**` : ""} | ${i === 0 ? concurrency : ""} | ${ENDPOINT_FACTS[endpoint].label} | ${Math.round(m.rps)} | ${ratio(m.rps / hand.rps)} | ${fixed(m.p50, 2)} | ${fixed(m.p99, 2)} | ${fixed(m.p999, 2)} | ${fixed(m.p99 / m.p50, 2)} | ${fixed(m.serverP50, 1)} / ${fixed(m.serverP99, 1)} | ${fixed(m.loopDelayP99, 1)} | ${m.lateConnections} | ${m.errors + m.non2xx} |`);
        });
      }
    }
    lines.push("");
  }
  lines.push(
    "W1: tier = Gold and createdAt between 2022 and 2023, newest first, page 3 of 50; W2: name contains \"an\" in any letter case and tier in (Silver, Gold), page 1 of 100; "
      + "W4: active customers, id, name and contact.email, by name, page 2 of 50. All with the total. The audit-on endpoints' QpAuditInterceptor writes each request's audit events to `querylib_audit_event` before the response goes out; with group commit the events of requests in flight together go in one multi-row INSERT.",
    "",
    "The window of a run starts once every connection has had its first answer, or after 6 s more at most; \"not admitted\" is the most connections (of the runs) still in the server's listen queue then, which are not measured. libuv accepts connections between event-loop iterations: on SQLite, whose queries are synchronous, an iteration that answers every ready request takes about a second at 200 connections, and the queue drains by about one connection per iteration, whichever endpoint it is. \"In server\" is a request's time from routing to its last byte handed to the socket; the gap to the client's latency is time spent before routing (on SQLite, mostly waiting for the event loop).",
    "",
  );
  return lines.join("\n");
}

/** BENCHMARKS.md with its "Over HTTP" section replaced (or added before "Long value lists", else at the end). */
export function withHttpSection(text: string, section: string): string {
  const start = text.indexOf("\n## Over HTTP");
  if (start >= 0) {
    const next = text.indexOf("\n## ", start + 1);
    return text.slice(0, start + 1) + section.trimEnd() + "\n" + (next >= 0 ? text.slice(next) : "");
  }
  const before = text.indexOf("\n## Long value lists");
  return before >= 0 ? `${text.slice(0, before + 1)}${section.trimEnd()}\n${text.slice(before)}` : `${text.trimEnd()}\n\n${section.trimEnd()}\n`;
}
