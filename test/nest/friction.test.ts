// Issue #41, the frictions a new user met building a NestJS app from the README and docs/NESTJS.md:
// each as the user wrote it (the README's snippets as written, a default NestFactory.create, no
// filter of their own), with what it answered before and what it answers now.
import "reflect-metadata";
import { expect } from "chai";
import { Controller, Get, HttpCode, Module, NotFoundException, Post } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import type { INestApplication } from "@nestjs/common";
import { DataSource, type Repository } from "typeorm";
import { type Filter, type QpPolicyContext } from "../../lib/index.js";
import { QpContext, QpFilter, QueryLibModule, QueryLibService } from "../../nest-module/index.js";
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

async function start(dataSource: DataSource, module: Record<string, unknown> = {}, features: unknown[] = []): Promise<{ app: INestApplication; url: string }> {
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
  const app = await NestFactory.create(AppModule, { logger: false });
  app.use(testAuthentication);
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
