// Issue #41, the frictions a new user met building a NestJS app from the README and docs/NESTJS.md:
// each as the user wrote it (the README's snippets as written, a default NestFactory.create, no
// filter of their own), with what it answered before and what it answers now.
import "reflect-metadata";
import { expect } from "chai";
import { readFileSync } from "node:fs";
import {
  type ArgumentsHost, type CanActivate, Catch, Controller, type ExceptionFilter, type ExecutionContext, Get, HttpCode, Injectable, Module, NotFoundException, Post,
} from "@nestjs/common";
import { DocumentBuilder, SwaggerModule } from "@nestjs/swagger";
import { NestFactory } from "@nestjs/core";
import type { INestApplication } from "@nestjs/common";
import { DataSource, type Repository } from "typeorm";
import { type Filter, type QpPolicyContext } from "../../lib/index.js";
import { QpContext, QpFilter, QueryLibModule, QueryLibService, mergeQueryLibOpenApi } from "../../nest-module/index.js";
import { Account, accountsDatabase, call, callers, closeDatabases, testAuthentication } from "./support.js";

/** The README's hand-written handler, as written: no @UseFilters. */
@Controller()
class ReadmeController {
  private readonly customers: Repository<Account>;
  constructor(private readonly querylib: QueryLibService, dataSource: DataSource) {
    this.customers = dataSource.getRepository(Account);
  }

  @Post("customers/filter") @HttpCode(200)
  list(@QpFilter() filter: Filter, @QpContext() context: QpPolicyContext) {
    return this.querylib.applyPolicy(this.customers, context).toListAsync(filter);
  }

  @Get("customers/filter")
  link(@QpFilter(Account) filter: Filter, @QpContext() context: QpPolicyContext) {
    return this.querylib.applyPolicy(this.customers, context).toListAsync(filter);
  }

  /** The host's own errors: Nest's normal treatment. */
  @Get("boom") boom(): never {
    throw new Error("the host's own bug");
  }

  @Get("missing") missing(): never {
    throw new NotFoundException("no such thing");
  }
}

