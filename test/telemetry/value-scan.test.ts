// No value in a span or a metric (issue #47): a slice of the guarded fuzz requests (test/fuzz: valid and
// almost-valid requests of the policy domain and the transform domain, a fixed seed) runs on every
// target with the SDK's in-memory exporter registered, and no exported span may hold any value
// the request sent (every element of every `values` list, Having's included) or any stored value
// of the domain's rows: not in an attribute, not in a status message, and no span has an event.
// Attribute names must be QueryLib's known ones, so that a numeric attribute is a count or a page
// size by construction (a number is too short a needle to scan for). The metric points each
// request moved (the SDK's metric reader registered too) are scanned the same way, attribute by
// attribute: decisions by entity, field, feature and action, refusals by code, and the others.
import assert from "node:assert/strict";
import fc from "fast-check";
import { RequestArbitraries, type Request } from "../fuzz/arbitraries.js";
import { guardedSample, memberSchema, patientSchema, runnerFor, type Runner } from "../fuzz/domains.js";
import { policyData } from "../policy/domain.js";
import { memberData } from "../transform/domain.js";
import { skipIfUnavailable } from "../support/databases.js";
import { targets } from "../support/target-list.js";
import { type ReadableSpan, captureSpans, querylibSpans } from "./span-capture.js";
import { type Point, captureMetrics } from "./metric-capture.js";
import { MetricAttr } from "../../lib/telemetry/metrics.js";
import { QpEntityCatalogue, QpPolicyContext, QpPolicyEngine, QpSubjectKind, applyPolicy } from "../../lib/index.js";
import { Doctor, Patient, Visit } from "../policy/domain.js";
import { policyDatabase } from "../policy/policy-targets.js";

/** The policy domain's rows of a root entity, fresh (a guarded run must never change its source). */
function rowsOf(root: Function): readonly object[] {
  const data = policyData();
  return root === Patient ? data.patients : root === Visit ? data.visits : data.doctors;
}

const SEED = 4747;
/** Most valid requests of the policy domain name a denied field or lack a required one, and are refused before a statement: it runs more. */
const RUNS = { patient: { valid: 200, almost: 20 }, member: { valid: 40, almost: 20 } };

/** Every attribute a QueryLib span may carry (lib/telemetry/spans.ts, docs/OPERATIONS.md). */
const knownAttributes = new Set([
  "querylib.shape", "querylib.entity", "querylib.plan_cache.hit", "querylib.page.size", "querylib.row_count", "querylib.policy.tier", "querylib.error.code", "querylib.vault.values", "querylib.export.batches", "querylib.audit.events",
  "db.system", "db.system.name", "db.operation", "db.operation.name", "db.statement", "db.query.text", "db.response.returned_rows",
]);
const statementTexts = new Set(["db.statement", "db.query.text"]);
const decisionCount = /^querylib\.policy\.decisions\.[a-z]+$/;

/** The primitive leaves of a value, dates as the texts a driver or a span would show (the rows link each other: each object once). */
function leaves(value: unknown, into: Set<string>, seen = new Set<object>()): Set<string> {
  if (value === null || value === undefined) return into;
  if (value instanceof Date) {
    if (!Number.isNaN(value.getTime())) into.add(value.toISOString());
  } else if (typeof value === "object") {
    if (seen.has(value)) return into;
    seen.add(value);
    for (const child of Array.isArray(value) ? value : Object.values(value)) leaves(child, into, seen);
  } else into.add(String(value));
  return into;
}

/** What the request sent as values: every element of every `values` list, at any depth. */
function requestValues(shape: unknown, into = new Set<string>()): Set<string> {
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === "object") {
      for (const [key, child] of Object.entries(node)) key === "values" ? leaves(child, into) : walk(child);
    }
  };
  walk(typeof shape === "string" ? safeParse(shape) : shape);
  return into;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * The spans' failures to keep values out: an unknown attribute, an event, or a string attribute
 * or status message equal to a value, or holding one of four characters or more (shorter ones
 * are parts of any SQL text: "t-1" is not, "id" would be).
 */
