// The seven admin routes over HTTP on a real Nest app (QueryLibModule.forRoot({ admin })):
// statuses, bodies, validation, error mapping, and rules taking effect on the next request.
import { expect } from "chai";
import { type IQpRuleStore, QpInMemoryRuleStore, type QpRule, StoreFailureMode } from "../../lib/index.js";
import { type Reply, type TestApp, assertNoStack, call, callers, closeDatabases, expectedIds, accountsDatabase, startTestApp } from "./support.js";

describe("querylib/nest admin API", function () {
  let t: TestApp;
  const as = (claims: Record<string, unknown> | undefined) => (method: string, path: string, body?: unknown, raw?: string) =>
    call(t.url, method, path, { claims, body, raw }).then((reply) => {
      assertNoStack(reply);
      return reply;
    });
  const reader = as(callers.reader);
  const writer = as(callers.writer);

  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t.close();
    await closeDatabases();
  });

  const expectError = (reply: Reply, status: number, code: string, messagePattern?: RegExp) => {
    expect(reply.status, reply.text).to.equal(status);
    expect(reply.body.code, reply.text).to.equal(code);
    expect(reply.body.message).to.be.a("string");
    if (messagePattern) expect(reply.body.message).to.match(messagePattern);
    expect(Object.keys(reply.body)).to.satisfy((keys: string[]) => keys.every((k) => ["code", "errorCode", "message", "path", "errors"].includes(k)));
  };

  describe("GET /health", () => {
    it("answers 200 with the snapshot version and the store's epoch, age, degraded state and last error", async () => {
      const reply = await reader("GET", "/qp-admin/health");
      expect(reply.status).to.equal(200);
      expect(reply.body).to.have.keys(["snapshotVersion", "snapshotEpoch", "snapshotAgeMs", "degraded", "lastError", "storeFailure", "notifications"]);
      // null until the engine has loaded a snapshot, then the store's epoch.
      if (reply.body.snapshotEpoch !== null) expect(reply.body.snapshotEpoch).to.match(/^[0-9a-f-]{36}$/);
      expect(reply.body.degraded).to.equal(false);
      expect(reply.body.notifications).to.equal("polling-only");
      expect(reply.body.lastError).to.equal(null);
      expect(reply.body.storeFailure).to.equal("LastKnownGood");
      expect(reply.body.snapshotAgeMs).to.be.a("number").and.to.be.at.least(0);
    });
  });

  describe("GET /lint", () => {
    it("answers 200 with the linter's findings over the configuration and the current rules, at the write level: a reader or a member gets 403", async () => {
      // The findings name what each caller's policy leaves open: for whoever writes the policy (#42).
      const refused = await reader("GET", "/qp-admin/lint");
      expect(refused.status, refused.text).to.equal(403);
      expect(refused.body.code).to.equal("Forbidden");
      const reply = await writer("GET", "/qp-admin/lint");
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body).to.be.an("array");
      for (const finding of reply.body) {
        expect(finding).to.have.keys(["code", "severity", "entity", "field", "feature", "subject", "source", "why", "fix"]);
        expect(["error", "warning", "info"]).to.include(finding.severity);
      }
      const member = await call(t.url, "GET", "/qp-admin/lint", { claims: callers.member });
      expect(member.status).to.equal(403);
    });

    it("a rule that masks a field for a role: its upsert answers with the findings it introduces, GET /lint lists them, the rule read back can be sent again", async () => {
      const created = await writer("POST", "/qp-admin/rules", {
        id: "lint-mask", subjectKind: "Role", subject: "auditor", entity: "accounts", field: "name", features: 2, effect: "Mask", mask: { strategy: "Full" },
      });
      expect(created.status, created.text).to.equal(201);
      const introduced = created.body.lint as { code: string; field: string; subject: string }[];
      expect(introduced.map((f) => `${f.code} ${f.field} ${f.subject}`)).to.include.members(["OrderableWhileHidden name Role:auditor", "ProbeableWhileHidden name Role:auditor"]);
      const again = await writer("POST", "/qp-admin/rules", { ...created.body, changedBy: undefined, changedAt: undefined });
      expect(again.status, again.text).to.equal(200);
      expect(again.body.lint, "replacing a rule with itself introduces nothing").to.deep.equal([]);
      const findings = (await writer("GET", "/qp-admin/lint")).body as { code: string; field: string; subject: string; source: string }[];
      expect(findings.some((f) => f.code === "OrderableWhileHidden" && f.field === "name" && f.subject === "Role:auditor" && f.source === "rule lint-mask")).to.equal(true);
      expect((await writer("DELETE", "/qp-admin/rules/lint-mask")).status).to.equal(204);
    });
  });

  describe("refuseRuleFindings", () => {
    let strict: TestApp;
    before(async () => {
      strict = await startTestApp({ module: { admin: { routePrefix: "/qp-admin", readPolicy: "reader", writePolicy: "writer", refuseRuleFindings: "error" } } });
    });
    after(() => strict.close());

    it("refuses a rule that introduces an error-level finding with 409 RuleRejected naming it, and writes nothing; a harmless rule passes", async () => {
      const mask = { id: "strict-mask", subjectKind: "Role", subject: "auditor", entity: "accounts", field: "name", features: 2, effect: "Mask", mask: { strategy: "Full" } };
      const refused = await call(strict.url, "POST", "/qp-admin/rules", { claims: callers.writer, body: mask });
      expect(refused.status, refused.text).to.equal(409);
      expect(refused.body.code).to.equal("RuleRejected");
      expect(refused.body.message).to.match(/OrderableWhileHidden at accounts\.name/);
      expect((await call(strict.url, "GET", "/qp-admin/rules", { claims: callers.reader })).body).to.deep.equal([]);
      const deny = await call(strict.url, "POST", "/qp-admin/rules", { claims: callers.writer, body: { ...mask, id: "strict-deny", features: 63, effect: "Deny", mask: undefined } });
      expect(deny.status, deny.text).to.equal(201);
      expect(deny.body.lint).to.deep.equal([]);
      expect((await call(strict.url, "DELETE", "/qp-admin/rules/strict-deny", { claims: callers.writer })).status).to.equal(204);
    });
  });

  describe("POST /schema", () => {
    it("answers 200 with the caller's fields: sealed ones absent, labels, masks, allowed values", async () => {
      const reply = await reader("POST", "/qp-admin/schema", { entity: "accounts" });
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body.entity).to.equal("accounts");
      expect(reply.body.roots).to.deep.equal([""]);
      const byPath = new Map<string, any>(reply.body.fields.map((f: any) => [f.path, f]));
      expect([...byPath.keys()].sort()).to.deep.equal(["email", "id", "name", "region", "salary", "status", "tenantId"]);
      expect(byPath.get("name").label).to.equal("Account holder");
      expect(byPath.get("name").group).to.equal("Identity");
      expect(byPath.get("email").masked).to.equal(true);
      expect(byPath.get("email").operators).to.deep.equal(["Equal", "In"]);
      expect(byPath.get("region").features).to.not.include("Where");
      expect(byPath.get("status").allowedValues).to.deep.equal(["Open", "Frozen", "Closed"]);
      for (const field of reply.body.fields) expect(field.parent).to.equal("");
    });

    it("reads body keys in any case", async () => {
      const reply = await reader("POST", "/qp-admin/schema", { Entity: "accounts", DEPTH: 1 });
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body.depth).to.equal(1);
    });

    it("answers 404 UnknownEntity for a name that is not exposed", async () => {
      expectError(await reader("POST", "/qp-admin/schema", { entity: "Account" }), 404, "UnknownEntity", /Account/);
    });

    it("answers 400 InvalidRequestBody naming each problem", async () => {
      const missing = await reader("POST", "/qp-admin/schema", { depth: 2 });
      expectError(missing, 400, "InvalidRequestBody", /entity/);
      expect(missing.body.errors.map((e: any) => e.property)).to.deep.equal(["entity"]);

      const depth = await reader("POST", "/qp-admin/schema", { entity: "accounts", depth: "2" });
      expectError(depth, 400, "InvalidRequestBody", /depth must be an integer/);
      expectError(await reader("POST", "/qp-admin/schema", { entity: "accounts", depth: 1.5 }), 400, "InvalidRequestBody", /depth/);
      expectError(await reader("POST", "/qp-admin/schema", { entity: "accounts", depth: 0 }), 400, "InvalidRequestBody", /depth/);
      expectError(await reader("POST", "/qp-admin/schema", { entity: "accounts", paths: "orders" }), 400, "InvalidRequestBody", /paths/);

      const unknown = await reader("POST", "/qp-admin/schema", { entity: "accounts", fields: ["x"] });
      expectError(unknown, 400, "InvalidRequestBody", /fields should not exist/);
      expect(unknown.body.errors[0].property).to.equal("fields");
    });

    it("answers 400 for a body that is not a JSON object", async () => {
      expectError(await reader("POST", "/qp-admin/schema", [{ entity: "accounts" }]), 400, "InvalidRequestBody", /JSON object/);
      expectError(await reader("POST", "/qp-admin/schema", undefined), 400, "InvalidRequestBody", /JSON object/);
      expectError(await reader("POST", "/qp-admin/schema", undefined, "{\"entity\": "), 400, "InvalidJson");
    });
  });

  describe("rules: GET, POST, DELETE", () => {
    let created: QpRule;

    it("lists no rules at first (200, an array)", async () => {
      const reply = await reader("GET", "/qp-admin/rules");
      expect(reply.status).to.equal(200);
      expect(reply.body).to.deep.equal([]);
    });

    it("creates a rule without id: 201 with its new id, who changed it and when", async () => {
      const before = Date.now();
      const reply = await writer("POST", "/qp-admin/rules", { subjectKind: "role", subject: "member", entity: "accounts", field: "name", features: "Select", effect: "deny", description: "no names for members" });
      expect(reply.status, reply.text).to.equal(201);
      created = reply.body;
      expect(created.id).to.be.a("string").and.not.equal("");
      expect(created).to.include({ subjectKind: "Role", subject: "member", entity: "accounts", field: "name", features: 2, effect: "Deny", priority: 0, changedBy: "walt" });
      expect(Date.parse(created.changedAt)).to.be.within(before - 1000, Date.now() + 1000);
    });

    it("replaces a rule given its id: 200, same id", async () => {
      const reply = await writer("POST", "/qp-admin/rules", { ...created, changedBy: undefined, changedAt: undefined, priority: 7, features: ["Select", "Order"] });
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body.id).to.equal(created.id);
      expect(reply.body.priority).to.equal(7);
      expect(reply.body.features).to.equal(6);
      const listed = await reader("GET", "/qp-admin/rules");
      expect(listed.body).to.have.length(1);
      expect(listed.body[0].priority).to.equal(7);
    });

    it("filters the list by subject", async () => {
      const global = await writer("POST", "/qp-admin/rules", { subjectKind: "Global", entity: "accounts", field: "region", features: 2, effect: "Allow" });
      expect(global.status, global.text).to.equal(201);
      expect((await reader("GET", "/qp-admin/rules?subject=Role:member")).body.map((r: QpRule) => r.id)).to.deep.equal([created.id]);
      expect((await reader("GET", "/qp-admin/rules?subject=role:MEMBER")).body.map((r: QpRule) => r.id)).to.deep.equal([created.id]);
      expect((await reader("GET", "/qp-admin/rules?subject=Global")).body.map((r: QpRule) => r.id)).to.deep.equal([global.body.id]);
      expect((await reader("GET", "/qp-admin/rules?subject=Tenant:t-9")).body).to.deep.equal([]);
      expect((await reader("GET", "/qp-admin/rules")).body).to.have.length(2);
      expectError(await reader("GET", "/qp-admin/rules?subject=member"), 400, "InvalidSubject");
      expect((await writer("DELETE", `/qp-admin/rules/${global.body.id}`)).status).to.equal(204);
    });

    it("rejects a rule on a sealed field with 409 RuleRejected and the reason", async () => {
      const reply = await writer("POST", "/qp-admin/rules", { subjectKind: "Role", subject: "member", entity: "accounts", field: "secret", effect: "Allow" });
      expectError(reply, 409, "RuleRejected", /sealed/);
    });

    it("rejects an unknown entity or field with 409 RuleRejected", async () => {
      expectError(await writer("POST", "/qp-admin/rules", { subjectKind: "Global", entity: "ghosts", field: "name", effect: "Deny" }), 409, "RuleRejected", /ghosts/);
      expectError(await writer("POST", "/qp-admin/rules", { subjectKind: "Global", entity: "accounts", field: "nope", effect: "Deny" }), 409, "RuleRejected", /nope/);
    });

    it("answers 400 InvalidRequestBody for a malformed rule", async () => {
      expectError(await writer("POST", "/qp-admin/rules", { subjectKind: "Role", subject: "x", entity: "accounts", field: "name", effect: "Maybe" }), 400, "InvalidRequestBody", /effect must be one of Allow, Mask, Deny/);
      expectError(await writer("POST", "/qp-admin/rules", { entity: "accounts", field: "name", effect: "Deny" }), 400, "InvalidRequestBody", /subjectKind/);
      expectError(await writer("POST", "/qp-admin/rules", { subjectKind: "Global", entity: "accounts", field: "name", effect: "Deny", features: "Everything" }), 400, "InvalidRequestBody", /features must be PolicyFeature flags/);
      expectError(await writer("POST", "/qp-admin/rules", { subjectKind: "Global", entity: "accounts", field: "name", effect: "Deny", owner: "me" }), 400, "InvalidRequestBody", /owner should not exist/);
      expectError(await writer("POST", "/qp-admin/rules", { subjectKind: "Global", entity: "accounts", field: 3, effect: "Deny", priority: "high" }), 400, "InvalidRequestBody", /field.*priority|priority.*field/);
    });

    it("answers 400 for a rule whose members contradict each other (subject, effect and mask)", async () => {
      const base = { entity: "accounts", field: "name" };
      expectError(await writer("POST", "/qp-admin/rules", { ...base, subjectKind: "Global", subject: "x", effect: "Deny" }), 400, "InvalidRequestBody", /a Global rule has no subject/);
      expectError(await writer("POST", "/qp-admin/rules", { ...base, subjectKind: "Tenant", effect: "Deny" }), 400, "InvalidRequestBody", /a Tenant rule needs a subject/);
      expectError(await writer("POST", "/qp-admin/rules", { ...base, subjectKind: "Global", effect: "Mask" }), 400, "InvalidRequestBody", /a Mask rule needs mask settings/);
      expectError(await writer("POST", "/qp-admin/rules", { ...base, subjectKind: "Global", effect: "Deny", mask: { strategy: "Full" } }), 400, "InvalidRequestBody", /only a Mask rule carries mask settings/);
      expectError(await writer("POST", "/qp-admin/rules", { ...base, subjectKind: "Global", effect: "Mask", mask: { strategy: "Blur" } }), 400, "InvalidRequestBody", /mask\.strategy must be one of Full/);
      const masked = await writer("POST", "/qp-admin/rules", { ...base, subjectKind: "Global", effect: "mask", mask: { strategy: "partial", keepStart: 2 } });
      expect(masked.status, masked.text).to.equal(201);
      expect(masked.body.mask).to.deep.equal({ strategy: "Partial", keepStart: 2 });
      expect((await writer("DELETE", `/qp-admin/rules/${masked.body.id}`)).status).to.equal(204);
    });

    it("refuses a well-formed rule the model cannot take with 409 RuleRejected (a text mask on a number)", async () => {
      expectError(await writer("POST", "/qp-admin/rules", { subjectKind: "Global", entity: "accounts", field: "salary", effect: "Mask", mask: { strategy: "Full" } }), 409, "RuleRejected", /salary is a number field/);
    });

    // Regex masks run on RE2 (linear time): what it cannot run is refused on write, and the bounded-repetition attack of issue #18 is taken and runs.
    it("refuses a Regex mask RE2 cannot run with 409 RuleRejected naming the linear-time engine; takes the bounded-repetition attack pattern", async () => {
      const rule = (pattern: string) => ({ subjectKind: "Global", entity: "accounts", field: "name", effect: "Mask", mask: { strategy: "Regex", pattern } });
      expectError(await writer("POST", "/qp-admin/rules", rule("\\d(?=\\d{4})")), 409, "RuleRejected", /lookarounds .* not supported by the linear-time engine \(RE2\)/);
      expectError(await writer("POST", "/qp-admin/rules", rule("(\\w)\\1")), 409, "RuleRejected", /backreferences .* not supported by the linear-time engine \(RE2\)/);
      const attack = await writer("POST", "/qp-admin/rules", rule(`${"\\D{0,20}".repeat(7)}X`));
      expect(attack.status, attack.text).to.equal(201);
      expect((await writer("DELETE", `/qp-admin/rules/${attack.body.id}`)).status).to.equal(204);
    });

    it("deletes a rule: 204 without a body, then 404 RuleNotFound", async () => {
      const reply = await writer("DELETE", `/qp-admin/rules/${created.id}`);
      expect(reply.status).to.equal(204);
      expect(reply.text).to.equal("");
      expectError(await writer("DELETE", `/qp-admin/rules/${created.id}`), 404, "RuleNotFound");
      expect((await reader("GET", "/qp-admin/rules")).body).to.deep.equal([]);
    });

    it("a changed rule takes effect for the next request on this instance", async () => {
      const member = callers.tenant("t-2");
      const query = () => call(t.url, "POST", "/accounts/query", { claims: member, body: { selects: ["id", "name"], orders: [{ sort: 1, field: "id" }] } });
      const before = await query();
      expect(before.status, before.text).to.equal(200);
      expect(before.body.data.map((r: any) => r.id)).to.deep.equal(expectedIds("t-2"));
      expect(before.body.data.every((r: any) => typeof r.name === "string")).to.equal(true);

      const rule = await writer("POST", "/qp-admin/rules", { subjectKind: "Role", subject: "member", entity: "accounts", field: "name", features: "Select", effect: "Deny" });
      expect(rule.status).to.equal(201);
      const after = await query();
      expect(after.status, after.text).to.equal(200);
      expect(after.body.data.every((r: any) => !("name" in r))).to.equal(true);
      expect(after.body.policy.entries).to.deep.include({ field: "name", feature: "Select", action: "Dropped", level: 3, source: `rule ${rule.body.id}`, enforced: true, reason: after.body.policy.entries.find((e: any) => e.field === "name").reason });

      expect((await writer("DELETE", `/qp-admin/rules/${rule.body.id}`)).status).to.equal(204);
      const again = await query();
      expect(again.body.data.every((r: any) => typeof r.name === "string")).to.equal(true);
    });
  });

  describe("POST /explain", () => {
    it("answers 200 with the decision chain of one field", async () => {
      const reply = await reader("POST", "/qp-admin/explain", { entity: "accounts", field: "secret" });
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body.entity).to.equal("accounts");
      expect(reply.body.field).to.equal("secret");
      expect(reply.body.selectable).to.equal(false);
      expect(reply.body.decisions.map((d: any) => d.feature)).to.deep.equal(["Where", "Select", "Order", "Group", "Aggregate", "Segment"]);
      for (const decision of reply.body.decisions) expect(decision).to.include({ effect: "Deny", level: 1, source: "QpDenied on Account.secret" });
    });

    it("explains every field of a schema request without a field", async () => {
      const reply = await reader("POST", "/qp-admin/explain", { entity: "accounts" });
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body.fields.map((f: any) => f.field).sort()).to.deep.equal(["email", "id", "name", "region", "salary", "status", "tenantId"]);
      expect(reply.body.fields.find((f: any) => f.field === "email").masked).to.equal(true);
    });

    it("answers 400 for an unknown field and 404 for an unknown entity", async () => {
      expectError(await reader("POST", "/qp-admin/explain", { entity: "accounts", field: "nothing" }), 400, "ConditionMustHasValidFieldName");
      expectError(await reader("POST", "/qp-admin/explain", { entity: "nobody", field: "name" }), 404, "UnknownEntity");
      expectError(await reader("POST", "/qp-admin/explain", { entity: "accounts", field: 7 }), 400, "InvalidRequestBody", /field must be a string/);
    });
  });

  describe("POST /simulate", () => {
    it("answers 200 with the sanitized clause, SQL and parameters (the caller's tenant forced)", async () => {
      const reply = await reader("POST", "/qp-admin/simulate", {
        entity: "accounts",
        filter: { conditionGroup: { conditions: [{ sort: 1, field: "status", dataType: "Enum", operator: "Equal", values: ["Open"] }] }, selects: ["id", "secret", "name"] },
      });
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body.sql).to.match(/nest_account/);
      expect(reply.body.sql).to.not.match(/t-1|Open/);
      expect(reply.body.parameters).to.include("t-1");
      expect(reply.body.filter.selects).to.deep.equal(["id", "name"]);
      expect(reply.body.policy.entries).to.deep.include.members([
        { field: "tenantId", feature: "Where", action: "Injected", level: 1, source: "QpForceWhere on Account.tenantId", enforced: true },
      ]);
    });

    it("maps policy errors: 403 for a denied field, 400 for a cap or a missing context value", async () => {
      const denied = await reader("POST", "/qp-admin/simulate", { entity: "accounts", filter: { conditionGroup: { conditions: [{ sort: 1, field: "region", values: ["north"] }] } } });
      expectError(denied, 403, "FieldDeniedForWhere");
      expect(denied.body.errorCode).to.equal(1);
      const cap = await reader("POST", "/qp-admin/simulate", { entity: "accounts", filter: { page: { pageNumber: 1, pageSize: 1000 } } });
      expectError(cap, 400, "CapExceeded");
      expect(cap.body.errorCode).to.equal(9);
      const noTenant = await call(t.url, "POST", "/qp-admin/simulate", { claims: { sub: "nobody-tenant", roles: ["reader"] }, body: { entity: "accounts", filter: {} } });
      expectError(noTenant, 400, "MissingContextValue");
      expect(noTenant.body.errorCode).to.equal(12);
    });

    it("maps validation errors of the filter to 400 with the LogicException code", async () => {
      const reply = await reader("POST", "/qp-admin/simulate", {
        entity: "accounts", filter: { conditionGroup: { conditions: [{ sort: 1, field: "name", values: ["a"] }, { sort: 1, field: "name", values: ["b"] }] } },
      });
      expectError(reply, 400, "AnyListOfConditionsMustHasUniqueSortValue");
      expectError(await reader("POST", "/qp-admin/simulate", { entity: "accounts", filter: { wher: {} } }), 400, "UnknownMember");
      expectError(await reader("POST", "/qp-admin/simulate", { entity: "accounts" }), 400, "InvalidRequestBody", /filter is required/);
      expectError(await reader("POST", "/qp-admin/simulate", { entity: "accounts", filter: [] }), 400, "InvalidRequestBody", /filter must be a Filter object/);
    });
  });

  describe("two instances sharing one rule store", () => {
    let a: TestApp;
    let b: TestApp;
    before(async () => {
      const store = new QpInMemoryRuleStore();
      const dataSource = await accountsDatabase();
      const module = { policies: { RefreshInterval: "00:00:00.3" }, providers: { ruleStore: store } };
      a = await startTestApp({ dataSource, module });
      b = await startTestApp({ dataSource, module });
    });
    after(async () => {
      await a.close();
      await b.close();
    });

    it("a rule written on one instance takes effect on the other within RefreshInterval", async () => {
      const query = (app: TestApp) => call(app.url, "POST", "/accounts/query", { claims: callers.tenant("t-3"), body: { selects: ["id", "name"] } });
      expect((await query(b)).body.data.every((r: object) => "name" in r)).to.equal(true);
      const written = Date.now();
      const rule = await call(a.url, "POST", "/qp-admin/rules", { claims: callers.writer, body: { subjectKind: "Tenant", subject: "t-3", entity: "accounts", field: "name", features: "Select", effect: "Deny" } });
      expect(rule.status).to.equal(201);
      expect((await query(a)).body.data.every((r: object) => !("name" in r))).to.equal(true);
      let seen = false;
      while (!seen && Date.now() - written < 3000) {
        seen = (await query(b)).body.data.every((r: object) => !("name" in r));
        if (!seen) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(seen, "instance b never saw the rule").to.equal(true);
      expect(Date.now() - written).to.be.below(1500);
      const health = await call(b.url, "GET", "/qp-admin/health", { claims: callers.reader });
      expect(health.body.snapshotVersion).to.equal(1);
    });
  });

  describe("a failing rule store", () => {
    let failing: TestApp;
    const broken: IQpRuleStore = {
      loadAsync: async () => { throw new Error("rule database offline"); },
      upsertAsync: async () => { throw new Error("rule database offline"); },
      deleteAsync: async () => { throw new Error("rule database offline"); },
    };

    before(async () => {
      failing = await startTestApp({ dataSource: await accountsDatabase(), module: { policies: { StoreFailure: StoreFailureMode.FailClosed }, providers: { ruleStore: broken } } });
    });
    after(() => failing.close());

    it("answers 503 StoreUnavailable (17) under FailClosed and reports the degraded state in /health", async () => {
      const reply = await call(failing.url, "POST", "/qp-admin/schema", { claims: callers.reader, body: { entity: "accounts" } });
      expectError(reply, 503, "StoreUnavailable", /rule database offline/);
      expect(reply.body.errorCode).to.equal(17);
      const health = await call(failing.url, "GET", "/qp-admin/health", { claims: callers.reader });
      expect(health.status).to.equal(200);
      expect(health.body).to.include({ degraded: true, lastError: "rule database offline", storeFailure: "FailClosed" });
    });

    it("GET /lint fails closed like every read: 503 StoreUnavailable, not a 500, and no finding that ignores the rules", async () => {
      const reply = await call(failing.url, "GET", "/qp-admin/lint", { claims: callers.writer });
      expectError(reply, 503, "StoreUnavailable");
    });

    it("answers 503 StoreUnavailable without the store's details when a write fails", async () => {
      const upsert = await call(failing.url, "POST", "/qp-admin/rules", { claims: callers.writer, body: { subjectKind: "Global", entity: "accounts", field: "name", effect: "Deny" } });
      expect(upsert.status).to.equal(503);
      expect(upsert.body).to.deep.equal({ code: "StoreUnavailable", message: "StoreUnavailable: the rule store failed; the cause is in the server log" });
      const remove = await call(failing.url, "DELETE", "/qp-admin/rules/r-1", { claims: callers.writer });
      expect(remove.status).to.equal(503);
    });
  });
});
