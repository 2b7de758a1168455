// The sample app's GET /metrics (sample-app/telemetry.ts): the OpenTelemetry SDK the app
// registers at start, its Prometheus exporter served through the app (no server of its own), for
// the admin role only. Anonymous: 401; an analyst or a support agent: 403; an admin: the text
// exposition, every line of it valid (HELP and TYPE lines, samples `name{labels} value` of a
// declared family), with QueryLib's metrics of the requests made before (runs, a refusal by
// code, a plan-cache hit, decisions by exposed entity and field) and none of their values or
// of who made them. The SDK is unregistered when the app closes.
import { expect } from "chai";
import { metrics, trace } from "@opentelemetry/api";
import { type SampleApp, startSampleApp } from "../../sample-app/main.js";
import { meters } from "../../lib/telemetry/metrics.js";

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelPair = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"$/;
const sampleValue = /^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|[+-]?Inf|NaN)$/;
const types = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** Splits `a="x",b="y"` into pairs, respecting escapes inside the quoted values. */
function labelsOf(text: string): string[] {
  const pairs: string[] = [];
  let current = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === "\\") {
      current += c + (text[++i] ?? "");
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === "," && !quoted) {
      pairs.push(current);
      current = "";
    } else current += c;
  }
  if (current !== "") pairs.push(current);
  return pairs;
}

/**
 * The Prometheus text format (0.0.4), line by line: `# HELP name text`, `# TYPE name type` (once
 * per family, before its samples), other comments, blank lines, and samples whose name is a
 * declared family's (a histogram's with _bucket, _sum or _count; a bucket with an `le`).
 * Returns the samples, or throws naming the first line that is not the format.
 */
function parseExposition(text: string): Sample[] {
  const families = new Map<string, string>();
  const helped = new Set<string>();
  const samples: Sample[] = [];
  text.split("\n").forEach((line, index) => {
    const where = `line ${index + 1}: ${JSON.stringify(line)}`;
    if (line.trim() === "") return;
    if (line.startsWith("#")) {
      const help = /^# HELP (\S+) (.*)$/.exec(line);
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (line.startsWith("# HELP ")) {
        expect(help, where).to.not.equal(null);
        expect(help![1], where).to.match(metricName);
        expect(helped.has(help![1]!), `${where}: a second HELP`).to.equal(false);
        helped.add(help![1]!);
      } else if (line.startsWith("# TYPE ")) {
        expect(type, where).to.not.equal(null);
        expect(type![1], where).to.match(metricName);
        expect(types.has(type![2]!), `${where}: unknown type`).to.equal(true);
        expect(families.has(type![1]!), `${where}: a second TYPE`).to.equal(false);
        families.set(type![1]!, type![2]!);
      }
      return;
    }
    const match = /^([^\s{]+)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+(-?\d+))?$/.exec(line);
    expect(match, where).to.not.equal(null);
    const [, name, labelText, value] = match!;
    expect(name, where).to.match(metricName);
    expect(value, where).to.match(sampleValue);
    const labels: Record<string, string> = {};
    for (const pair of labelsOf(labelText ?? "")) {
      const parsed = labelPair.exec(pair);
      expect(parsed, `${where}: label ${pair}`).to.not.equal(null);
      expect(labels[parsed![1]!], `${where}: label ${parsed![1]} twice`).to.equal(undefined);
      labels[parsed![1]!] = parsed![2]!;
    }
    const family = families.has(name!) ? name! : name!.replace(/_(bucket|sum|count)$/, "");
    expect(families.has(family), `${where}: no TYPE declared for ${name} before it`).to.equal(true);
    if (family !== name) expect(families.get(family), where).to.equal("histogram");
    if (name!.endsWith("_bucket") && family !== name) expect(labels, where).to.have.property("le");
    samples.push({ name: name!, labels, value: Number(value!.replace(/^\+?Inf$/, "Infinity").replace(/^-Inf$/, "-Infinity")) });
  });
  return samples;
}

