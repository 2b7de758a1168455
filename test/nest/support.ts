// Shared pieces of the querylib/nest tests: a small decorated domain (tenant-scoped accounts)
// on its own in-memory SQLite database, a test controller that runs guarded queries through
// QueryLibService, a header-based test authentication, and helpers that start a real Nest app
// on 127.0.0.1 (ephemeral port) and call it over HTTP.
import "reflect-metadata";
import { request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { Body, type CanActivate, Controller, type DynamicModule, Get, HttpCode, Injectable, type INestApplication, Module, Post, Req, type Type, UseFilters } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { Column, DataSource, Entity, PrimaryColumn } from "typeorm";
import {
  MaskStrategy, Operator, PolicyFeature, QpAudit, QpDenied, QpDescribe, QpEntity, QpForceWhere, QpMask, QpNoOrder, QpNoWhere, QpOperators, QpAllowedValues,
} from "../../lib/index.js";
import {
  QpAuditEventRecord, QpExceptionFilter, QueryLibModule, QueryLibService, type QueryLibModuleOptions, getPolicyContextAsync,
} from "../../nest-module/index.js";

export enum AccountStatus { Open = "Open", Frozen = "Frozen", Closed = "Closed" }

@QpEntity({ requirePolicy: true })
@Entity("nest_account")
export class Account {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenantId" })
  @Column({ type: "varchar", length: 20 }) tenantId!: string;
  @QpDescribe({ label: "Account holder", group: "Identity", order: 1 })
  @Column({ type: "varchar", length: 80 }) name!: string;
  @QpMask({ strategy: MaskStrategy.Email }) @QpNoOrder() @QpOperators({ allow: [Operator.Equal, Operator.In] })
  @Column({ type: "varchar", length: 120, nullable: true }) email!: string | null;
  @QpDenied() @Column({ type: "varchar", length: 40 }) secret!: string;
  @QpAudit(PolicyFeature.Where | PolicyFeature.Select | PolicyFeature.Order)
  @Column({ type: "int" }) salary!: number;
  @QpNoWhere() @Column({ type: "varchar", length: 40 }) region!: string;
  @QpAllowedValues(Object.values(AccountStatus))
  @Column({ type: "simple-enum", enum: AccountStatus }) status!: AccountStatus;
}

export const tenants = ["t-1", "t-2", "t-3"] as const;

/** 30 accounts: ids 1..30, tenant t-1/t-2/t-3 by id modulo 3 (the oracle of tenant scoping). */
export function accountRows(): Account[] {
  return Array.from({ length: 30 }, (_, i) => {
    const id = i + 1;
    return Object.assign(new Account(), {
      id, tenantId: tenants[id % 3]!, name: `Holder ${String(id).padStart(2, "0")}`, email: id % 7 === 0 ? null : `holder${id}@bank.example`,
      secret: `S-${id}`, salary: 1000 * id, region: ["north", "south", "east"][id % 3 === 0 ? 0 : id % 2]!, status: [AccountStatus.Open, AccountStatus.Frozen, AccountStatus.Closed][id % 3]!,
    });
  });
}

export const expectedIds = (tenant: string) => accountRows().filter((a) => a.tenantId === tenant).map((a) => a.id);

const openSources: DataSource[] = [];

/** A fresh in-memory SQLite database with the accounts (and the audit table). */
export async function accountsDatabase(): Promise<DataSource> {
  const dataSource = await new DataSource({ type: "better-sqlite3", database: ":memory:", entities: [Account, QpAuditEventRecord], synchronize: true, logging: false }).initialize();
  await dataSource.getRepository(Account).insert(accountRows());
  openSources.push(dataSource);
  return dataSource;
}

export async function closeDatabases(): Promise<void> {
  await Promise.all(openSources.splice(0).filter((d) => d.isInitialized).map((d) => d.destroy()));
}

/** The test's authentication: the JSON of header `x-test-claims` becomes `request.user`. */
export function testAuthentication(request: { headers: Record<string, unknown>; user?: unknown }, _response: unknown, next: () => void): void {
  const raw = request.headers["x-test-claims"];
  if (typeof raw === "string") request.user = JSON.parse(raw);
  next();
}

export class QueryFailedAfterTheQuery extends Error {}

/** Guarded queries and context inspection through QueryLibService. */
@Controller("accounts")
@UseFilters(QpExceptionFilter)
export class AccountsController {
  constructor(private readonly querylib: QueryLibService, private readonly dataSource: DataSource) {}

  @Post("query") @HttpCode(200)
  async query(@Req() request: object, @Body() body: unknown) {
    const guarded = await this.querylib.guardAsync(this.dataSource.getRepository(Account), request);
    return guarded.toListAsync(body ?? {});
  }

  /** The guarded query asking for its SQL too (getQueryString): refused under a forced predicate. */
  @Post("query-sql") @HttpCode(200)
  async querySql(@Req() request: object, @Body() body: unknown) {
    const guarded = await this.querylib.guardAsync(this.dataSource.getRepository(Account), request);
    return guarded.toListAsync(body ?? {}, true);
  }

  /** Runs the guarded query (recording its audit events), then fails. */
  @Post("query-then-fail") @HttpCode(200)
  async queryThenFail(@Req() request: object, @Body() body: unknown) {
    await this.querylib.getPolicyContextAsync(request);
    // No context argument: the request's own context, found through AsyncLocalStorage.
    await this.querylib.applyPolicy(this.dataSource.getRepository(Account)).toListAsync(body ?? {});
    throw new QueryFailedAfterTheQuery("the handler failed after its query");
  }

  /** Runs the guarded query twice in one request (one context): the same uses twice. */
  @Post("query-twice") @HttpCode(200)
  async queryTwice(@Req() request: object, @Body() body: unknown) {
    const context = await this.querylib.getPolicyContextAsync(request);
    await this.querylib.applyPolicy(this.dataSource.getRepository(Account), context).toListAsync(body ?? {});
    return this.querylib.applyPolicy(this.dataSource.getRepository(Account), context).toListAsync(body ?? {});
  }

  /** Runs the guarded query and reports how many audit events its context holds before the end of the request. */
  @Post("query-count") @HttpCode(200)
  async queryCount(@Req() request: object, @Body() body: unknown) {
    const context = await this.querylib.getPolicyContextAsync(request);
    const result = await this.querylib.applyPolicy(this.dataSource.getRepository(Account), context).toListAsync(body ?? {});
    return { totalCount: result.totalCount, recorded: context.auditEvents.length };
  }

  /** The context the claims adapter built: subjects and values, prepared once per request. */
  @Get("context")
  async context(@Req() request: object) {
    const first = await getPolicyContextAsync(request, this.querylib.runtime.claims);
    const second = await this.querylib.getPolicyContextAsync(request);
    return {
      subjects: first.subjects, values: Object.fromEntries(first.values), prepared: first.isPrepared, samePerRequest: first === second,
      current: this.querylib.currentContext() === first,
    };
  }
}

export interface TestAppOptions {
  /** Module options merged over the defaults below (admin, audit, policies, …). */
  readonly module?: Partial<QueryLibModuleOptions>;
  /** Replace the whole QueryLibModule import (forRootAsync and failure tests). */
  readonly imports?: any[];
  readonly controllers?: Type[];
  readonly providers?: any[];
  /** Runs on the created app before it listens (mapQpPolicyAdmin, useQpPolicyAudit). */
  readonly beforeListen?: (app: INestApplication) => void | Promise<void>;
  /** Use this database instead of a fresh one. */
  readonly dataSource?: DataSource;
  /** Do not register the DataSource as a provider (the module then has none unless its options name one). */
  readonly noDataSourceProvider?: boolean;
}

export interface TestApp {
  readonly app: INestApplication;
  readonly url: string;
  readonly dataSource: DataSource;
  readonly service: QueryLibService;
  close(): Promise<void>;
}

/** Readers may read the admin API (predicate); writers may write (a guard instance). */
export const readerPredicate = (request: { user?: { roles?: string[] } }) => (request.user?.roles ?? []).some((r) => r === "reader" || r === "writer");

@Injectable()
export class WriterGuard implements CanActivate {
  canActivate(context: import("@nestjs/common").ExecutionContext): boolean {
    const user = context.switchToHttp().getRequest<{ user?: { roles?: string[] } }>().user;
    return (user?.roles ?? []).includes("writer");
  }
}

export function defaultModuleOptions(dataSource: DataSource): QueryLibModuleOptions {
  return {
    policies: { Tier: "Convenience", RefreshInterval: "00:00:30", Caps: { MaxPageSize: 100, MinGroupSize: 1 } },
    configure: (options) => {
      options.entities.expose(Account, "accounts");
    },
    claims: { valueClaims: { tenantId: "tenant" } },
    authorizationPolicies: { reader: readerPredicate, writer: new WriterGuard() },
    admin: { routePrefix: "/qp-admin", readPolicy: "reader", writePolicy: "writer" },
    dataSource,
  };
}

/** Builds the application module (not started). */
export function testModule(options: TestAppOptions, dataSource: DataSource): DynamicModule {
  @Module({})
  class TestAppModule {}
  return {
    module: TestAppModule,
    imports: options.imports ?? [QueryLibModule.forRoot({ ...defaultModuleOptions(dataSource), ...(options.module ?? {}) })],
    controllers: options.controllers ?? [AccountsController],
    providers: [...(options.noDataSourceProvider ? [] : [{ provide: DataSource, useValue: dataSource }]), ...(options.providers ?? [])],
  };
}

/** Creates the app (a rejected promise carries a startup failure; nothing aborts the process). */
export async function createTestApp(options: TestAppOptions = {}): Promise<{ app: INestApplication; dataSource: DataSource }> {
  const dataSource = options.dataSource ?? (await accountsDatabase());
  const app = await NestFactory.create(testModule(options, dataSource), { logger: false, abortOnError: false });
  app.use(testAuthentication);
  return { app, dataSource };
}

/** Creates and starts a test app on 127.0.0.1 with an ephemeral port. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const { app, dataSource } = await createTestApp(options);
  await options.beforeListen?.(app);
  await app.listen(0, "127.0.0.1");
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${port}`, dataSource, service: app.get(QueryLibService), close: () => app.close() };
}

/** Starts the app and expects startup to fail; returns the error. */
export async function startupError(options: TestAppOptions): Promise<Error> {
  let app: INestApplication | undefined;
  try {
    const created = await createTestApp(options);
    app = created.app;
    await options.beforeListen?.(app);
    await app.listen(0, "127.0.0.1");
  } catch (error) {
    await app?.close().catch(() => undefined);
    return error as Error;
  }
  await app.close();
  throw new Error("expected the application to fail at startup, but it started");
}

export interface Reply {
  readonly status: number;
  readonly body: any;
  readonly text: string;
  readonly headers: Headers;
}

export interface CallOptions {
  readonly body?: unknown;
  /** Sent as is (not JSON-encoded). */
  readonly raw?: string;
  readonly claims?: Record<string, unknown>;
  readonly headers?: Record<string, string>;
}

/** One HTTP request to the app; the body is parsed as JSON when it is JSON. */
export async function call(base: string, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.claims) headers["x-test-claims"] = JSON.stringify(options.claims);
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
  const response = await fetch(base + path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed, text, headers: response.headers };
}