async function start(
  dataSource: DataSource, module: Record<string, unknown> = {}, features: unknown[] = [], beforeListen?: (app: INestApplication) => void,
): Promise<{ app: INestApplication; url: string }> {
  @Module({
    imports: [
      QueryLibModule.forRoot({
        policies: { Caps: { MinGroupSize: 1 } },
        configure: (o) => { o.entities.expose(Account, "customers"); },
        claims: { userClaim: "sub", roleClaim: "roles", tenantClaim: "tenant", valueClaims: { tenantId: "tenant" } },
        dataSource,
        ...module,
      }),
      ...(features as never[]),
    ],
    controllers: [ReadmeController],
    providers: [{ provide: DataSource, useValue: dataSource }],
  })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
  app.use(testAuthentication);
  beforeListen?.(app);
  await app.listen(0, "127.0.0.1");
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${port}` };
}

describe("issue #41: a hand-written handler from the README, without @UseFilters", () => {
  let dataSource: DataSource;
  let app: INestApplication;
  let url: string;
  before(async () => {
    dataSource = await accountsDatabase();
    ({ app, url } = await start(dataSource));
  });
  after(async () => {
    await app?.close();
    await closeDatabases();
  });

  it("a policy refusal raised by the query (a filter on a QpNoWhere field) answers 403 FieldDeniedForWhere, not 500", async () => {
    const reply = await call(url, "POST", "/customers/filter", { claims: callers.member, body: { conditionGroup: { conditions: [{ sort: 1, field: "region", dataType: "Text", operator: "Equal", values: ["north"] }] } } });
    expect(reply.status, reply.text).to.equal(403);
    expect(reply.body).to.include({ code: "FieldDeniedForWhere", errorCode: 1 });
  });

  it("a denied select answers 403 with its code; a validation error 400 with its code and path", async () => {
    const denied = await call(url, "POST", "/customers/filter", { claims: callers.member, body: { selects: ["secret"] } });
    expect(denied.status, denied.text).to.equal(403);
    expect(denied.body).to.include({ code: "AllSelectsDenied", errorCode: 7 });
    const invalid = await call(url, "POST", "/customers/filter", { claims: callers.member, body: { conditionGroup: { conditions: [{ sort: 1, field: "salary", dataType: "Number", operator: "Equal", values: ["not a number"] }] } } });
    expect(invalid.status, invalid.text).to.equal(400);
    expect(invalid.body.code).to.be.a("string");
    expect(invalid.body.path).to.match(/^conditionGroup\.conditions\[0\]/);
  });

  it("no principal answers 401 AnonymousPrincipal", async () => {
    const reply = await call(url, "POST", "/customers/filter", { body: {} });
    expect(reply.status, reply.text).to.equal(401);
    expect(reply.body.code).to.equal("AnonymousPrincipal");
  });

  it("a correct request answers 200 with the caller's tenant's rows only", async () => {
    const reply = await call(url, "POST", "/customers/filter", { claims: callers.member, body: { selects: ["id"] } });
    expect(reply.status, reply.text).to.equal(200);
    expect(reply.body.data.length).to.be.greaterThan(0);
  });

  it("the host's own errors keep Nest's treatment: a plain Error is Nest's 500 body, an HttpException its own status and body", async () => {
    const boom = await call(url, "GET", "/boom");
    expect(boom.status).to.equal(500);
    expect(boom.body).to.deep.equal({ statusCode: 500, message: "Internal server error" });
    const missing = await call(url, "GET", "/missing");
    expect(missing.status).to.equal(404);
    expect(missing.body).to.deep.equal({ statusCode: 404, message: "no such thing", error: "Not Found" });
  });
});

describe("issue #41: QueryLib's global filter leaves a host's own global filter in charge", () => {
  @Catch()
  class HostCatchAll implements ExceptionFilter {
    catch(error: unknown, host: ArgumentsHost): void {
      host.switchToHttp().getResponse<{ status(n: number): { json(b: unknown): void } }>().status(418).json({ host: true, name: (error as Error).name });
    }
  }

  it("app.useGlobalFilters(catch-all) is asked first, for QueryLib's errors too", async () => {
    const dataSource = await accountsDatabase();
    const { app, url } = await start(dataSource, {}, [], (created) => created.useGlobalFilters(new HostCatchAll()));
    try {
      const reply = await call(url, "POST", "/customers/filter", { claims: callers.member, body: { selects: ["secret"] } });
      expect(reply.status).to.equal(418);
      expect(reply.body).to.deep.equal({ host: true, name: "PolicyException" });
    } finally {
      await app.close();
      await closeDatabases();
    }
  });
});

describe("issue #41: a malformed JSON body on a forFeature route (default NestFactory.create, body parser on)", () => {
  let dataSource: DataSource;
  let app: INestApplication;
  let url: string;
  before(async () => {
    dataSource = await accountsDatabase();
    ({ app, url } = await start(dataSource, {}, [QueryLibModule.forFeature([{ entity: Account, path: "api/accounts" }])]));
  });
  after(async () => {
    await app?.close();
    await closeDatabases();
  });

  for (const raw of ["{", "{\"selects\": [", "not json", "{\"a\":1,}"]) {
    it(`${JSON.stringify(raw)} answers 400 InvalidJson as docs/NESTJS.md says, without echoing the input`, async () => {
      const reply = await call(url, "POST", "/api/accounts/filter", { claims: callers.member, raw });
      expect(reply.status, reply.text).to.equal(400);
      expect(reply.body).to.deep.equal({ code: "InvalidJson", message: "InvalidJson: the request body is not valid JSON" });
    });
  }

  it("a malformed body on a host's own route (the README's hand-written handler too) keeps Nest's default 400: the body is parsed before any route is known", async () => {
    const reply = await call(url, "POST", "/customers/filter", { claims: callers.member, raw: "{" });
    expect(reply.status, reply.text).to.equal(400);
    expect(reply.body.statusCode, reply.text).to.equal(400);
    expect(reply.body.code).to.equal(undefined);
  });

  it("the same forFeature route under a different case and with a query string is still QueryLib's", async () => {
    const reply = await call(url, "POST", "/API/Accounts/filter?x=1", { claims: callers.member, raw: "{" });
    expect(reply.status, reply.text).to.equal(400);
    expect(reply.body.code).to.equal("InvalidJson");
  });
});

// ---- the admin routes: which options enable them (the README's forRoot example) --------------

@Injectable()
class AdminReadGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const roles = context.switchToHttp().getRequest<{ user?: { roles?: string[] } }>().user?.roles ?? [];
    return roles.includes("reader") || roles.includes("writer");
  }
}

@Injectable()
class AdminWriteGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return (context.switchToHttp().getRequest<{ user?: { roles?: string[] } }>().user?.roles ?? []).includes("writer");
  }
}

describe("issue #41: the admin routes, as the README's forRoot example configures them", () => {
  after(closeDatabases);
  const features = () => [QueryLibModule.forFeature([{ entity: Account, path: "api/accounts" }])];

  it("without admin, every /qp-admin route is 404, /qp-admin/openapi included (what the README now says)", async () => {
    const { app, url } = await start(await accountsDatabase(), {}, features());
    try {
      for (const path of ["/qp-admin/openapi", "/qp-admin/health", "/qp-admin/lint"]) {
        expect((await call(url, "GET", path, { claims: callers.reader })).status, path).to.equal(404);
      }
    } finally {
      await app.close();
    }
  });

  it("with admin { readPolicy, writePolicy } as the README shows: openapi answers a reader with the forFeature routes, 403 a member", async () => {
    const { app, url } = await start(await accountsDatabase(), {
      authorizationPolicies: { qpRead: AdminReadGuard, qpWrite: AdminWriteGuard },
      admin: { readPolicy: "qpRead", writePolicy: "qpWrite" },
    }, features());
    try {
      const reply = await call(url, "GET", "/qp-admin/openapi", { claims: callers.reader });
      expect(reply.status, reply.text).to.equal(200);
      expect(Object.keys(reply.body.paths)).to.include.members(["/api/accounts/filter", "/api/accounts/segment", "/api/accounts/summary"]);
      expect((await call(url, "GET", "/qp-admin/openapi", { claims: callers.member })).status).to.equal(403);
      expect((await call(url, "GET", "/qp-admin/health", { claims: callers.reader })).status).to.equal(200);
    } finally {
      await app.close();
    }
  });

  it("admin with a readPolicy alone does not start: the message names writePolicy and allowAnonymousAccess (never a silent 404)", async () => {
    let caught: unknown;
    try {
      const { app } = await start(await accountsDatabase(), { authorizationPolicies: { qpRead: AdminReadGuard }, admin: { readPolicy: "qpRead" } }, features());
      await app.close();
    } catch (error) {
      caught = error;
    }
    expect(String((caught as Error)?.message)).to.match(/admin\.writePolicy is missing: the admin API needs both readPolicy and writePolicy.*allowAnonymousAccess: true/);
  });
});

// ---- docs/NESTJS.md's OpenAPI recipe, run as written -------------------------------------------

const nestDoc = readFileSync(new URL("../../../docs/NESTJS.md", import.meta.url), "utf8");
/** The ts block of the "### OpenAPI" section. */
const openApiRecipe = (() => {
  const section = nestDoc.slice(nestDoc.indexOf("### OpenAPI"));
  return /```ts\n([\s\S]*?)```/.exec(section)![1]!;
})();

describe("issue #41: docs/NESTJS.md's OpenAPI recipe with @nestjs/swagger, under Nest 12", () => {
  after(closeDatabases);

  async function appModule() {
    const dataSource = await accountsDatabase();
    @Module({
      imports: [
        QueryLibModule.forRoot({ configure: (o) => { o.entities.expose(Account, "customers"); }, claims: { valueClaims: { tenantId: "tenant" } }, dataSource }),
        QueryLibModule.forFeature([{ entity: Account, path: "api/accounts" }]),
      ],
      controllers: [ReadmeController],
      providers: [{ provide: DataSource, useValue: dataSource }],
    })
    class AppModule {}
    return AppModule;
  }

  it("the recipe as written (listen's port aside) serves /docs-json with the forFeature routes and the host's own, and /docs", async () => {
    expect(openApiRecipe).to.include("SwaggerModule.setup(\"docs\", app, () => mergeQueryLibOpenApi(");
    const listen = "await app.listen(3000);";
    expect(openApiRecipe.split(listen)).to.have.length(2);
    const code = `${openApiRecipe.replace(listen, "await app.listen(0, \"127.0.0.1\");")}\nreturn app;`;
    const AsyncFunction = (async () => undefined).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<INestApplication>;
    const quietNest = { create: (module: unknown) => NestFactory.create(module as never, { logger: false, abortOnError: false }) };
    const run = new AsyncFunction("NestFactory", "AppModule", "SwaggerModule", "DocumentBuilder", "mergeQueryLibOpenApi", code);
    const app = await run(quietNest, await appModule(), SwaggerModule, DocumentBuilder, mergeQueryLibOpenApi);
    try {
      const { port } = app.getHttpServer().address() as { port: number };
      const json = await call(`http://127.0.0.1:${port}`, "GET", "/docs-json");
      expect(json.status, json.text).to.equal(200);
      expect(Object.keys(json.body.paths)).to.include.members(["/api/accounts/filter", "/api/accounts/segment", "/api/accounts/summary", "/customers/filter"]);
      expect(json.body.components.schemas).to.have.property("CustomersFilter");
      expect((await call(`http://127.0.0.1:${port}`, "GET", "/docs")).status).to.equal(200);
    } finally {
      await app.close();
    }
  });

  it("the former recipe (await app.init(), then setup with a document) answers 404 on /docs-json: why the docs changed", async () => {
    const app = await NestFactory.create(await appModule(), { logger: false, abortOnError: false });
    try {
      await app.init();
      const document = mergeQueryLibOpenApi(SwaggerModule.createDocument(app, new DocumentBuilder().build()), app);
      SwaggerModule.setup("docs", app, document);
      await app.listen(0, "127.0.0.1");
      const { port } = app.getHttpServer().address() as { port: number };
      expect((await call(`http://127.0.0.1:${port}`, "GET", "/docs-json")).status).to.equal(404);
    } finally {
      await app.close();
    }
  });
});
