// The claims adapter: QpClaimsAdapter (buildContext, createContextAsync) and
// getPolicyContextAsync(request, claimsOptions), directly and over HTTP.
import { expect } from "chai";
import { QpPolicyEngine, QpSubjectKind, QpConfigurationError, type QpSubject } from "../../lib/index.js";
import { QpClaimsAdapter, QpClaimsError, getPolicyContextAsync } from "../../nest-module/index.js";
import { type TestApp, Account, call, closeDatabases, expectedIds, startTestApp, tenants } from "./support.js";

const subjects = (list: readonly QpSubject[]) => list.map((s) => `${s.kind}:${s.value}`);

describe("querylib/nest claims adapter", function () {
  after(closeDatabases);

  describe("QpClaimsAdapter.buildContext", () => {
    it("maps sub, roles and tenant by default: one User, one Tenant, one Role per role", () => {
      const context = QpClaimsAdapter.buildContext({ sub: "u-1", roles: ["nurse", "auditor", "nurse"], tenant: "t-1", email: "x@y" });
      expect(subjects(context.subjects)).to.deep.equal(["User:u-1", "Tenant:t-1", "Role:nurse", "Role:auditor"]);
      expect([...context.values]).to.deep.equal([]);
      expect(context.isPrepared).to.equal(false);
    });

    it("accepts one role as a string and reads numbers and booleans as text", () => {
      const context = QpClaimsAdapter.buildContext({ sub: 42, roles: "admin", tenant: 7 });
      expect(subjects(context.subjects)).to.deep.equal(["User:42", "Tenant:7", "Role:admin"]);
    });

    it("uses the configured claim types, dotted paths into nested claims, custom subjects and context values", () => {
      const principal = {
        uid: "u-9", org: "acme", realm_access: { roles: ["viewer", "editor"] }, dept: ["sales", "ops"], region: "emea", tenants: ["a", "b"],
      };
      const context = QpClaimsAdapter.buildContext(principal, {
        userClaim: "uid", roleClaim: "realm_access.roles", tenantClaim: "org", customClaims: ["dept", "region"], valueClaims: { tenantId: "org", regions: "tenants", missing: "nope" },
      });
      expect(subjects(context.subjects)).to.deep.equal(["User:u-9", "Tenant:acme", "Role:viewer", "Role:editor", "Custom:dept:sales", "Custom:dept:ops", "Custom:region:emea"]);
      expect(Object.fromEntries(context.values)).to.deep.equal({ tenantId: "acme", regions: ["a", "b"] });
    });

    it("refuses an anonymous principal unless allowAnonymous", () => {
      for (const principal of [undefined, null, "ada", [], {}, { roles: ["admin"], tenant: "t-1" }, { sub: "" }]) {
        expect(() => QpClaimsAdapter.buildContext(principal), JSON.stringify(principal)).to.throw(QpClaimsError, /AnonymousPrincipal/);
      }
      expect(QpClaimsAdapter.buildContext(undefined, { allowAnonymous: true }).subjects).to.deep.equal([]);
      const partial = QpClaimsAdapter.buildContext({ roles: ["guest"], tenant: "t-2" }, { allowAnonymous: true, valueClaims: { tenantId: "tenant" } });
      expect(subjects(partial.subjects)).to.deep.equal(["Tenant:t-2", "Role:guest"]);
      expect(partial.values.get("tenantId")).to.equal("t-2");
    });

    it("refuses two tenants, two users and claims that are not strings", () => {
      expect(() => QpClaimsAdapter.buildContext({ sub: "u", tenant: ["a", "b"] })).to.throw(QpClaimsError, /InvalidClaim: claim "tenant" must hold one value, not 2/);
      expect(() => QpClaimsAdapter.buildContext({ sub: ["u", "v"] })).to.throw(QpClaimsError, /claim "sub" must hold one value/);
      expect(() => QpClaimsAdapter.buildContext({ sub: "u", roles: [{ name: "x" }] })).to.throw(QpClaimsError, /claim "roles" holds a object/);
    });
  });

  describe("QpClaimsAdapter.createContextAsync", () => {
    const engine = new QpPolicyEngine({}, { resolveSubjects: () => [{ kind: QpSubjectKind.Custom, value: "resolved" }], resolveValues: (ctx) => ({ user: ctx.subjectsOf(QpSubjectKind.User)[0] }) });

    it("returns a context prepared by the given engine, with the engine's providers applied", async () => {
      const context = await QpClaimsAdapter.createContextAsync({ sub: "u-1", roles: ["r"] }, { engine });
      expect(context.preparedBy).to.equal(engine);
      expect(subjects(context.subjects)).to.deep.equal(["User:u-1", "Role:r", "Custom:resolved"]);
      expect(context.values.get("user")).to.equal("u-1");
    });

    it("honours an aborted signal", async () => {
      const controller = new AbortController();
      controller.abort(new Error("client went away"));
      let error: unknown;
      await QpClaimsAdapter.createContextAsync({ sub: "u-1" }, { engine }, controller.signal).catch((e) => (error = e));
      expect((error as Error).message).to.equal("client went away");
    });

    it("needs an engine: the options', the request's module's or QpPolicy's", async () => {
      let error: unknown;
      await QpClaimsAdapter.createContextAsync({ sub: "u-1" }).catch((e) => (error = e));
      expect(error).to.be.instanceOf(QpConfigurationError);
      expect((error as Error).message).to.match(/no policy engine/);
    });

    it("getPolicyContextAsync prepares once per request and claims options", async () => {
      const request = { user: { sub: "u-1" } };
      const options = { engine };
      const [a, b] = await Promise.all([getPolicyContextAsync(request, options), getPolicyContextAsync(request, options)]);
      expect(a).to.equal(b);
      const other = await getPolicyContextAsync({ user: { sub: "u-1" } }, options);
      expect(other).to.not.equal(a);
      let error: unknown;
      await getPolicyContextAsync({}, options).catch((e) => (error = e));
      expect(error).to.be.instanceOf(QpClaimsError);
    });
  });

  describe("over HTTP (request.user → context)", () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ module: { claims: { userClaim: "uid", roleClaim: "groups", tenantClaim: "org", customClaims: ["dept"], valueClaims: { tenantId: "org", plan: "plan" } } } });
    });
    after(() => t.close());

    it("builds and prepares the caller's context with the module's claims options, once per request, visible through AsyncLocalStorage", async () => {
      const reply = await call(t.url, "GET", "/accounts/context", { claims: { uid: "u-5", groups: ["a", "b"], org: "t-2", dept: "risk", plan: "gold" } });
      expect(reply.status, reply.text).to.equal(200);
      expect(reply.body).to.deep.equal({
        subjects: [{ kind: "User", value: "u-5" }, { kind: "Tenant", value: "t-2" }, { kind: "Role", value: "a" }, { kind: "Role", value: "b" }, { kind: "Custom", value: "dept:risk" }],
        values: { tenantId: "t-2", plan: "gold" }, prepared: true, samePerRequest: true, current: true,
      });
    });

    it("answers 401 AnonymousPrincipal without a principal and 403 InvalidClaim for a malformed one", async () => {
      const anonymous = await call(t.url, "GET", "/accounts/context");
      expect(anonymous.status).to.equal(401);
      expect(anonymous.body).to.deep.equal({ code: "AnonymousPrincipal", message: "AnonymousPrincipal: no authenticated principal on the request" });
      const noUser = await call(t.url, "GET", "/accounts/context", { claims: { sub: "u-1", org: "t-1" } });
      expect(noUser.status).to.equal(401);
      expect(noUser.body.message).to.match(/no "uid" claim/);
      const twoTenants = await call(t.url, "GET", "/accounts/context", { claims: { uid: "u-1", org: ["t-1", "t-2"] } });
      expect(twoTenants.status).to.equal(403);
      expect(twoTenants.body.code).to.equal("InvalidClaim");
    });

    it("scopes guarded queries by the tenant claim (QpForceWhere contextValue), whatever the caller asks", async () => {
      for (const tenant of tenants) {
        const reply = await call(t.url, "POST", "/accounts/query", {
          claims: { uid: `u-${tenant}`, org: tenant },
          body: {
            conditionGroup: { connector: "Or", conditions: [{ sort: 1, field: "tenantId", operator: "NotEqual", values: [tenant] }, { sort: 2, field: "id", dataType: "Number", operator: "GreaterThan", values: [0] }] },
            selects: ["id", "tenantId"], orders: [{ sort: 1, field: "id" }],
          },
        });
        expect(reply.status, reply.text).to.equal(200);
        expect(reply.body.data.map((r: Account) => r.id)).to.deep.equal(expectedIds(tenant));
        expect(new Set(reply.body.data.map((r: Account) => r.tenantId))).to.deep.equal(new Set([tenant]));
      }
    });

    it("answers 400 MissingContextValue when the claim the forced predicate needs is absent", async () => {
      const reply = await call(t.url, "POST", "/accounts/query", { claims: { uid: "u-1" }, body: {} });
      expect(reply.status).to.equal(400);
      expect(reply.body).to.include({ code: "MissingContextValue", errorCode: 12 });
    });
  });
});
