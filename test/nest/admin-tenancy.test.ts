// Tenants in the admin API (#42, item 5): with the admin option tenantConfined, an admin reads and
// writes the rules of their own tenant only. Each attack runs against the default mapping (the
// previous behaviour, still the default: it succeeds there) and against a confined one (refused).
import { expect } from "chai";
import { type Reply, type TestApp, call, closeDatabases, expectedIds, startTestApp } from "./support.js";

const admin = (tenant: string | null, extra: Record<string, unknown> = {}) => ({ sub: `admin-of-${tenant}`, roles: ["writer"], ...(tenant === null ? {} : { tenant }), ...extra });
const member = (tenant: string) => ({ sub: `member-of-${tenant}`, roles: ["member"], tenant });
const platform = { sub: "root", roles: ["writer", "platform"], tenant: "t-1" };

/** The attack of the issue: t-1's admin writes a rule for Tenant:t-2 that masks what t-2's callers see. */
const foreignRule = { id: "foreign-mask", subjectKind: "Tenant", subject: "t-2", entity: "accounts", field: "name", features: "Select", effect: "Mask", mask: { strategy: "Full" } };

async function namesSeenBy(app: TestApp, tenant: string): Promise<string[]> {
  const reply = await call(app.url, "POST", "/accounts/query", { claims: member(tenant), body: { selects: ["id", "name"], page: { pageNumber: 1, pageSize: 100 } } });
  expect(reply.status, reply.text).to.equal(200);
  expect(reply.body.data.map((r: { id: number }) => r.id).sort((a: number, b: number) => a - b)).to.deep.equal(expectedIds(tenant));
  return reply.body.data.map((r: { name: string }) => r.name);
}

const ids = (reply: Reply) => (reply.body as { id: string }[]).map((r) => r.id).sort();

function expectOutsideTenant(reply: Reply) {
  expect(reply.status, reply.text).to.equal(403);
  expect(reply.body.code).to.equal("RuleOutsideTenant");
  expect(reply.body.errorCode).to.equal(25);
}