describe("sample app: GET /metrics (OpenTelemetry, Prometheus text)", function () {
  let app: SampleApp;
  before(async () => {
    app = await startSampleApp(0, { logger: false, devMode: true, database: { kind: "sqlite", url: ":memory:" } });
  });
  after(async () => {
    await app?.close();
  });

  const get = (token: string | null) => fetch(`${app.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const post = (token: string, path: string, body: unknown) =>
    fetch(`${app.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });

  it("refuses an anonymous caller (401) and callers without the admin role (403), with the JSON error body", async () => {
    const anonymous = await get(null);
    expect(anonymous.status).to.equal(401);
    expect(((await anonymous.json()) as { code: string }).code).to.equal("Unauthorized");
    for (const token of ["dev-ben", "dev-cleo"]) {
      const response = await get(token);
      expect(response.status, token).to.equal(403);
      expect(((await response.json()) as { code: string }).code).to.equal("Forbidden");
    }
  });

  it("an admin gets the text exposition, every line valid, with QueryLib's metrics of the requests before it and none of their values", async () => {
    const secret = "Zyx-metrics-4471";
    const filter = { conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "name", dataType: "Text", operator: "Contains", values: [secret] }] }, page: { pageNumber: 1, pageSize: 3 } };
    // The guarded plan cache keeps a request from its second sighting: the third is a hit.
    for (let i = 0; i < 3; i++) {
      const answer = await post("dev-ada", "/api/customers/filter", filter);
      expect(answer.status, await answer.text()).to.equal(200);
    }
    const refused = await post("dev-ben", "/api/customers/filter", { conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "noSuchField", dataType: "Text", operator: "Equal", values: [secret] }] } });
    expect(refused.status).to.be.within(400, 499);
    const code = ((await refused.json()) as { code: string }).code;

    const response = await get("dev-ada");
    expect(response.status).to.equal(200);
    expect(response.headers.get("content-type")).to.match(/^text\/plain/);
    const text = await response.text();
    const samples = parseExposition(text);
    const value = (name: string, labels: Record<string, string> = {}) =>
      samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);

    expect(value("querylib_request_duration_count", { querylib_shape: "filter", querylib_outcome: "ok" })).to.be.at.least(3);
    expect(value("querylib_request_duration_count", { querylib_shape: "filter", querylib_outcome: "refused" })).to.be.at.least(1);
    expect(value("querylib_refusals_total", { querylib_error_code: code })).to.be.at.least(1);
    expect(value("querylib_plan_cache_lookups_total", { querylib_plan_cache_result: "hit" })).to.be.at.least(1);
    expect(value("querylib_policy_decisions_total", { querylib_entity: "customers", querylib_field: "name", querylib_feature: "Where" })).to.be.at.least(3);
    expect(value("querylib_stage_duration_count", { querylib_stage: "statement" })).to.be.at.least(2);
    expect(samples.some((s) => s.name === "querylib_rules_snapshot_version")).to.equal(true);
    expect(samples.every((s) => !s.name.startsWith("querylib_") || s.labels.otel_scope_name === "querylib")).to.equal(true);
    for (const needle of [secret, "dev-ben", "dev-ada", "noSuchField", "acme", "Ben Analyst", "Ada Admin"]) expect(text, needle).to.not.include(needle);
  });

  it("the SDK is the app's while it runs (dev mode: spans recorded too), and gone once the last app closes", async () => {
    expect(meters()).to.not.equal(null);
    const probe = trace.getTracer("probe").startSpan("probe");
    expect(probe.isRecording(), "dev mode registers a tracer provider").to.equal(true);
    probe.end();
    const second = await startSampleApp(0, { logger: false, devMode: true, database: { kind: "sqlite", url: ":memory:" } });
    await second.close();
    expect(meters(), "still registered: the first app runs").to.not.equal(null);
    const provider = metrics.getMeterProvider();
    await app.close();
    expect(meters()).to.equal(null);
    expect(metrics.getMeterProvider()).to.not.equal(provider);
    const after = trace.getTracer("probe").startSpan("probe");
    expect(after.isRecording(), "the tracer provider unregistered").to.equal(false);
    after.end();
    app = undefined as unknown as SampleApp;
  });
});

describe("sample app outside dev mode: metrics, no spans", function () {
  const keys = { QUERYLIB_HASH_SALT: "metrics-test-hash-salt-0123456789ab", QUERYLIB_VAULT_KEY: "metrics-test-vault-key-0123456789ab" };
  let app: SampleApp | undefined;
  const saved: Record<string, string | undefined> = {};
  before(async () => {
    for (const [name, value] of Object.entries(keys)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    app = await startSampleApp(0, { logger: false, database: { kind: "sqlite", url: ":memory:" }, seed: { customersPerTenant: 10, employeesPerTenant: 4 } });
  });
  after(async () => {
    await app?.close();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("registers the meter provider but no tracer provider (spans are dev mode's), and GET /metrics still answers no one unsigned (401)", async () => {
    expect(app!.devMode).to.equal(false);
    expect(meters()).to.not.equal(null);
    const probe = trace.getTracer("probe").startSpan("probe");
    expect(probe.isRecording()).to.equal(false);
    probe.end();
    expect((await fetch(`${app!.url}/metrics`)).status).to.equal(401);
  });
});
