// Startup: the application refuses to start, with a message that says what to fix, on a second
// configuration, an unknown configuration key, a cap below its minimum, an admin mapping without
// both policy names or naming an unregistered one (and a few more); and it starts with options
// from @nestjs/config, with several independent applications in one process.
import { expect } from "chai";
import { ConfigModule, ConfigService } from "@nestjs/config";
import { MaskStrategy, PolicyException, QpConfigurationError, QpMask, QpPolicy, QpTier } from "../../lib/index.js";
import { Column, Entity, PrimaryColumn } from "typeorm";
import { resetDefaultPolicyEngineForTests } from "../../lib/engine/engine.js";
import { Injectable } from "@nestjs/common";
import { QueryLibModule, type QueryLibModuleOptions, QueryLibService, mapQpPolicyAdmin } from "../../nest-module/index.js";
import { accountsDatabase, call, callers, closeDatabases, defaultModuleOptions, startTestApp, startupError } from "./support.js";

/** A Hash mask: the module needs a hashSalt. */
@Entity("startup_hashed_thing")
class HashedThing {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Hash }) @Column({ type: "varchar", length: 80 }) ref!: string;
}

/** A masked field left orderable and filterable by anything: error-level lint findings. */
@Entity("startup_lint_thing")
class LintedThing {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Email }) @Column({ type: "varchar", length: 80 }) email!: string;
}