/** Callers used across the suites. */
export const callers = {
  reader: { sub: "rita", roles: ["reader"], tenant: "t-1" },
  writer: { sub: "walt", roles: ["writer"], tenant: "t-1" },
  member: { sub: "mona", roles: ["member"], tenant: "t-2" },
  tenant: (tenant: string, sub = `user-of-${tenant}`) => ({ sub, roles: ["member"], tenant }),
} as const;

/** No response body may carry a stack trace or a file path. */
export function assertNoStack(reply: Reply): void {
  if (/\n\s+at |\.js:\d+|\.ts:\d+|node:internal/.test(reply.text)) throw new Error(`the response carries a stack trace: ${reply.text}`);
}

export interface RawCallOptions {
  readonly headers?: Record<string, string>;
  /** Written as is; a GET or DELETE may carry one too (fetch refuses that, node:http does not). */
  readonly body?: string | Buffer;
  /** Send the body chunked (no content-length). */
  readonly chunked?: boolean;
}

/** One HTTP request through node:http, with exactly the given headers and body bytes. */
export function rawCall(base: string, method: string, path: string, options: RawCallOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body, "utf8");
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (body !== undefined && !options.chunked) headers["content-length"] = String(body.length);
    if (options.chunked) headers["transfer-encoding"] = "chunked";
    const request = httpRequest(base + path, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("error", reject);
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let parsed: unknown = text;
        try {
          parsed = text === "" ? null : JSON.parse(text);
        } catch {
          parsed = text;
        }
        const replyHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) replyHeaders.set(name, Array.isArray(value) ? value.join(", ") : value);
        resolve({ status: response.statusCode ?? 0, body: parsed, text, headers: replyHeaders });
      });
    });
    request.on("error", reject);
    if (body !== undefined) request.write(body);
    request.end();
  });
}

/** A port nothing listens on now (the OS picks it; closed again before it is handed out), for a child process to bind. */
export const freePort = () => new Promise<number>((resolve, reject) => {
  const server = createServer();
  server.once("error", reject);
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as { port: number };
    server.close(() => resolve(port));
  });
});
