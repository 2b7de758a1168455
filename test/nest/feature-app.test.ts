// QueryLibModule.forFeature in an application of its own (test/nest/feature-app): every query
// route is forFeature's, behind the fixture's guard. Over real HTTP: tenant isolation on Filter,
// Segment and Summary, masks, denied fields under every name, aliases, the audit trail, and the
// GET query string, which must answer exactly what the same Filter as a JSON body answers.
// Expectations come from the seed rows (entities.ts), filtered and sorted here in plain code.
import { expect } from "chai";
import { type INestApplication, Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import type { DataSource } from "typeorm";
import { DataType, Direction, Intersection, Operator, and, asc, cond, desc, filter, type Filter } from "../../lib/client/index.js";
import { filterToQueryString } from "../../lib/client/query-string.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import { QpConfigurationError, parseFilter, parseSegment, parseSummary } from "../../lib/index.js";
import { QpInMemoryAuditSink, QueryLibModule, queryLibOpenApiDocument } from "../../nest-module/index.js";
import { describeOnTargets, dialects } from "../support/targets.js";
import { type FeatureApp, StaffGuard, featureDatabase, featureRootOptions, startFeatureApp } from "./feature-app/app.js";
import { Clinic, Patient, PatientStatus, clinicRows, featureTenants, patientsOf } from "./feature-app/entities.js";
import { type Reply, assertNoStack, call } from "./support.js";

type Row = ReturnType<typeof patientsOf>[number];
type Claims = Record<string, unknown>;

const staff = (tenant: string): Claims => ({ sub: `staff-${tenant}`, roles: ["staff"], tenant });
const ids = (reply: Reply): number[] => reply.body.data.map((r: { id: number }) => r.id);
const idsOf = (rows: readonly Row[]) => rows.map((r) => r.id);

/** The README's Email mask written out: the local part keeps its first character. */
const maskEmail = (email: string) => {
  const at = email.lastIndexOf("@");
  return email[0] + "*".repeat(at - 1) + email.slice(at);
};

/** One page of rows, as pageNumber/pageSize cut it. */
const pageOf = <T>(rows: readonly T[], pageNumber: number, pageSize: number) => rows.slice((pageNumber - 1) * pageSize, pageNumber * pageSize);

/** Ascending on the keys in order (each key's comparator), the last key being the tie-break. */
const sortBy = (rows: readonly Row[], ...keys: ((a: Row, b: Row) => number)[]) =>
  [...rows].sort((a, b) => keys.reduce((result, key) => result || key(a, b), 0));
const byText = (get: (r: Row) => string) => (a: Row, b: Row) => (get(a) < get(b) ? -1 : get(a) > get(b) ? 1 : 0);
const byNumber = (get: (r: Row) => number) => (a: Row, b: Row) => get(a) - get(b);
const reversed = (compare: (a: Row, b: Row) => number) => (a: Row, b: Row) => compare(b, a);

/** Groups of at least MinGroupSize (2, featurePolicies) rows: what a guarded Summary returns. */
function groups<K extends string>(rows: readonly Row[], key: (r: Row) => K): [K, Row[]][] {
  const map = new Map<K, Row[]>();
  for (const r of rows) map.set(key(r), [...(map.get(key(r)) ?? []), r]);
  return [...map].filter(([, members]) => members.length >= 2).sort(([a], [b]) => (a < b ? -1 : 1));
}

/** A Filter whose conditions are joined with And, ordered by id unless given. */
const where = (...conditions: ReturnType<typeof cond>[]) => filter({ where: and(...conditions), orderBy: [asc("id")] });

interface EquivalenceCase {
  readonly title: string;
  readonly filter: Filter;
  /** The expected ids of the page, from the tenant's rows (in id order). */
  readonly expected: (rows: readonly Row[]) => number[];
  /** The expected totalCount, when the page is not everything. */
  readonly total?: (rows: readonly Row[]) => number;
  /** No tenant has a matching row (the case is about what must not match). */
  readonly matchesNothing?: true;
}

const selectThroughNavigation = filter({ where: cond("score", Operator.LessThan, 40), orderBy: [asc("id")], select: ["id", "name", "mrn", "clinic.name"] });

const punctuatedNames = ["Bo & Co", "Cy 50%", "Dana+Eve", "Ed [x]", "Fay=Gray", "Gus 🚀", "Hal?Ask", "Ivy#Hash", "Jo/Slash", "Kit;Semi"];

const equivalenceCases: EquivalenceCase[] = [
  {
    title: "Equal on an enum field",
    filter: where(cond("status", Operator.Equal, PatientStatus.Discharged, { dataType: DataType.Enum })),
    expected: (rows) => idsOf(rows.filter((r) => r.status === PatientStatus.Discharged)),
  },
  {
    title: "In on an enum field (one repeated key per value)",
    filter: where(cond("status", Operator.In, PatientStatus.Active, PatientStatus.Transferred, { dataType: DataType.Enum })),
    expected: (rows) => idsOf(rows.filter((r) => r.status !== PatientStatus.Discharged)),
  },
  {
    title: "IContains with an ampersand, spaces and other case",
    filter: where(cond("name", Operator.IContains, "BO & co")),
    expected: (rows) => idsOf(rows.filter((r) => r.name.toLowerCase().includes("bo & co"))),
  },
  {
    title: "Contains a LIKE wildcard (%) literally",
    filter: where(cond("name", Operator.Contains, "50%")),
    expected: (rows) => idsOf(rows.filter((r) => r.name.includes("50%"))),
  },
  {
    // As a LIKE pattern "y 5_" would match "Cy 50"; as text it matches nothing.
    title: "Contains an underscore literally",
    filter: where(cond("name", Operator.Contains, "y 5_")),
    expected: () => [],
    matchesNothing: true,
  },
  ...punctuatedNames.map((prefix): EquivalenceCase => ({
    title: `StartsWith "${prefix}"`,
    filter: where(cond("name", Operator.StartsWith, prefix)),
    expected: (rows) => idsOf(rows.filter((r) => r.name.startsWith(prefix))),
  })),
  {
    title: "In on text values holding & and %",
    filter: where(cond("name", Operator.In, "Bo & Co 01", "Bo & Co 13", "Cy 50% 02", "Cy 50% 14", "Lou Ray 11", "Lou Ray 23")),
    expected: (rows) => idsOf(rows.filter((r) => ["Bo & Co 01", "Bo & Co 13", "Cy 50% 02", "Cy 50% 14", "Lou Ray 11", "Lou Ray 23"].includes(r.name))),
  },
  {
    title: "In on a number field, other tenants' ids included",
    filter: where(cond("id", Operator.In, 1, 2, 3, 4, 5, 6, 7, 8, 9)),
    expected: (rows) => idsOf(rows.filter((r) => r.id <= 9)),
  },
  {
    title: "Between on a number field",
    filter: where(cond("score", Operator.Between, 10, 60)),
    expected: (rows) => idsOf(rows.filter((r) => r.score >= 10 && r.score <= 60)),
  },
  {
    title: "Between on a date field",
    filter: where(cond("admittedOn", Operator.Between, "2024-03-01", "2024-08-31", { dataType: DataType.Date })),
    expected: (rows) => idsOf(rows.filter((r) => r.admittedOn >= "2024-03-01" && r.admittedOn <= "2024-08-31")),
  },
  {
    title: "GreaterThan on a number field",
    filter: where(cond("score", Operator.GreaterThan, 50)),
    expected: (rows) => idsOf(rows.filter((r) => r.score > 50)),
  },
  {
    title: "GreaterThan on a date field",
    filter: where(cond("admittedOn", Operator.GreaterThan, "2024-06-30", { dataType: DataType.Date })),
    expected: (rows) => idsOf(rows.filter((r) => r.admittedOn > "2024-06-30")),
  },
  {
    title: "IsNull (an empty value) on a masked field",
    filter: where(cond("email", Operator.IsNull)),
    expected: (rows) => idsOf(rows.filter((r) => r.email === null)),
  },
  {
    title: "IsNotNull on a masked field",
    filter: where(cond("email", Operator.IsNotNull)),
    expected: (rows) => idsOf(rows.filter((r) => r.email !== null)),
  },
  {
    title: "Equal on a boolean field",
    filter: where(cond("insured", Operator.Equal, false)),
    expected: (rows) => idsOf(rows.filter((r) => !r.insured)),
  },
  {
    title: "Equal on an alias",
    filter: where(cond("mrn", Operator.Equal, "MRN-0004")),
    expected: (rows) => idsOf(rows.filter((r) => r.recordNumber === "MRN-0004")),
  },
  {
    title: "Equal through a navigation path, with an ampersand",
    filter: where(cond("clinic.name", Operator.Equal, "South & Sons")),
    expected: (rows) => idsOf(rows.filter((r) => r.clinic.name === "South & Sons")),
  },
  {
    title: "IContains a % through a navigation path",
    filter: where(cond("clinic.name", Operator.IContains, "50% CLINIC")),
    expected: (rows) => idsOf(rows.filter((r) => r.clinic.name === "East 50% Clinic")),
  },
  {
    title: "three conditions joined with And: enum In, number GreaterThanOrEqual, navigation IContains",
    filter: where(
      cond("status", Operator.In, PatientStatus.Active, PatientStatus.Discharged, { dataType: DataType.Enum }),
      cond("score", Operator.GreaterThanOrEqual, 30),
      cond("clinic.name", Operator.IContains, "s"),
    ),
    expected: (rows) => idsOf(rows.filter((r) => r.status !== PatientStatus.Transferred && r.score >= 30 && r.clinic.name.toLowerCase().includes("s"))),
  },
  {
    title: "order by an enum ascending, then a number descending, page 2 of 4",
    filter: filter({ orderBy: [asc("status"), desc("score")], page: { pageNumber: 2, pageSize: 4 } }),
    expected: (rows) => idsOf(pageOf(sortBy(rows, byText((r) => r.status), reversed(byNumber((r) => r.score))), 2, 4)),
    total: (rows) => rows.length,
  },
  {
    title: "order by a date descending, then id, page 1 of 5",
    filter: filter({ orderBy: [desc("admittedOn"), asc("id")], page: { pageNumber: 1, pageSize: 5 } }),
    expected: (rows) => idsOf(pageOf(sortBy(rows, reversed(byText((r) => r.admittedOn)), byNumber((r) => r.id)), 1, 5)),
    total: (rows) => rows.length,
  },
  {
    title: "order by id descending, page 3 of 4",
    filter: filter({ orderBy: [desc("id")], page: { pageNumber: 3, pageSize: 4 } }),
    expected: (rows) => idsOf(pageOf([...rows].reverse(), 3, 4)),
    total: (rows) => rows.length,
  },
  {
    title: "a condition with select and a navigation path in the select",
    filter: selectThroughNavigation,
    expected: (rows) => idsOf(rows.filter((r) => r.score < 40)),
  },
];

/** Refusals the GET form must answer exactly as the JSON body does (status and whole error body). */
const refusalCases: { title: string; filter: Filter; status: number; code: string; errorCode?: number }[] = [
  { title: "a denied field in where", filter: where(cond("nationalId", Operator.Equal, "SSN-1001")), status: 403, code: "FieldDeniedForWhere", errorCode: 1 },
  { title: "a denied field in where, another case", filter: where(cond("NATIONALID", Operator.Equal, "SSN-1001")), status: 403, code: "FieldDeniedForWhere", errorCode: 1 },
  { title: "the alias-hidden member name of a denied field", filter: where(cond("ssn", Operator.Equal, "SSN-1001")), status: 400, code: "ConditionMustHasValidFieldName" },
  { title: "a denied field through a navigation path", filter: where(cond("clinic.licenseKey", Operator.Equal, "LIC-1")), status: 403, code: "FieldDeniedForWhere", errorCode: 1 },
  { title: "a denied field in select", filter: filter({ select: ["id", "nationalId"] }), status: 403, code: "FieldDeniedForSelect", errorCode: 2 },
  { title: "a denied field in order", filter: filter({ orderBy: [desc("nationalId")] }), status: 403, code: "FieldDeniedForOrder", errorCode: 3 },
  { title: "a denied navigation field in order", filter: filter({ orderBy: [asc("Clinic.LicenseKey")] }), status: 403, code: "FieldDeniedForOrder", errorCode: 3 },
  { title: "an operator the DataType does not take (GreaterThan on an enum)", filter: where(cond("status", Operator.GreaterThan, "Active", { dataType: DataType.Enum })), status: 400, code: "UnsupportedDataTypeOperatorCombination" },
  { title: "a value that is not a number", filter: where(cond("score", Operator.GreaterThan, "many", { dataType: DataType.Number })), status: 400, code: "InvalidFormat" },
  { title: "a page above MaxPageSize", filter: filter({ page: { pageNumber: 1, pageSize: 21 } }), status: 400, code: "CapExceeded", errorCode: 9 },
];

/** Six conditions on distinct (field, operator) pairs: one over MaxConditions (5). */
const overConditionCap = where(
  cond("id", Operator.GreaterThan, 0), cond("id", Operator.LessThan, 100), cond("score", Operator.GreaterThanOrEqual, 0),
  cond("score", Operator.LessThanOrEqual, 100), cond("name", Operator.IContains, " "), cond("status", Operator.In, "Active", "Discharged", { dataType: DataType.Enum }),
);

describe("QueryLibModule.forFeature: a feature app with no query controller of its own", function () {
  describe("routes, guard and startup [sqlite]", () => {
    let f: FeatureApp;
    before(async () => {
      f = await startFeatureApp(await featureDatabase("sqlite"));
    });
    after(() => f?.close());

    it("runs the guard given to forFeature on every mounted route: 401 without a principal, 403 without the staff role", async () => {
      const routes = [["POST", "/patients/filter"], ["GET", "/patients/filter"], ["POST", "/patients/segment"], ["POST", "/patients/summary"], ["POST", "/clinics/filter"], ["GET", "/clinics/filter"], ["POST", "/clinics/summary"]] as const;
      const summary = (field: string) => ({ groupBy: { fields: [field], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });
      for (const [method, path] of routes) {
        const body = method === "GET" ? undefined : path.endsWith("summary") ? summary(path.startsWith("/patients") ? "status" : "city") : {};
        const runs = StaffGuard.runs;
        const anonymous = await call(f.url, method, path, { body });
        expect(anonymous.status, `${method} ${path}: ${anonymous.text}`).to.equal(401);
        expect(anonymous.body).to.deep.equal({ code: "Unauthorized", message: "sign in first" });
        const visitor = await call(f.url, method, path, { body, claims: { sub: "vic", roles: ["visitor"], tenant: "t-1" } });
        expect(visitor.status, `${method} ${path}: ${visitor.text}`).to.equal(403);
        expect(visitor.body.code).to.equal("Forbidden");
        expect(StaffGuard.runs - runs, `${method} ${path}`).to.equal(2);
        expect((await call(f.url, method, path, { body, claims: staff("t-1") })).status, `${method} ${path}`).to.equal(200);
      }
    });

    it("runs the guard before the request is read: a bad query string or body without a principal is 401, not 400", async () => {
      expect((await call(f.url, "GET", "/patients/filter?colour=red&page=abc")).status).to.equal(401);
      expect((await call(f.url, "POST", "/patients/summary", { body: { groupBy: "nationalId" } })).status).to.equal(401);
    });

    it("mounts only the listed shapes: clinics have no Segment route, and only the Filter has a GET route", async () => {
      const claims = staff("t-1");
      const segment = await call(f.url, "POST", "/clinics/segment", { body: { conditionSets: [] }, claims });
      expect(segment.status).to.equal(404);
      for (const path of ["/patients/segment", "/patients/summary", "/clinics/summary"]) expect((await call(f.url, "GET", path, { claims })).status, path).to.equal(404);
      const clinics = await call(f.url, "GET", "/clinics/filter?order=id:asc", { claims });
      expect(clinics.status, clinics.text).to.equal(200);
      expect(clinics.body.data).to.deep.equal(clinicRows().map(({ id, name, city }) => ({ id, name, city })));
      const summary = await call(f.url, "POST", "/clinics/summary", { body: { groupBy: { fields: ["city"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, orders: [{ sort: 1, field: "city" }] }, claims });
      expect(summary.status, summary.text).to.equal(200);
      expect(summary.body.data).to.deep.equal([{ city: "Lima", n: 2 }, { city: "Oslo", n: 2 }]);
    });

    it("fails startup with QpConfigurationError naming entities.expose when a forFeature entity is not exposed", async () => {
      const dataSource = await featureDatabase("sqlite");
      @Module({})
      class UnexposedFeatureModule {}
      const root = featureRootOptions(dataSource, new QpInMemoryAuditSink());
      let failure: unknown;
      let app: INestApplication | undefined;
      try {
        app = await NestFactory.create({
          module: UnexposedFeatureModule,
          imports: [
            // Patient only: Clinic is an entity of the DataSource, but not exposed.
            QueryLibModule.forRoot({ ...root, configure: (options) => void options.entities.expose(Patient, "patients") }),
            QueryLibModule.forFeature([{ entity: Patient, path: "patients" }, { entity: Clinic, path: "clinics" }]),
          ],
        }, { logger: false, abortOnError: false });
        await app.init();
      } catch (error) {
        failure = error;
      } finally {
        await app?.close().catch(() => undefined);
      }
      expect(failure).to.be.instanceOf(QpConfigurationError);
      expect((failure as Error).message).to.include("Clinic is not exposed").and.include("entities.expose(Clinic");
    });

    it("answers the refusals of @QpFilter, @QpSegment and @QpSummary with the module's whole error body (path, errorCode)", async () => {
      const claims = staff("t-1");
      const unknown = await call(f.url, "GET", "/patients/filter?colour=red", { claims });
      expect(unknown.status, unknown.text).to.equal(400);
      expect(unknown.body).to.include({ code: "InvalidQueryString", path: "colour" });
      const operator = await call(f.url, "POST", "/patients/filter", { body: { conditionGroup: { conditions: [{ sort: 1, field: "name", operator: "Like", values: ["x"] }] } }, claims });
      expect(operator.body).to.include({ code: "InvalidEnumValue", path: "conditionGroup.conditions[0].operator" });
      // A cap checked while parsing is a PolicyException: its number comes with it, as for one checked by the policy.
      const deep = Array.from({ length: 11 }, () => "clinic").join(".");
      const capped = await call(f.url, "POST", "/patients/segment", { body: { conditionSets: [], selects: [deep] }, claims });
      expect(capped.status, capped.text).to.equal(400);
      expect(capped.body).to.include({ code: "CapExceeded", errorCode: 9, path: "selects[0]" });
    });

    it("reads each POST body as its route's shape, whatever its members say, on the first sighting and on repeats", async () => {
      const claims = staff("t-1");
      const segmentBody = { conditionSets: [{ sort: 1, conditionGroup: { conditions: [{ sort: 1, field: "name", dataType: "Text", operator: "IsNotNull", values: [] }] } }] };
      const summaryBody = { groupBy: { fields: ["status"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } };
      const filterBody = { conditionGroup: { conditions: [{ sort: 1, field: "name", dataType: "Text", operator: "IsNotNull", values: [] }] }, page: { pageNumber: 1, pageSize: 5 } };
      const refusalOf = (parse: (json: unknown) => unknown, json: unknown) => {
        try {
          parse(json);
        } catch (error) {
          return error as { code: string; path?: string };
        }
        throw new Error(`the parser accepts ${JSON.stringify(json)}`);
      };
      for (const [path, body, parse] of [["/patients/filter", segmentBody, parseFilter], ["/patients/filter", summaryBody, parseFilter], ["/patients/segment", filterBody, parseSegment]] as const) {
        const expected = refusalOf(parse, body);
        for (let i = 0; i < 3; i++) {
          const reply = await call(f.url, "POST", path, { body, claims });
          expect(reply.status, `${path} ${i}: ${reply.text}`).to.equal(400);
          expect(reply.body).to.include({ code: expected.code, path: expected.path });
        }
      }
      // The Filter body answers on its own route, again and again (a cached plan from the second time).
      for (let i = 0; i < 3; i++) {
        const reply = await call(f.url, "POST", "/patients/filter", { body: filterBody, claims });
        expect(reply.status, reply.text).to.equal(200);
        expect(reply.body.data).to.have.length(5);
      }
      // Not a JSON object at all: refused before any shape is read.
      const text = await call(f.url, "POST", "/patients/filter", { raw: "[]", claims });
      expect(text.status, text.text).to.equal(400);
      expect(text.body).to.include({ code: "InvalidRequestBody" });
    });
  });

  describeOnTargets("forFeature routes of the feature app", dialects, featureDatabase, (_target, dataSource: () => DataSource) => {
    let f: FeatureApp;
    before(async () => {
      f = await startFeatureApp(dataSource());
    });
    after(() => f?.close());

    /** Every body answered 200 without dropping anything, for the OpenAPI check at the end. */
    const answered: { path: string; body: unknown }[] = [];
    const post = async (path: string, body: unknown, claims: Claims = staff("t-2"), headers?: Record<string, string>) => {
      const reply = await call(f.url, "POST", path, { body, claims, headers });
      assertNoStack(reply);
      if (reply.status === 200 && !reply.body.policy?.entries?.some((e: { action: string }) => e.action === "Dropped")) answered.push({ path, body });
      return reply;
    };
    const get = async (path: string, claims: Claims = staff("t-2"), headers?: Record<string, string>) => {
      const reply = await call(f.url, "GET", path, { claims, headers });
      assertNoStack(reply);
      return reply;
    };

    describe("tenant isolation", () => {
      it("Filter: each tenant gets exactly its own patients, whatever it asks for", async () => {
        for (const tenant of featureTenants) {
          const reply = await post("/patients/filter", { selects: ["id", "tenantId"], orders: [{ sort: 1, field: "id" }], page: { pageNumber: 1, pageSize: 20 } }, staff(tenant));
          expect(reply.status, reply.text).to.equal(200);
          expect(ids(reply)).to.deep.equal(idsOf(patientsOf(tenant)));
          expect(reply.body.totalCount).to.equal(12);
          expect(new Set(reply.body.data.map((r: { tenantId: string }) => r.tenantId))).to.deep.equal(new Set([tenant]));
          // An Or naming every tenant, or another tenant outright, cannot widen the scope.
          const escape = await post("/patients/filter", {
            conditionGroup: { connector: "Or", conditions: featureTenants.map((t, i) => ({ sort: i + 1, field: "tenantId", operator: "Equal", values: [t] })) },
            orders: [{ sort: 1, field: "id" }], page: { pageNumber: 1, pageSize: 20 },
          }, staff(tenant));
          expect(ids(escape)).to.deep.equal(idsOf(patientsOf(tenant)));
          const other = featureTenants.find((t) => t !== tenant)!;
          const elsewhere = await get(`/patients/filter?where[tenantId][Equal]=${other}`, staff(tenant));
          expect(elsewhere.status, elsewhere.text).to.equal(200);
          expect(elsewhere.body.totalCount).to.equal(0);
        }
      });

      it("Segment: sets are combined inside the tenant (Union, Except; no set at all is the whole tenant)", async () => {
        for (const tenant of featureTenants) {
          const rows = patientsOf(tenant);
          const reply = await post("/patients/segment", {
            conditionSets: [
              { sort: 1, conditionGroup: { conditions: [{ sort: 1, field: "status", dataType: "Enum", operator: "Equal", values: ["Active"] }] } },
              { sort: 2, intersection: Intersection.Union, conditionGroup: { conditions: [{ sort: 1, field: "score", dataType: "Number", operator: "LessThan", values: [20] }] } },
              { sort: 3, intersection: Intersection.Except, conditionGroup: { conditions: [{ sort: 1, field: "insured", dataType: "Boolean", operator: "Equal", values: [false] }] } },
            ],
            selects: ["id"], orders: [{ sort: 1, field: "id" }],
          }, staff(tenant));
          expect(reply.status, reply.text).to.equal(200);
          const expected = idsOf(rows.filter((r) => (r.status === PatientStatus.Active || r.score < 20) && r.insured));
          expect(expected.length).to.be.greaterThan(0);
          expect(reply.body.data).to.deep.equal(expected.map((id) => ({ id })));
          const everything = await post("/patients/segment", { conditionSets: [], selects: ["id"], orders: [{ sort: 1, field: "id" }] }, staff(tenant));
          expect(ids(everything)).to.deep.equal(idsOf(rows));
        }
      });

      it("Summary: groups count the tenant's rows only, through a navigation, under the group floor", async () => {
        for (const tenant of featureTenants) {
          const rows = patientsOf(tenant);
          const byClinic = await post("/patients/summary", {
            groupBy: { fields: ["clinic.name"], aggregateBy: [{ alias: "n", aggregator: "Count" }, { alias: "top", field: "score", aggregator: "Maximum" }] },
            orders: [{ sort: 1, field: "clinic.name" }],
          }, staff(tenant));
          expect(byClinic.status, byClinic.text).to.equal(200);
          expect(byClinic.body.data).to.deep.equal(groups(rows, (r) => r.clinic.name).map(([clinicName, members]) => ({ clinicName, n: members.length, top: Math.max(...members.map((m) => m.score)) })));
          const byTenant = await post("/patients/summary", { groupBy: { fields: ["tenantId"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } }, staff(tenant));
          expect(byTenant.body.data).to.deep.equal([{ tenantId: tenant, n: 12 }]);
          // MinGroupSize 2: a group of one (each patient's own score) never comes back.
          const singles = await post("/patients/summary", { groupBy: { fields: ["score"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } }, staff(tenant));
          expect(singles.status, singles.text).to.equal(200);
          expect(singles.body.data).to.deep.equal([]);
          const having = await post("/patients/summary", {
            groupBy: { fields: ["status"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, orders: [{ sort: 1, field: "status" }],
            having: { conditions: [{ sort: 1, field: "n", dataType: "Number", operator: "GreaterThanOrEqual", values: [4] }] },
          }, staff(tenant));
          expect(having.body.data).to.deep.equal(groups(rows, (r) => r.status).filter(([, m]) => m.length >= 4).map(([status, m]) => ({ status, n: m.length })));
        }
      });

      it("a navigation from the shared clinics into the scoped patients is refused (their rows would escape the tenant)", async () => {
        const select = await post("/clinics/filter", { selects: ["id", "patients.name"] });
        expect(select.status, select.text).to.equal(403);
        expect(select.body).to.include({ code: "FieldDeniedForSelect", errorCode: 2, path: "selects[1]" });
        const condition = await get("/clinics/filter?where[patients.name][IContains]=a");
        expect(condition.status, condition.text).to.equal(403);
        expect(condition.body).to.include({ code: "FieldDeniedForWhere", errorCode: 1 });
      });
    });

    describe("field policies", () => {
      it("masks the e-mail on POST and GET alike, and finds a row by its whole stored value", async () => {
        const rows = patientsOf("t-3");
        for (const reply of [
          await post("/patients/filter", { selects: ["id", "email"], orders: [{ sort: 1, field: "id" }], page: { pageNumber: 1, pageSize: 20 } }, staff("t-3")),
          await get("/patients/filter?select=id,email&order=id&page=1&pageSize=20", staff("t-3")),
        ]) {
          expect(reply.status, reply.text).to.equal(200);
          expect(reply.body.data).to.deep.equal(rows.map((r) => ({ id: r.id, email: r.email === null ? null : maskEmail(r.email) })));
        }
        const one = rows.find((r) => r.email !== null)!;
        const found = await get(`/patients/filter?where[email][Equal]=${encodeURIComponent(one.email!)}&select=id,email`, staff("t-3"));
        expect(found.body.data).to.deep.equal([{ id: one.id, email: maskEmail(one.email!) }]);
        expect(found.text).not.to.include(one.email!);
      });

      it("leaves the denied field out of the default projection and shows the aliased one under its alias", async () => {
        const reply = await get("/patients/filter?order=id&page=1&pageSize=20");
        expect(reply.status, reply.text).to.equal(200);
        const rows = patientsOf("t-2");
        expect(reply.body.data.map((r: Record<string, unknown>) => Object.keys(r).sort())).to.deep.equal(rows.map(() => ["admittedOn", "clinicId", "email", "id", "insured", "mrn", "name", "score", "status", "tenantId"]));
        expect(reply.body.data.map((r: { mrn: string }) => r.mrn)).to.deep.equal(rows.map((r) => r.recordNumber));
        // The trace names the denied member by its public name only, as dropped from the default projection.
        expect(reply.text).not.to.match(/SSN-|recordNumber|\bssn\b/i);
        const traced = reply.body.policy.entries.filter((e: { field: string }) => e.field === "nationalId");
        expect(traced).to.have.length(1);
        expect(traced[0]).to.include({ feature: "Select", action: "Dropped", source: "QpDenied on Patient.nationalId", enforced: true });
        const hidden = await post("/patients/filter", { selects: ["recordNumber"] });
        expect(hidden.status).to.equal(400);
        expect(hidden.body).to.include({ code: "ConditionMustHasValidFieldName", path: "selects[0]" });
      });

      it("refuses the denied field under every name: case variants, its alias, the member name the alias hides, navigation paths", async () => {
        const condition = (field: string) => ({ conditionGroup: { conditions: [{ sort: 1, field, operator: "Equal", values: ["x"] }] } });
        for (const field of ["nationalId", "NATIONALID", "nationalid", "NationalId"]) {
          const reply = await post("/patients/filter", condition(field));
          expect(reply.status, field).to.equal(403);
          expect(reply.body, field).to.include({ code: "FieldDeniedForWhere", errorCode: 1, path: "conditionGroup.conditions[0].field" });
        }
        // The member name behind the alias is as unknown as a name that never existed: nothing tells them apart.
        const never = await post("/patients/filter", condition("noSuchField"));
        expect(never.status).to.equal(400);
        for (const field of ["ssn", "SSN", "Ssn"]) {
          const reply = await post("/patients/filter", condition(field));
          expect(reply.status, field).to.equal(400);
          expect({ ...reply.body, message: undefined }, field).to.deep.equal({ ...never.body, message: undefined });
          expect(reply.body.message, field).to.equal(never.body.message.replaceAll("noSuchField", field));
        }
        for (const field of ["clinic.licenseKey", "Clinic.LicenseKey", "CLINIC.licensekey"]) {
          const reply = await post("/patients/filter", condition(field));
          expect(reply.status, field).to.equal(403);
          expect(reply.body, field).to.include({ code: "FieldDeniedForWhere", errorCode: 1 });
        }
        const onClinics = await post("/clinics/filter", condition("LicenseKey"));
        expect(onClinics.body).to.include({ code: "FieldDeniedForWhere", errorCode: 1 });
      });

      it("refuses the denied field in select, order, group, aggregate, having and a Segment set (Strict tier)", async () => {
        const expectRefused = (reply: Reply, status: number, code: string, path: string) => {
          expect(reply.status, reply.text).to.equal(status);
          expect(reply.body, reply.text).to.include({ code, path });
          expect(reply.text).not.to.include("SSN-");
        };
        expectRefused(await post("/patients/filter", { selects: ["id", "NationalID"] }), 403, "FieldDeniedForSelect", "selects[1]");
        expectRefused(await post("/patients/filter", { selects: ["clinic.licenseKey"] }), 403, "FieldDeniedForSelect", "selects[0]");
        expectRefused(await post("/patients/filter", { orders: [{ sort: 1, field: "nationalId", direction: "Descending" }] }), 403, "FieldDeniedForOrder", "orders[0].field");
        expectRefused(await post("/patients/segment", { conditionSets: [], orders: [{ sort: 1, field: "clinic.licenseKey" }] }), 403, "FieldDeniedForOrder", "orders[0].field");
        expectRefused(await post("/patients/summary", { groupBy: { fields: ["nationalId"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } }), 403, "FieldDeniedForGroup", "groupBy.fields[0]");
        expectRefused(await post("/patients/summary", { groupBy: { fields: ["clinic.licenseKey"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } }), 403, "FieldDeniedForGroup", "groupBy.fields[0]");
        expectRefused(
          await post("/patients/summary", { groupBy: { fields: ["status"], aggregateBy: [{ alias: "last", field: "nationalId", aggregator: "Maximum" }] }, having: { conditions: [{ sort: 1, field: "last", operator: "Equal", values: ["SSN-1001"] }] } }),
          403, "FieldDeniedForAggregate", "groupBy.aggregateBy[0].field",
        );
        // Having names aggregate aliases only: the denied field itself is not one.
        expectRefused(
          await post("/patients/summary", { groupBy: { fields: ["status"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, having: { conditions: [{ sort: 1, field: "nationalId", operator: "Equal", values: ["x"] }] } }),
          400, "HavingField[nationalId]MustExistInAggregateByAliases", "having.conditions[0].field",
        );
        expectRefused(
          await post("/patients/segment", { conditionSets: [{ sort: 1, conditionGroup: { conditions: [{ sort: 1, field: "nationalId", operator: "Equal", values: ["x"] }] } }] }),
          403, "FieldDeniedForSegment", "conditionSets[0].conditionGroup.conditions[0].field",
        );
      });

      it("audits the QpAudit field on GET and POST, per request, for the caller", async () => {
        await get("/patients/filter?where[score][GreaterThan]=90&select=id,score", staff("t-1"), { "x-request-id": "feature-audit-get" });
        await post("/patients/filter", { selects: ["id", "name"] }, staff("t-1"), { "x-request-id": "feature-audit-none" });
        await post("/patients/filter", { selects: ["id", "score"] }, staff("t-3"), { "x-request-id": "feature-audit-post" });
        const events = (requestId: string) => f.sink.events.filter((e) => e.clientRequestId === requestId)
          .map((e) => [e.entity, e.field, e.feature, e.action, e.method, e.subjects.find((s) => s.kind === "Tenant")?.value]).sort();
        expect(events("feature-audit-get")).to.deep.equal([["patients", "score", "Select", "Allowed", "GET", "t-1"], ["patients", "score", "Where", "Allowed", "GET", "t-1"]]);
        expect(events("feature-audit-none")).to.deep.equal([]);
        expect(events("feature-audit-post")).to.deep.equal([["patients", "score", "Select", "Allowed", "POST", "t-3"]]);
      });

      it("refuses the SQL text (?sql=true) on GET as on POST: the forced tenant value would show", async () => {
        const viaPost = await post("/patients/filter?sql=true", {});
        const viaGet = await get("/patients/filter?sql=true");
        expect(viaPost.status).to.equal(403);
        expect(viaPost.body).to.include({ code: "QueryStringDenied", errorCode: 14 });
        expect(viaGet.body).to.deep.equal(viaPost.body);
        expect((await get("/patients/filter?sql=true&sql=true")).body.code).to.equal("InvalidRequest");
      });
    });

    describe("the GET query string answers what the JSON body answers", () => {
      const pick = (reply: Reply) => ({ data: reply.body.data, totalCount: reply.body.totalCount, pageCount: reply.body.pageCount, pageNumber: reply.body.pageNumber, pageSize: reply.body.pageSize });

      for (const c of equivalenceCases) {
        it(c.title, async () => {
          const search = filterToQueryString(c.filter);
          // Some tenant has rows to find, so an answer of nothing cannot pass for a right one.
          expect(featureTenants.some((t) => c.expected(patientsOf(t)).length > 0)).to.equal(!c.matchesNothing);
          for (const tenant of featureTenants) {
            const rows = patientsOf(tenant);
            const viaPost = await post("/patients/filter", c.filter, staff(tenant));
            const viaGet = await get(`/patients/filter?${search}`, staff(tenant));
            expect(viaPost.status, viaPost.text).to.equal(200);
            expect(viaGet.status, `${search}: ${viaGet.text}`).to.equal(200);
            expect(ids(viaPost), tenant).to.deep.equal(c.expected(rows));
            expect(viaPost.body.totalCount, tenant).to.equal(c.total ? c.total(rows) : c.expected(rows).length);
            expect(pick(viaGet), `${tenant}: ?${search}`).to.deep.equal(pick(viaPost));
          }
        });
      }

      it("selects through a navigation path: exactly the selected members, the alias and the clinic's name (with its key, 2.1.5)", async () => {
        const reply = await get(`/patients/filter?${filterToQueryString(selectThroughNavigation)}`, staff("t-1"));
        expect(reply.body.data).to.deep.equal(patientsOf("t-1").filter((r) => r.score < 40).map((r) => ({ id: r.id, name: r.name, mrn: r.recordNumber, clinic: { name: r.clinic.name, id: r.clinic.id } })));
      });

      it("the GET form of these cases is the documented grammar (spot check of the encoding)", () => {
        expect(filterToQueryString(equivalenceCases[1]!.filter)).to.equal("where%5Bstatus%5D%5BIn%5D=Active&where%5Bstatus%5D%5BIn%5D=Transferred&order=id%3Aasc");
        expect(filterToQueryString(equivalenceCases[2]!.filter)).to.equal("where%5Bname%5D%5BIContains%5D=BO+%26+co&order=id%3Aasc");
        expect(filterToQueryString(where(cond("email", Operator.IsNull)))).to.equal("where%5Bemail%5D%5BIsNull%5D=&order=id%3Aasc");
      });

      for (const c of refusalCases) {
        it(`refuses ${c.title} as the JSON body does`, async () => {
          const viaPost = await post("/patients/filter", c.filter);
          const viaGet = await get(`/patients/filter?${filterToQueryString(c.filter)}`);
          expect(viaPost.status, viaPost.text).to.equal(c.status);
          expect(viaPost.body.code).to.equal(c.code);
          expect(viaPost.body.errorCode).to.equal(c.errorCode);
          expect(viaGet.status, viaGet.text).to.equal(viaPost.status);
          expect(viaGet.body).to.deep.equal(viaPost.body);
        });
      }

      it("refuses more conditions than MaxConditions as the JSON body does", async () => {
        const viaPost = await post("/patients/filter", overConditionCap);
        expect(viaPost.status, viaPost.text).to.equal(400);
        expect(viaPost.body).to.include({ code: "CapExceeded", errorCode: 9, path: "conditionGroup" });
        const search = filterToQueryString(overConditionCap);
        expect(new URLSearchParams(search).getAll("where[status][In]")).to.deep.equal(["Active", "Discharged"]);
        const viaGet = await get(`/patients/filter?${search}`);
        expect(viaGet.status).to.equal(viaPost.status);
        expect(viaGet.body).to.deep.equal(viaPost.body);
        // Five (the cap) is answered.
        const atCap = filterToQueryString({ ...overConditionCap, conditionGroup: { ...overConditionCap.conditionGroup!, conditions: overConditionCap.conditionGroup!.conditions.slice(0, 5) } });
        const answered = await get(`/patients/filter?${atCap}`);
        expect(answered.status, answered.text).to.equal(200);
        expect(ids(answered)).to.deep.equal(idsOf(patientsOf("t-2").filter((r) => r.name.includes(" "))));
      });

      it("refuses what the grammar does not allow with 400 InvalidQueryString", async () => {
        const cases: [string, RegExp][] = [
          ["colour=red", /"colour" is not a filter parameter/],
          ["where[name][Like]=x", /"Like" is not an operator/],
          ["page=abc&pageSize=5", /page must be a whole number, not "abc"/],
          ["page=1&page=2&pageSize=5", /page must be given once/],
          ["where[email][IsNull]=x", /IsNull takes no value/],
          ["where[email][IsNull]=&where[email][IsNull]=", /IsNull takes no value/],
          ["order=score:sideways", /"score:sideways" is not field, field:asc or field:desc/],
          ["Where[name][Equal]=x", /"Where\[name\]\[Equal\]" is not a filter parameter/],
        ];
        for (const [search, message] of cases) {
          const reply = await get(`/patients/filter?${search}`);
          expect(reply.status, search).to.equal(400);
          expect(reply.body.code, search).to.equal("InvalidQueryString");
          expect(reply.body.message, search).to.match(message);
        }
      });

      it("reads operator names in any case and a field in any case, as the JSON body does", async () => {
        const viaGet = await get("/patients/filter?where[STATUS][in]=Active&where[Status][IN]=Discharged&where[score][greaterthan]=40&order=ID:DESC");
        const viaPost = await post("/patients/filter", filter({
          where: and(cond("STATUS", Operator.In, "Active", { dataType: DataType.Enum }), cond("Status", Operator.In, "Discharged", { dataType: DataType.Enum }), cond("score", Operator.GreaterThan, 40)),
          orderBy: [{ field: "ID", direction: Direction.Descending }],
        }));
        expect(viaPost.status, viaPost.text).to.equal(200);
        expect(ids(viaPost)).to.deep.equal([]);
        expect(pick(viaGet)).to.deep.equal(pick(viaPost));
        const one = await get("/patients/filter?where[STATUS][in]=Active&where[STATUS][in]=Discharged&where[score][greaterthan]=40&order=ID:DESC");
        expect(ids(one)).to.deep.equal(idsOf(patientsOf("t-2").filter((r) => r.status !== PatientStatus.Transferred && r.score > 40)).reverse());
      });
    });

    // Last, after every other suite of this target: the app's own OpenAPI document against what it answered.
    describe("exports (exports: true)", () => {
      const raw = async (method: "GET" | "POST", path: string, claims: Claims, accept: string, body?: unknown) => {
        const response = await fetch(`${f.url}${path}`, {
          method, headers: { "x-test-claims": JSON.stringify(claims), accept, ...(body ? { "content-type": "application/json" } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}),
        });
        return { status: response.status, type: response.headers.get("content-type") ?? "", disposition: response.headers.get("content-disposition") ?? "", text: await response.text() };
      };

      it("NDJSON by default: the tenant's rows, masked, every one once; the same by GET", async () => {
        for (const tenant of featureTenants) {
          const reply = await raw("POST", "/patients/export", staff(tenant), "*/*", { selects: ["id", "tenantId", "email"], orders: [{ sort: 1, field: "id" }] });
          expect(reply.status, reply.text).to.equal(200);
          expect(reply.type).to.match(/^application\/x-ndjson/);
          expect(reply.disposition).to.equal('attachment; filename="patients.ndjson"');
          const rows = reply.text.trimEnd().split("\n").map((line) => JSON.parse(line) as { id: number; tenantId: string; email: string | null });
          expect(rows.map((r) => r.id)).to.deep.equal(idsOf(patientsOf(tenant)));
          expect(new Set(rows.map((r) => r.tenantId))).to.deep.equal(new Set([tenant]));
          expect(rows.map((r) => r.email)).to.deep.equal(patientsOf(tenant).map((p) => (p.email === null ? null : maskEmail(p.email))));
          const byGet = await raw("GET", "/patients/export?select=id,tenantId,email&order=id", staff(tenant), "application/x-ndjson");
          expect(byGet.text).to.equal(reply.text);
        }
      });

      it("CSV for Accept: text/csv, with a header; a refused request is the module's error, not a stream", async () => {
        const reply = await raw("GET", "/patients/export?select=id,name&order=id", staff("t-1"), "text/csv");
        expect(reply.status, reply.text).to.equal(200);
        expect(reply.type).to.match(/^text\/csv/);
        const lines = reply.text.trimEnd().split("\n");
        expect(lines[0]).to.equal("id,name");
        expect(lines.length).to.equal(patientsOf("t-1").length + 1);
        const denied = await raw("POST", "/patients/export", staff("t-1"), "text/csv", { selects: ["nationalId"] });
        expect(denied.status).to.be.within(400, 403);
        expect(JSON.parse(denied.text).code).to.be.a("string");
        expect((await raw("POST", "/clinics/export", staff("t-1"), "*/*", {})).status, "clinics have no export").to.equal(404);
      });
    });

    describe("its OpenAPI document", () => {
      it("describes every body this app answered 200 above (canonically written), and lists exactly its routes", () => {
        const document = queryLibOpenApiDocument(f.app);
        expect(Object.keys(document.paths).sort()).to.deep.equal(["/clinics/filter", "/clinics/summary", "/patients/export", "/patients/filter", "/patients/segment", "/patients/summary"]);
        const ajv = new Ajv2020({ strict: false });
        ajv.addSchema({ $id: "feature", components: document.components });
        const parsers = { filter: parseFilter, segment: parseSegment, summary: parseSummary } as const;
        // The document names each field by its canonical spelling (docs/NESTJS.md, OpenAPI); a case variant the server also reads is left out.
        const spellings = new Map(Object.values(document.components.schemas).flatMap((schema) => {
          const listed = (schema as { enum?: unknown[] }).enum ?? [];
          return listed.filter((v): v is string => typeof v === "string").map((v) => [v.toLowerCase(), v] as const);
        }));
        const names = (value: unknown): string[] => Array.isArray(value) ? value.flatMap(names)
          : value && typeof value === "object" ? Object.entries(value).flatMap(([key, inner]) => (key === "field" || key === "selects" || key === "fields") && typeof inner === "string" ? [inner] : key === "selects" || key === "fields" ? (inner as unknown[]).filter((v): v is string => typeof v === "string") : names(inner))
          : [];
        const canonicalOnly = answered.filter(({ body }) => names(body).every((n) => (spellings.get(n.toLowerCase()) ?? n) === n));
        expect(canonicalOnly.length, "bodies answered 200 in canonical spelling").to.be.greaterThan(20);
        for (const { path, body } of canonicalOnly) {
          const [, entity, shape] = path.split("/") as [string, string, keyof typeof parsers];
          const schema = `${entity.charAt(0).toUpperCase()}${entity.slice(1)}${shape.charAt(0).toUpperCase()}${shape.slice(1)}`;
          const validate = ajv.getSchema(`feature#/components/schemas/${schema}`)!;
          const canonical = JSON.parse(JSON.stringify(parsers[shape](body)));
          expect(validate(canonical), `${path} ${JSON.stringify(body)}: ${JSON.stringify(validate.errors?.slice(0, 2))}`).to.equal(true);
        }
      });
    });
  });
});
