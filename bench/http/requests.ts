// The HTTP benchmark's question, asked each endpoint's way: the request per endpoint, workload
// and dialect, and the ids and total of an answer, whatever its envelope.
import type { Dialect } from "../db.js";
import { w1Filter, w2Filter, w4Filter } from "../querylib-workloads.js";
import { W1, W2, W4 } from "../workload-params.js";

export type Workload = "W1" | "W2" | "W4";
export type Endpoint = "hand" | "paginate" | "querylib" | "querylib-audit" | "querylib-audit-group" | "querylib-nomask";
/** The server's --audit mode an endpoint runs under. */
export type AuditMode = "off" | "on" | "group";

/** What the run, the report and the chart need of each endpoint, in one place. */
interface EndpointFacts {
  /** The report's name of it. */
  readonly label: string;
  /** The chart's legend (its pixel font has capitals only). */
  readonly chartLabel: string;
  readonly audit: AuditMode;
}

export const ENDPOINT_FACTS: Readonly<Record<Endpoint, EndpointFacts>> = {
  hand: { label: "hand-written (DTO + builder)", chartLabel: "HAND-WRITTEN", audit: "off" },
  paginate: { label: "nestjs-paginate", chartLabel: "NESTJS-PAGINATE", audit: "off" },
  querylib: { label: "QueryLib guarded, audit off", chartLabel: "QUERYLIB AUDIT OFF", audit: "off" },
  "querylib-audit": { label: "QueryLib guarded, audit on", chartLabel: "AUDIT ON", audit: "on" },
  "querylib-audit-group": { label: "QueryLib guarded, audit on, group commit", chartLabel: "AUDIT GROUP COMMIT", audit: "group" },
  "querylib-nomask": { label: "QueryLib guarded without masks, audit off (diagnostic)", chartLabel: "NO MASKS", audit: "off" },
};
/** The endpoints `bench:http` measures, in the report's and the chart's order. */
export const ENDPOINTS: readonly Endpoint[] = ["hand", "paginate", "querylib", "querylib-audit", "querylib-audit-group"];
/**
 * Every endpoint the server answers: ENDPOINTS and the diagnostic one, the guarded route without
 * masks, which `bench:http:paired` and `bench:http:profile` can measure; `bench:http` leaves it out.
 */
export const ALL_ENDPOINTS = Object.keys(ENDPOINT_FACTS) as Endpoint[];

export interface Request {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly body?: string;
}

export function requestOf(endpoint: Endpoint, workload: Workload, dialect: Dialect): Request {
  const bool = (b: boolean) => (dialect === "postgres" ? String(b) : b ? "1" : "0"); // nestjs-paginate passes the text through
  if (endpoint.startsWith("querylib")) {
    const body = workload === "W1" ? w1Filter() : workload === "W2" ? w2Filter() : w4Filter();
    return { method: "POST", path: endpoint === "querylib-nomask" ? "/querylib/customers-unmasked/filter" : "/querylib/customers/filter", body: JSON.stringify(body) };
  }
  const query = new URLSearchParams();
  if (endpoint === "hand") {
    if (workload === "W1") Object.entries({ tier: W1.tier, from: W1.from, to: W1.to, page: W1.pageNumber, pageSize: W1.pageSize }).forEach(([k, v]) => query.append(k, String(v)));
    if (workload === "W2") {
      query.append("name", W2.nameContains);
      for (const tier of W2.tiers) query.append("tier", tier);
      query.append("page", String(W2.pageNumber));
      query.append("pageSize", String(W2.pageSize));
    }
    if (workload === "W4") Object.entries({ active: W4.isActive, page: W4.pageNumber, pageSize: W4.pageSize }).forEach(([k, v]) => query.append(k, String(v)));
    return { method: "GET", path: `/hand/${workload.toLowerCase()}?${query}` };
  }
  if (workload === "W1") {
    query.append("filter.tier", `$eq:${W1.tier}`);
    query.append("filter.createdAt", `$btw:${W1.from},${W1.to}`);
    query.append("sortBy", "createdAt:DESC");
    query.append("sortBy", "id:DESC");
    query.append("page", String(W1.pageNumber));
    query.append("limit", String(W1.pageSize));
  }
  if (workload === "W2") {
    query.append("filter.name", `$ilike:${W2.nameContains}`);
    query.append("filter.tier", `$in:${W2.tiers.join(",")}`);
    query.append("sortBy", "id:ASC");
    query.append("page", String(W2.pageNumber));
    query.append("limit", String(W2.pageSize));
  }
  if (workload === "W4") {
    query.append("filter.isActive", `$eq:${bool(W4.isActive)}`);
    query.append("sortBy", "name:ASC");
    query.append("sortBy", "id:ASC");
    query.append("page", String(W4.pageNumber));
    query.append("limit", String(W4.pageSize));
  }
  return { method: "GET", path: `/paginate/${workload.toLowerCase()}?${query}` };
}

/** The ids and total of an answer, whatever its envelope. */
export function outcomeOf(body: { data?: { id: number }[]; total?: number; totalCount?: number; meta?: { totalItems?: number } }): string {
  const ids = (body.data ?? []).map((row) => row.id).join(",");
  return `${body.total ?? body.totalCount ?? body.meta?.totalItems} | ${ids}`;
}