describe("querylib/nest startup", function () {
  it("Lint: \"error\" fails startup on an error-level finding, with the module's name, the code PolicyLintFailed and the findings", async () => {
    const error = await startupError({ module: {
      policies: { Lint: "error" },
      configure: (options) => { options.entities.expose(LintedThing, "things"); },
    } }) as Error & { code?: string; findings?: { code: string; field: string }[] };
    expect(error.message).to.match(/^QueryLibModule: the policy linter found \d+ error-level finding/);
    expect(error.code).to.equal("PolicyLintFailed");
    expect(error.findings?.map((f) => `${f.code} ${f.field}`)).to.include.members(["OrderableWhileHidden email", "ProbeableWhileHidden email"]);
  });

  after(closeDatabases);

  it("a Hash mask without hashSalt fails startup as a PolicyException with errorCode 21 (issue #41), named for the module", async () => {
    const error = await startupError({ module: { configure: (options) => { options.entities.expose(HashedThing, "hashed"); } } });
    expect(error).to.be.instanceOf(PolicyException);
    expect(error).to.be.instanceOf(QpConfigurationError);
    expect((error as PolicyException).errorCode).to.equal(21);
    expect((error as PolicyException).code).to.equal("MissingHashSalt");
    expect(error.message).to.equal("QueryLibModule: QpMask on HashedThing.ref hashes values; set hashSalt (at least 16 characters)");
    expect((error as Error & { problems?: unknown[] }).problems).to.have.length(1);
  });

  const failsWith = async (options: Parameters<typeof startupError>[0], pattern: RegExp) => {
    const error = await startupError(options);
    expect(error.message).to.match(pattern);
    expect(error.name).to.equal("QpConfigurationError");
    return error;
  };

  describe("refuses to start", () => {
    it("on a second configuration in one application", async () => {
      const dataSource = await accountsDatabase();
      await failsWith({ dataSource, imports: [QueryLibModule.forRoot(defaultModuleOptions(dataSource)), QueryLibModule.forRoot({ ...defaultModuleOptions(dataSource), admin: undefined })] }, /second configuration in the same application/);
    });

    it("on a second configuration of the process-wide QpPolicy engine (useDefaultEngine)", async () => {
      try {
        const first = await startTestApp({ module: { useDefaultEngine: true, admin: undefined } });
        try {
          expect(first.service.engine).to.equal(QpPolicy.engine);
          await failsWith({ module: { useDefaultEngine: true, admin: undefined } }, /QpPolicy\.configure was already called/);
        } finally {
          await first.close();
        }
      } finally {
        resetDefaultPolicyEngineForTests();
      }
    });

    it("on an unknown configuration key", async () => {
      await failsWith({ module: { policies: { Tier: "Strict", Teir: "Strict" } } }, /QueryLib\.Policies\.Teir: unknown key; expected one of Tier, DryRun, StoreFailure, MaxSnapshotAge, RefreshInterval, Caps/);
    });

    it("on an unknown cap", async () => {
      await failsWith({ module: { policies: { Caps: { MaxPageSize: 10, MaxPages: 3 } } } }, /Caps?\.MaxPages: unknown cap/i);
    });

    it("on a cap below its minimum", async () => {
      await failsWith({ module: { policies: { Caps: { MaxPageSize: 0 } } } }, /MaxPageSize: 0 is below the minimum of 1/);
      await failsWith({ module: { policies: { Caps: { DefaultFieldCost: -1 } } } }, /DefaultFieldCost: -1 is below the minimum of 0/);
    });

    it("on a bad time span or enum value", async () => {
      await failsWith({ module: { policies: { RefreshInterval: "30s" } } }, /RefreshInterval|refreshInterval.*"30s" is not a time span/);
      await failsWith({ module: { policies: { Tier: "Paranoid" } } }, /tier: "Paranoid" is not one of Convenience, Strict/);
    });

    it("on an unknown module option", async () => {
      await failsWith({ module: { polices: {} } as never }, /unknown option "polices"/);
    });

    it("on an admin mapping without readPolicy or without writePolicy", async () => {
      await failsWith({ module: { admin: { routePrefix: "/qp-admin", writePolicy: "writer" } } }, /admin\.readPolicy is missing: the admin API needs both readPolicy and writePolicy/);
      await failsWith({ module: { admin: { routePrefix: "/qp-admin", readPolicy: "reader" } } }, /admin\.writePolicy is missing/);
      await failsWith({ module: { admin: {} } }, /readPolicy is missing/);
    });

    it("on an admin mapping naming a policy the host did not register", async () => {
      await failsWith({ module: { admin: { readPolicy: "reader", writePolicy: "admins" } } }, /admin\.writePolicy names "admins", which is not registered: add it to authorizationPolicies \(registered: reader, writer\)/);
      await failsWith({ module: { admin: { readPolicy: "ghost", writePolicy: "writer" }, authorizationPolicies: undefined } }, /readPolicy names "ghost", which is not registered.*registered: none/);
    });

    it("on a bad admin mapping or authorization policy", async () => {
      await failsWith({ module: { admin: { routePrefix: "/qp/:id", readPolicy: "reader", writePolicy: "writer" } } }, /routePrefix "\/qp\/:id" must be a literal path/);
      await failsWith({ module: { admin: { readPolicy: "reader", writePolicy: "writer", anonymous: true } as never } }, /admin\.anonymous: unknown option/);
      await failsWith({ module: { authorizationPolicies: { reader: "yes" as never, writer: () => true } } }, /authorizationPolicies\.reader must be a Nest guard/);
      await failsWith({ module: { claims: { roleClaims: "groups" } as never } }, /claims\.roleClaims: unknown option/);
    });

    it("on mapQpPolicyAdmin without both policies, after listen, or twice", async () => {
      await failsWith({ module: { admin: undefined }, beforeListen: (app) => void mapQpPolicyAdmin(app, { readPolicy: "reader" }) }, /mapQpPolicyAdmin\.writePolicy is missing/);
      await failsWith({ module: { admin: undefined }, beforeListen: (app) => void mapQpPolicyAdmin(app, { readPolicy: "reader", writePolicy: "nobody" }) }, /writePolicy names "nobody"/);
      await failsWith({ beforeListen: (app) => void mapQpPolicyAdmin(app, { readPolicy: "reader", writePolicy: "writer" }) }, /already mapped at \/qp-admin/);
      const t = await startTestApp({ module: { admin: undefined } });
      try {
        expect(() => mapQpPolicyAdmin(t.app, { readPolicy: "reader", writePolicy: "writer" })).to.throw(/call it before app\.listen\(\)/);
      } finally {
        await t.close();
      }
    });

    it("when the admin API has no DataSource for simulate", async () => {
      const dataSource = await accountsDatabase();
      await failsWith({ dataSource, controllers: [], noDataSourceProvider: true, module: { dataSource: undefined } }, /the admin simulate route and forFeature's routes need a DataSource: pass dataSource in the options or import TypeOrmModule\.forRoot/);
    });

    it("when forRootAsync reads an unknown key from @nestjs/config", async () => {
      const dataSource = await accountsDatabase();
      await failsWith({
        dataSource,
        imports: [
          ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ QueryLib: { Policies: { Tier: "Strict", Caps: { MaxPageSiz: 5 } } } })] }),
          QueryLibModule.forRootAsync({
            imports: [ConfigModule], inject: [ConfigService],
            useFactory: (config: ConfigService) => ({ ...defaultModuleOptions(dataSource), policies: config.get("QueryLib.Policies") }),
          }),
        ],
      }, /MaxPageSiz: unknown cap/);
    });

    it("when forRootAsync gives admin twice", async () => {
      const dataSource = await accountsDatabase();
      await failsWith({
        dataSource,
        imports: [QueryLibModule.forRootAsync({ admin: { readPolicy: "reader", writePolicy: "writer" }, useFactory: () => defaultModuleOptions(dataSource) })],
      }, /admin is given both beside useFactory and by it/);
    });
  });

  describe("starts", () => {
    it("with the QueryLib.Policies section from @nestjs/config through forRootAsync", async () => {
      const dataSource = await accountsDatabase();
      const t = await startTestApp({
        dataSource,
        imports: [
          ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ QueryLib: { Policies: { tier: "strict", dryrun: "false", Caps: { maxpagesize: "7", MinGroupSize: 1 } } } })] }),
          QueryLibModule.forRootAsync({
            imports: [ConfigModule], inject: [ConfigService],
            admin: { routePrefix: "/qp-admin", readPolicy: "reader", writePolicy: "writer" },
            useFactory: (config: ConfigService) => ({ ...defaultModuleOptions(dataSource), admin: undefined, policies: config.get("QueryLib.Policies") }),
          }),
        ],
      });
      try {
        expect(t.service.policyOptions.tier).to.equal(QpTier.Strict);
        expect(t.service.policyOptions.caps.maxPageSize).to.equal(7);
        const strict = await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-1"), body: { selects: ["id", "secret"] } });
        expect(strict.status).to.equal(403);
        expect(strict.body.code).to.equal("FieldDeniedForSelect");
        const cap = await call(t.url, "POST", "/accounts/query", { claims: callers.tenant("t-1"), body: { page: { pageNumber: 1, pageSize: 8 } } });
        expect(cap.status).to.equal(400);
        expect(cap.body.errorCode).to.equal(9);
        expect((await call(t.url, "GET", "/qp-admin/health", { claims: callers.reader })).status).to.equal(200);
      } finally {
        await t.close();
      }
    });

    it("with forRootAsync's useClass (Nest's ConfigurableModuleBuilder): a class that creates the options", async () => {
      const dataSource = await accountsDatabase();
      @Injectable()
      class StrictOptions {
        createQueryLibOptions(): QueryLibModuleOptions {
          return { ...defaultModuleOptions(dataSource), policies: { Tier: "Strict", Caps: { MinGroupSize: 1 } } };
        }
      }
      const t = await startTestApp({ dataSource, imports: [QueryLibModule.forRootAsync({ useClass: StrictOptions })] });
      try {
        expect(t.service.policyOptions.tier).to.equal(QpTier.Strict);
        expect((await call(t.url, "GET", "/qp-admin/health", { claims: callers.reader })).status).to.equal(200);
      } finally {
        await t.close();
      }
    });

    it("several applications in one process, each with its own engine and policies", async () => {
      const strict = await startTestApp({ module: { policies: { Tier: "Strict", Caps: { MinGroupSize: 1 } } } });
      const convenient = await startTestApp();
      try {
        expect(strict.service.engine).to.not.equal(convenient.service.engine);
        const body = { selects: ["id", "secret"], orders: [{ sort: 1, field: "id" }] };
        const [a, b] = await Promise.all([
          call(strict.url, "POST", "/accounts/query", { claims: callers.tenant("t-1"), body }),
          call(convenient.url, "POST", "/accounts/query", { claims: callers.tenant("t-1"), body }),
        ]);
        expect(a.status).to.equal(403);
        expect(a.body).to.include({ code: "FieldDeniedForSelect", errorCode: 2 });
        expect(b.status).to.equal(200);
        expect(b.body.data[0]).to.deep.equal({ id: 3 });
        // A rule written on one application does not reach the other (separate in-memory stores).
        const rule = await call(strict.url, "POST", "/qp-admin/rules", { claims: callers.writer, body: { subjectKind: "Global", entity: "accounts", field: "name", effect: "Deny" } });
        expect(rule.status).to.equal(201);
        expect((await call(convenient.url, "GET", "/qp-admin/rules", { claims: callers.reader })).body).to.deep.equal([]);
        expect(strict.app.get(QueryLibService).engine.snapshotVersion).to.equal(1);
      } finally {
        await strict.close();
        await convenient.close();
      }
    });

    it("again after an application closed (the configure-once rule is per application)", async () => {
      const dataSource = await accountsDatabase();
      const first = await startTestApp({ dataSource });
      await first.close();
      const second = await startTestApp({ dataSource });
      try {
        expect((await call(second.url, "GET", "/qp-admin/health", { claims: callers.reader })).status).to.equal(200);
      } finally {
        await second.close();
      }
    });
  });
});
