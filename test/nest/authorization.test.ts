// Authorization of the admin API: read routes need readPolicy, write routes writePolicy; 401
// without credentials, 403 with insufficient ones; guards (instances, classes with injected
// dependencies, throwing ones) and predicates (sync and async); allowAnonymousAccess; the same
// through mapQpPolicyAdmin and through an admin mapping returned by forRootAsync's factory.
import { type CanActivate, type ExecutionContext, Injectable, UnauthorizedException } from "@nestjs/common";
import { expect } from "chai";
import { QueryLibModule, adminRoutes, mapQpPolicyAdmin } from "../../nest-module/index.js";
import { type TestApp, accountsDatabase, assertNoStack, call, callers, closeDatabases, defaultModuleOptions, readerPredicate, startTestApp, WriterGuard } from "./support.js";

/** A request for each route, with a body that succeeds when authorized. */
function routeRequests(ruleId: string) {
  return adminRoutes.map((route) => {
    const path = `/${route.path.replace(":id", ruleId)}`;
    const body = route.name === "schema" ? { entity: "accounts" }
      : route.name === "explain" ? { entity: "accounts", field: "name" }
      : route.name === "simulate" ? { entity: "accounts", filter: {} }
      : route.name === "upsertRule" ? { id: ruleId, subjectKind: "Global", entity: "accounts", field: "name", features: 2, effect: "Allow" }
      : undefined;
    return { route, path, body };
  });
}

async function authorizationMatrix(base: () => string, prefix: string) {
  const ruleId = `rule-${prefix.replace(/\W/g, "")}`;
  // Create the rule first (upsert precedes delete in adminRoutes order, but every request must succeed on its own).
  for (const { route, path, body } of routeRequests(ruleId)) {
    const url = `${prefix}${path}`;
    const anonymous = await call(base(), route.method, url, { body });
    expect(anonymous.status, `${route.method} ${url} anonymous: ${anonymous.text}`).to.equal(401);
    expect(anonymous.body.code).to.equal("Unauthorized");
    assertNoStack(anonymous);

    const member = await call(base(), route.method, url, { body, claims: callers.member });
    expect(member.status, `${route.method} ${url} member: ${member.text}`).to.equal(403);
    expect(member.body.code).to.equal("Forbidden");

    const reader = await call(base(), route.method, url, { body, claims: callers.reader });
    if (route.level === "read") expect(reader.status, `${route.method} ${url} reader: ${reader.text}`).to.equal(200);
    else {
      expect(reader.status, `${route.method} ${url} reader: ${reader.text}`).to.equal(403);
      const writer = await call(base(), route.method, url, { body, claims: callers.writer });
      expect(writer.status, `${route.method} ${url} writer: ${writer.text}`).to.be.oneOf(route.name === "upsertRule" ? [200, 201] : route.name === "lint" ? [200] : [204]);
    }
  }
}