function leaks(spans: readonly ReadableSpan[], values: ReadonlySet<string>): string[] {
  const found: string[] = [];
  const needles = [...values].filter((v) => v.trim().length >= 4);
  for (const span of spans) {
    if (span.events.length > 0) found.push(`${span.name}: an event`);
    const texts: [string, string][] = span.status.message ? [["status", span.status.message]] : [];
    for (const [key, value] of Object.entries(span.attributes)) {
      if (!knownAttributes.has(key) && !decisionCount.test(key)) found.push(`${span.name}: unknown attribute ${key}`);
      // A statement's quoted identifiers are names, not values ("patien" is in "pol_patient"); a value
      // written into the text would be a literal or a bare number, and those are scanned.
      if (typeof value === "string") texts.push([key, statementTexts.has(key) ? value.replace(/"(?:[^"]|"")*"|`(?:[^`]|``)*`/g, "") : value]);
      else if (typeof value !== "number" && typeof value !== "boolean") found.push(`${span.name}: ${key} is not a scalar`);
    }
    for (const [key, text] of texts) {
      if (values.has(text)) found.push(`${span.name}: ${key} is a value (${JSON.stringify(text)})`);
      const needle = needles.find((v) => text.includes(v));
      if (needle !== undefined) found.push(`${span.name}: ${key} holds ${JSON.stringify(needle)}`);
    }
  }
  return found;
}

/** Every attribute a QueryLib metric may carry (lib/telemetry/metrics.ts MetricAttr, docs/OPERATIONS.md). */
const knownMetricAttributes = new Set<string>(Object.values(MetricAttr));
const pointKey = (point: Point) => `${point.name} ${JSON.stringify(Object.entries(point.attributes).sort(([a], [b]) => (a < b ? -1 : 1)))}`;

/**
 * The metric points a request changed (cumulative points: those whose value or count moved, or
 * new ones) failing to keep values out: an unknown attribute, a non-scalar, or a string
 * attribute equal to a value or holding one of four characters or more.
 */
function metricLeaks(changed: readonly Point[], values: ReadonlySet<string>, names?: Names): string[] {
  const found: string[] = [];
  const needles = [...values].filter((v) => v.trim().length >= 4);
  for (const point of changed) {
    for (const [key, value] of Object.entries(point.attributes)) {
      if (!knownMetricAttributes.has(key)) found.push(`${point.name}: unknown attribute ${key}`);
      // An entity or a field is a name of the schema ("patients" holds a fuzz text "patien"): it must be one of them.
      const closed = names && (key === MetricAttr.entity ? names.entities : key === MetricAttr.field ? names.fields : null);
      if (closed) {
        if (!closed.has(String(value))) found.push(`${point.name}: ${key} ${JSON.stringify(value)} is no name of the schema`);
      } else if (typeof value === "string") {
        if (values.has(value)) found.push(`${point.name}: ${key} is a value (${JSON.stringify(value)})`);
        const needle = needles.find((v) => value.includes(v));
        if (needle !== undefined) found.push(`${point.name}: ${key} holds ${JSON.stringify(needle)}`);
      } else if (typeof value !== "number" && typeof value !== "boolean") found.push(`${point.name}: ${key} is not a scalar`);
    }
  }
  return found;
}

/** The schema's names: the entities (class and public names) and every field path of the roots, with each path's navigations. */
interface Names {
  readonly entities: ReadonlySet<string>;
  readonly fields: ReadonlySet<string>;
}

const domains = [
  { name: "patient" as const, arbitraries: () => new RequestArbitraries(patientSchema()), stored: () => leaves(policyData(), new Set()) },
  { name: "member" as const, arbitraries: () => new RequestArbitraries(memberSchema()), stored: () => leaves(memberData(), new Set()) },
];

describe("Telemetry: no value in a span or a metric", () => {
  const capture = captureSpans();
  const metricCapture = captureMetrics();

  for (const target of targets) {
    describe(`the guarded fuzz slice [${target}]`, function () {
      let runner: Runner;
      before(async function () {
        this.timeout(120_000);
        try {
          runner = await runnerFor(target, { unguarded: false, guarded: true });
        } catch (error) {
          skipIfUnavailable(this, error);
        }
      });

      for (const domain of domains) {
        const runs = RUNS[domain.name];
        it(`${runs.valid} valid and ${runs.almost} almost-valid ${domain.name} requests (seed ${SEED}): no request value and no stored value in any span`, async function () {
          this.timeout(120_000);
          const arbitraries = domain.arbitraries();
          const sample = guardedSample(domain.name);
          const requests: Request[] = [
            ...fc.sample(arbitraries.validArb(sample), { numRuns: runs.valid, seed: SEED }),
            ...fc.sample(arbitraries.almostValidArb(sample), { numRuns: runs.almost, seed: SEED + 1 }),
          ];
          const stored = domain.stored();
          let refused = 0;
          let statements = 0;
          let scanned = 0;
          let metricPoints = 0;
          const seen = new Map<string, number>();
          for (const point of await metricCapture.collect()) seen.set(pointKey(point), point.value);
          for (const request of requests) {
            capture.reset();
            try {
              await runner.guarded(domain.name, request.root, request.shape, request.dynamic, "t-1");
            } catch {
              refused++; // refused requests are scanned too (their spans end with the code)
            }
            const spans = querylibSpans(capture);
            assert.ok(spans.some((span) => /^querylib\.(filter|segment|summary)$/.test(span.name)), `a run span for ${JSON.stringify(request.shape).slice(0, 200)}`);
            const values = requestValues(request.shape, new Set(stored));
            assert.deepEqual(leaks(spans, values), [], `request ${JSON.stringify(request.shape).slice(0, 400)}`);
            // The metric points this request moved: the same scan, on their attributes.
            const changed = (await metricCapture.collect()).filter((point) => seen.get(pointKey(point)) !== point.value);
            for (const point of changed) seen.set(pointKey(point), point.value);
            assert.deepEqual(metricLeaks(changed, values), [], `metrics of request ${JSON.stringify(request.shape).slice(0, 400)}`);
            metricPoints += changed.length;
            statements += spans.filter((span) => span.name === "querylib.statement").length;
            scanned += spans.length;
          }
          // The slice must reach what it scans: runs that return, runs refused, and statements on a database.
          assert.ok(refused > 0 && refused < requests.length, `refused ${refused} of ${requests.length}`);
          if (target !== "memory") assert.ok(statements >= 20, `only ${statements} statement spans (${refused} of ${requests.length} refused)`);
          assert.ok(scanned > requests.length);
          assert.ok(metricPoints > requests.length, `only ${metricPoints} metric points moved`);
        });
      }

      // The fuzz domains' engines expose no entity, so their decisions carry no field: the patient
      // slice again under an engine that exposes its roots, whose decisions name each field.
      it(`the ${RUNS.patient.valid} valid patient requests under an engine exposing their entities: the decisions' field attributes scanned too`, async function () {
        this.timeout(120_000);
        const sample = guardedSample("patient");
        const requests = fc.sample(new RequestArbitraries(patientSchema()).validArb(sample), { numRuns: RUNS.patient.valid, seed: SEED });
        const catalogue = new QpEntityCatalogue().expose(Patient, "patients").expose(Visit, "visits").expose(Doctor, "doctors");
        const context = await new QpPolicyEngine({ entities: catalogue, lint: "off" }).prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Tenant, "t-1").withValue("tenantId", "t-1"));
        const dataSource = target === "memory" ? null : await policyDatabase(target);
        const stored = leaves(policyData(), new Set());
        const seen = new Map<string, number>();
        for (const point of await metricCapture.collect()) seen.set(pointKey(point), point.value);
        const fields = new Set<string>();
        const schema = patientSchema();
        const names: Names = {
          entities: new Set(["patients", "visits", "doctors", "Patient", "Visit", "Doctor"]),
          fields: new Set([...schema.fields.values()].flat().flatMap((field) => field.path.split(".").map((_, i, parts) => parts.slice(0, i + 1).join(".")))
            .concat((schema.spec.aliases ?? []).map((alias) => alias.path))
            // Request-wide decisions name the request's member (the page's injected size, a Summary's group floor).
            .concat(["page", "groupBy", "selects", "orders", "conditionGroup", "conditionSets", "getQueryString"])),
        };
        for (const request of requests) {
          const source = dataSource ? dataSource.getRepository(request.root as never) : rowsOf(request.root);
          const guard = applyPolicy(source as never, context);
          try {
            await (request.dynamic ? guard.toListAsyncDynamic(request.shape as never) : guard.toListAsync(request.shape));
          } catch {
            // refused: scanned too
          }
          const changed = (await metricCapture.collect()).filter((point) => seen.get(pointKey(point)) !== point.value);
          for (const point of changed) seen.set(pointKey(point), point.value);
          assert.deepEqual(metricLeaks(changed, requestValues(request.shape, new Set(stored)), names), [], `metrics of request ${JSON.stringify(request.shape).slice(0, 400)}`);
          for (const point of changed) if (typeof point.attributes[MetricAttr.field] === "string") fields.add(point.attributes[MetricAttr.field] as string);
        }
        assert.ok(fields.size >= 5, `field attributes reached: ${[...fields].join(", ")}`);
      });
    });
  }
});