describe("querylib/nest admin API: tenants apart (tenantConfined)", function () {
  let open: TestApp;
  let confined: TestApp;
  before(async () => {
    open = await startTestApp();
    confined = await startTestApp({
      module: { admin: { routePrefix: "/qp-admin", readPolicy: "reader", writePolicy: "writer", tenantConfined: true, crossTenantSubject: "Role:platform" } },
    });
  });
  after(async () => {
    await open.close();
    await confined.close();
    await closeDatabases();
  });

  describe("the attack: one tenant's admin writes and reads another tenant's rules", () => {
    it("unconfined (the default, the previous behaviour): t-1's admin masks what t-2 sees, and t-3's admin lists the rule", async () => {
      const before = await namesSeenBy(open, "t-2");
      expect(before.every((n) => n.startsWith("Holder"))).to.equal(true);
      const written = await call(open.url, "POST", "/qp-admin/rules", { claims: admin("t-1"), body: foreignRule });
      expect(written.status, written.text).to.equal(201);
      const after = await namesSeenBy(open, "t-2");
      expect(after.some((n) => n.startsWith("Holder")), "t-2's callers see names masked by t-1's admin").to.equal(false);
      expect(ids(await call(open.url, "GET", "/qp-admin/rules", { claims: admin("t-3") }))).to.include("foreign-mask");
      // And the linter names the hole: tenant rules under an admin API that does not confine admins.
      const findings = (await call(open.url, "GET", "/qp-admin/lint", { claims: admin("t-1") })).body as { code: string; entity: string }[];
      expect(findings.map((f) => f.code)).to.include("AdminNotTenantConfined");
      expect((await call(open.url, "DELETE", "/qp-admin/rules/foreign-mask", { claims: admin("t-1") })).status).to.equal(204);
    });

    it("confined: t-1's admin cannot write a rule for Tenant:t-2 (403 RuleOutsideTenant), and t-2's callers see what they saw", async () => {
      const before = await namesSeenBy(confined, "t-2");
      expectOutsideTenant(await call(confined.url, "POST", "/qp-admin/rules", { claims: admin("t-1"), body: foreignRule }));
      expect(await namesSeenBy(confined, "t-2")).to.deep.equal(before);
      expect(ids(await call(confined.url, "GET", "/qp-admin/rules", { claims: platform }))).not.to.include("foreign-mask");
      const findings = (await call(confined.url, "GET", "/qp-admin/lint", { claims: platform })).body as { code: string }[];
      expect(findings.map((f) => f.code)).not.to.include("AdminNotTenantConfined");
    });

    it("confined: a Global rule, a Role rule, a User rule and a Custom rule all reach other tenants: refused", async () => {
      for (const subject of [{ subjectKind: "Global", subject: null }, { subjectKind: "Role", subject: "member" }, { subjectKind: "User", subject: "member-of-t-1" }, { subjectKind: "Custom", subject: "x:y" }]) {
        expectOutsideTenant(await call(confined.url, "POST", "/qp-admin/rules", { claims: admin("t-1"), body: { ...foreignRule, id: undefined, ...subject } }));
      }
      expect(ids(await call(confined.url, "GET", "/qp-admin/rules", { claims: platform }))).to.deep.equal([]);
    });

    it("confined: an admin's own Tenant rule is written (201) and reaches their tenant only; other tenants' admins neither list, replace nor delete it", async () => {
      const own = { ...foreignRule, id: "t1-mask", subject: "t-1" };
      const written = await call(confined.url, "POST", "/qp-admin/rules", { claims: admin("t-1"), body: own });
      expect(written.status, written.text).to.equal(201);
      expect((await namesSeenBy(confined, "t-1")).some((n) => n.startsWith("Holder"))).to.equal(false);
      expect((await namesSeenBy(confined, "t-2")).every((n) => n.startsWith("Holder"))).to.equal(true);
      expect(ids(await call(confined.url, "GET", "/qp-admin/rules", { claims: admin("t-1") }))).to.deep.equal(["t1-mask"]);
      // Another tenant's admin: not listed (with or without the subject filter), not replaceable, not deletable (404, as if absent).
      expect(ids(await call(confined.url, "GET", "/qp-admin/rules", { claims: admin("t-3") }))).to.deep.equal([]);
      expect(ids(await call(confined.url, "GET", "/qp-admin/rules?subject=Tenant:t-1", { claims: admin("t-3") }))).to.deep.equal([]);
      expectOutsideTenant(await call(confined.url, "POST", "/qp-admin/rules", { claims: admin("t-3"), body: { ...own, subject: "t-3", effect: "Allow", mask: undefined } }));
      const deleted = await call(confined.url, "DELETE", "/qp-admin/rules/t1-mask", { claims: admin("t-3") });
      expect(deleted.status, deleted.text).to.equal(404);
      expect(deleted.body.code).to.equal("RuleNotFound");
      expect(ids(await call(confined.url, "GET", "/qp-admin/rules", { claims: platform }))).to.deep.equal(["t1-mask"]);
      expect((await namesSeenBy(confined, "t-1")).some((n) => n.startsWith("Holder"))).to.equal(false);
      // A caller with no tenant sees and writes nothing.
      expect(ids(await call(confined.url, "GET", "/qp-admin/rules", { claims: admin(null) }))).to.deep.equal([]);
      expectOutsideTenant(await call(confined.url, "POST", "/qp-admin/rules", { claims: admin(null), body: own }));
      expect((await call(confined.url, "DELETE", "/qp-admin/rules/t1-mask", { claims: admin("t-1") })).status).to.equal(204);
    });

    it("confined: the cross-tenant subject (Role:platform) lifts it: any tenant's rule, global and role rules, listed and deleted", async () => {
      for (const [id, subject] of [["p-t2", { subjectKind: "Tenant", subject: "t-2" }], ["p-global", { subjectKind: "Global", subject: null }], ["p-role", { subjectKind: "Role", subject: "member" }]] as const) {
        const reply = await call(confined.url, "POST", "/qp-admin/rules", { claims: platform, body: { ...foreignRule, id, ...subject, field: "status", mask: undefined, effect: "Deny" } });
        expect(reply.status, reply.text).to.equal(201);
      }
      expect(ids(await call(confined.url, "GET", "/qp-admin/rules", { claims: platform }))).to.deep.equal(["p-global", "p-role", "p-t2"]);
      expect(ids(await call(confined.url, "GET", "/qp-admin/rules", { claims: admin("t-2") }))).to.deep.equal(["p-t2"]);
      expect(ids(await call(confined.url, "GET", "/qp-admin/rules", { claims: admin("t-1") }))).to.deep.equal([]);
      // Explain: the rules that do not apply to the caller are named only when the caller may read them.
      const explained = await call(confined.url, "POST", "/qp-admin/explain", { claims: { ...admin("t-3"), roles: ["writer", "reader"] }, body: { entity: "accounts", field: "status" } });
      expect(explained.status, explained.text).to.equal(200);
      const named = JSON.stringify(explained.body);
      expect(named).not.to.include("p-t2");
      expect(named).not.to.include("p-role");
      const explainedByPlatform = JSON.stringify((await call(confined.url, "POST", "/qp-admin/explain", { claims: platform, body: { entity: "accounts", field: "status" } })).body);
      expect(explainedByPlatform).to.include("p-t2");
      for (const id of ["p-t2", "p-global", "p-role"]) expect((await call(confined.url, "DELETE", `/qp-admin/rules/${id}`, { claims: platform })).status).to.equal(204);
    });

    it("confined: the lint findings about another tenant's or a role's rules are not listed for a tenant's admin; the platform admin sees them", async () => {
      for (const [id, subject] of [["l-t2", { subjectKind: "Tenant", subject: "t-2" }], ["l-role", { subjectKind: "Role", subject: "auditor" }]] as const) {
        expect((await call(confined.url, "POST", "/qp-admin/rules", { claims: platform, body: { ...foreignRule, id, ...subject } })).status).to.equal(201);
      }
      const all = (await call(confined.url, "GET", "/qp-admin/lint", { claims: platform })).body as { subject: string; source: string }[];
      expect(all.map((f) => f.subject)).to.include.members(["Tenant:t-2", "Role:auditor"]);
      for (const tenant of ["t-1", "t-3"]) {
        const own = (await call(confined.url, "GET", "/qp-admin/lint", { claims: admin(tenant) })).body as { subject: string; source: string }[];
        expect(own.length).to.be.greaterThan(0);
        expect(own.every((f) => f.subject === "everyone" && !["rule l-t2", "rule l-role"].includes(f.source)), JSON.stringify(own)).to.equal(true);
      }
      const t2 = (await call(confined.url, "GET", "/qp-admin/lint", { claims: admin("t-2") })).body as { subject: string }[];
      expect(t2.map((f) => f.subject)).to.include("Tenant:t-2");
      expect(t2.map((f) => f.subject)).not.to.include("Role:auditor");
      for (const id of ["l-t2", "l-role"]) expect((await call(confined.url, "DELETE", `/qp-admin/rules/${id}`, { claims: platform })).status).to.equal(204);
    });
  });

  describe("GET /lint's level (lintLevel)", () => {
    it("is the write policy by default; lintLevel: \"read\" opens it to readers", async () => {
      expect((await call(open.url, "GET", "/qp-admin/lint", { claims: { sub: "r", roles: ["reader"], tenant: "t-1" } })).status).to.equal(403);
      const readable = await startTestApp({ module: { admin: { routePrefix: "/qp-admin", readPolicy: "reader", writePolicy: "writer", lintLevel: "read" } } });
      try {
        expect((await call(readable.url, "GET", "/qp-admin/lint", { claims: { sub: "r", roles: ["reader"], tenant: "t-1" } })).status).to.equal(200);
        expect((await call(readable.url, "GET", "/qp-admin/lint", { claims: member("t-1") })).status).to.equal(403);
      } finally {
        await readable.close();
      }
    });
  });
});