describe("querylib/nest admin authorization", function () {
  after(closeDatabases);

  describe("forRoot({ admin }) with a predicate (read) and a guard instance (write)", () => {
    let t: TestApp;
    before(async () => (t = await startTestApp()));
    after(() => t.close());

    it("answers 401 without credentials, 403 with insufficient ones, 2xx when the policy allows, on all seven routes", async () => {
      await authorizationMatrix(() => t.url, "/qp-admin");
    });

    it("lets a writer (who also satisfies the read policy) read", async () => {
      expect((await call(t.url, "GET", "/qp-admin/health", { claims: callers.writer })).status).to.equal(200);
    });
  });

  describe("guard classes, throwing guards and async predicates", () => {
    @Injectable()
    class ApiKeys {
      readonly valid = new Set(["key-123"]);
    }

    /** A guard class registered as a provider: QueryLibModule uses that instance (dependencies injected by the host's module). */
    @Injectable()
    class ApiKeyGuard implements CanActivate {
      constructor(private readonly keys: ApiKeys) {}
      canActivate(context: ExecutionContext): boolean {
        const key = context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers["x-api-key"];
        if (key === undefined) throw new UnauthorizedException({ code: "MissingApiKey", message: "send x-api-key" });
        return this.keys.valid.has(key);
      }
    }

    let t: TestApp;
    let predicateCalls = 0;
    before(async () => {
      const dataSource = await accountsDatabase();
      t = await startTestApp({
        dataSource,
        providers: [ApiKeys, ApiKeyGuard],
        module: {
          authorizationPolicies: {
            "slow-reader": async (request: { user?: { roles?: string[] } }) => {
              predicateCalls++;
              await new Promise((resolve) => setTimeout(resolve, 5));
              return readerPredicate(request);
            },
            "api-key": ApiKeyGuard,
          },
          admin: { routePrefix: "ops/policies/", readPolicy: "slow-reader", writePolicy: "api-key" },
        },
      });
    });
    after(() => t.close());

    it("awaits an async predicate", async () => {
      expect((await call(t.url, "GET", "/ops/policies/health", { claims: callers.reader })).status).to.equal(200);
      expect((await call(t.url, "GET", "/ops/policies/health", { claims: callers.member })).status).to.equal(403);
      expect(predicateCalls).to.equal(2);
    });

    it("instantiates a guard class with its dependencies and honours the status a guard throws", async () => {
      const missing = await call(t.url, "DELETE", "/ops/policies/rules/none", { claims: callers.writer });
      expect(missing.status).to.equal(401);
      expect(missing.body).to.deep.equal({ code: "MissingApiKey", message: "send x-api-key" });
      const wrong = await call(t.url, "DELETE", "/ops/policies/rules/none", { headers: { "x-api-key": "nope" } });
      expect(wrong.status).to.equal(401); // refused and no principal on the request
      const wrongSignedIn = await call(t.url, "DELETE", "/ops/policies/rules/none", { claims: callers.writer, headers: { "x-api-key": "nope" } });
      expect(wrongSignedIn.status).to.equal(403);
      const right = await call(t.url, "DELETE", "/ops/policies/rules/none", { headers: { "x-api-key": "key-123" } });
      expect(right.status, right.text).to.equal(404); // authorized; the rule does not exist
      expect(right.body.code).to.equal("RuleNotFound");
    });

    it("serves the routes under the normalized prefix only", async () => {
      expect((await call(t.url, "GET", "/qp-admin/health", { claims: callers.reader })).status).to.equal(404);
    });
  });

  describe("allowAnonymousAccess: true", () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ module: { admin: { routePrefix: "/qp-admin", allowAnonymousAccess: true }, authorizationPolicies: {} } });
    });
    after(() => t.close());

    it("disables both policies: every route answers without credentials", async () => {
      for (const { route, path, body } of routeRequests("anonymous-rule")) {
        const reply = await call(t.url, route.method, `/qp-admin${path}`, { body });
        if (route.name === "simulate") {
          // Authorized; the anonymous caller has no tenant for the forced predicate.
          expect(reply.status, reply.text).to.equal(400);
          expect(reply.body.code).to.equal("MissingContextValue");
        } else expect(reply.status, `${route.method} ${path}: ${reply.text}`).to.be.oneOf([200, 201, 204]);
      }
    });

    it("records no author for an anonymous rule change, and the author when a principal is present", async () => {
      const anonymous = await call(t.url, "POST", "/qp-admin/rules", { body: { subjectKind: "Global", entity: "accounts", field: "name", effect: "Allow" } });
      expect(anonymous.status).to.equal(201);
      expect(anonymous.body.changedBy).to.equal(null);
      const signed = await call(t.url, "POST", "/qp-admin/rules", { claims: callers.member, body: { subjectKind: "Global", entity: "accounts", field: "name", effect: "Allow" } });
      expect(signed.body.changedBy).to.equal("mona");
    });
  });

  describe("mapQpPolicyAdmin(app, options)", () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({
        module: { admin: undefined, authorizationPolicies: { reader: readerPredicate } },
        beforeListen: (app) => {
          mapQpPolicyAdmin(app, { routePrefix: "/mapped", readPolicy: "reader", writePolicy: "writer", authorizationPolicies: { writer: WriterGuard } });
        },
      });
    });
    after(() => t.close());

    it("maps the seven routes with the same authorization", async () => {
      await authorizationMatrix(() => t.url, "/mapped");
    });

    it("reads, validates and answers JSON bodies like the controller", async () => {
      const schema = await call(t.url, "POST", "/mapped/schema", { claims: callers.reader, body: { entity: "accounts", depth: 1 } });
      expect(schema.status, schema.text).to.equal(200);
      expect(schema.body.fields.map((f: any) => f.path)).to.include("email");
      const invalid = await call(t.url, "POST", "/mapped/schema", { claims: callers.reader, body: { entity: 1 } });
      expect(invalid.status).to.equal(400);
      expect(invalid.body.code).to.equal("InvalidRequestBody");
      const broken = await call(t.url, "POST", "/mapped/schema", { claims: callers.reader, raw: "{oops" });
      expect(broken.status).to.equal(400);
      expect(broken.body.code).to.equal("InvalidJson");
      const unknown = await call(t.url, "POST", "/mapped/schema", { claims: callers.reader, body: { entity: "ghosts" } });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.code).to.equal("UnknownEntity");
    });
  });

  describe("an admin mapping returned by forRootAsync's factory", () => {
    let t: TestApp;
    before(async () => {
      const dataSource = await accountsDatabase();
      t = await startTestApp({
        dataSource,
        imports: [
          QueryLibModule.forRootAsync({
            useFactory: async () => ({ ...defaultModuleOptions(dataSource), admin: { routePrefix: "/from-factory", readPolicy: "reader", writePolicy: "writer" } }),
          }),
        ],
      });
    });
    after(() => t.close());

    it("is mapped at startup with the same routes and authorization", async () => {
      await authorizationMatrix(() => t.url, "/from-factory");
      const broken = await call(t.url, "POST", "/from-factory/schema", { claims: callers.reader, raw: "[1," });
      expect(broken.status).to.equal(400);
      expect(broken.body.code).to.equal("InvalidJson");
    });
  });
});
