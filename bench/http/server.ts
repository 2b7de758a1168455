// The HTTP benchmark's server: one NestJS process on the benchmark's seeded database, with three
// endpoints per workload (W1, W2, W4) that answer the same question with the same rows, as a
// team would write each:
//   (a) hand-written: a controller, a class-validator DTO for the query parameters, a TypeORM
//       SelectQueryBuilder with the caller's tenant predicate;       GET /hand/w1|w2|w4?…
//   (b) nestjs-paginate: @Paginate() + paginate(), the tenant in `where`; GET /paginate/w1|w2|w4?…
//   (c) QueryLib: QueryLibModule.forFeature's guarded route (forced tenant predicate from the
//       caller's claims, the guarded bench domain's masks), audit as --audit says: off, on to the
//       relational sink, or on with group commit;                      POST /querylib/customers/filter
//       and, to tell the masks' cost from the rest, the same without masks (a diagnostic that
//       bench:http:paired, bench:http:profile and bench:http:cpu take);  POST /querylib/customers-unmasked/filter
// The caller is set by a middleware standing for the host's authentication (a verified token).
// GET /__bench/eld answers the event loop's delay since the last call (perf_hooks) and the
// requests' time in the server (routing to last byte), and resets both;
// with --profile, POST /__bench/profile/start and /stop run V8's CPU profiler.
//
//   node dist/bench/http/server.js --dialect=sqlite|postgres|mariadb --audit=off|on|group [--customers=N] [--profile]
// prints "LISTENING <port>" once it accepts requests on 127.0.0.1.
import "reflect-metadata";
import type { Server as HttpServer } from "node:http";
import { Session } from "node:inspector/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { createHistogram, monitorEventLoopDelay } from "node:perf_hooks";
import { type CallHandler, Controller, type ExecutionContext, Get, HttpCode, Inject, Post, Injectable, Module, type NestInterceptor, type NestMiddleware, Query, Req, ValidationPipe, type MiddlewareConsumer } from "@nestjs/common";
import { type Observable, finalize } from "rxjs";
import { NestFactory } from "@nestjs/core";
import { Transform, Type } from "class-transformer";
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsISO8601, IsString, Max, MaxLength, Min } from "class-validator";
import { Paginate, type PaginateQuery, paginate } from "nestjs-paginate";
import type { DataSource, QueryRunner, Repository } from "typeorm";
import { QpAuditEventRecord, QpTypeOrmAuditSink, QueryLibModule } from "../../nest-module/index.js";
import { QpInMemoryTokenVault, QueryLibSchema1795564800000 } from "../../lib/index.js";
import { ContactInfo, Customer, CustomerTier } from "../../test/domain/entities.js";
import { type Dialect, openBenchDatabase } from "../db.js";
import { BENCH_HASH_SALT, GUARDED_NAMES, GuardedCustomer, UnmaskedCustomer, openGuardedDataSource } from "../guarded-domain.js";

const argument = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const dialect = (argument("dialect") ?? "sqlite") as Dialect;
const audit = argument("audit") ?? "off";
if (!["off", "on", "group"].includes(audit)) throw new Error(`--audit=${audit}: off, on or group`);
const customers = Number(argument("customers") ?? 10000);
const profiling = process.argv.includes("--profile");
const heap = process.argv.includes("--heap");

const BASE = Symbol("bench.base");
const tiers = Object.values(CustomerTier);

interface Caller {
  user?: { sub: string; tenant: string };
}

/**
 * Each request's time in the server, from routing to its last byte handed to the socket
 * (microseconds): set against the client's latency, it tells a tail made while handling a request
 * from one made before the server reads it (the listen queue, the client's own event loop).
 */
const handling = createHistogram();

/** The host's authentication, standing in: every request is the same verified caller of tenant Gold. */
@Injectable()
class BenchAuthentication implements NestMiddleware {
  use(request: Caller & { url?: string }, response: { once(event: "finish", listener: () => void): void }, next: () => void): void {
    request.user = { sub: "bench-user", tenant: "Gold" };
    if (!request.url?.startsWith("/__bench")) {
      const started = process.hrtime.bigint();
      response.once("finish", () => handling.record(Math.max(1, Number((process.hrtime.bigint() - started) / 1000n))));
    }
    next();
  }
}

/** Requests whose handler has not finished yet, whether or not their client is still there: stop() waits for them. */
let inFlight = 0;

@Injectable()
class InFlightRequests implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    inFlight++;
    return next.handle().pipe(finalize(() => inFlight--));
  }
}

const toArray = ({ value }: { value: unknown }) => (Array.isArray(value) ? value : [value]);

class W1Query {
  @IsIn(tiers) tier!: string;
  @IsISO8601() from!: string;
  @IsISO8601() to!: string;
  @Type(() => Number) @IsInt() @Min(1) page!: number;
  @Type(() => Number) @IsInt() @Min(1) @Max(200) pageSize!: number;
}

class W2Query {
  @IsString() @MaxLength(100) name!: string;
  @Transform(toArray) @IsArray() @ArrayMaxSize(10) @IsIn(tiers, { each: true }) tier!: string[];
  @Type(() => Number) @IsInt() @Min(1) page!: number;
  @Type(() => Number) @IsInt() @Min(1) @Max(200) pageSize!: number;
}

class W4Query {
  @Transform(({ value }) => value === "true" || value === true) @IsBoolean() active!: boolean;
  @Type(() => Number) @IsInt() @Min(1) page!: number;
  @Type(() => Number) @IsInt() @Min(1) @Max(200) pageSize!: number;
}

const likeOf = (base: DataSource) =>
  base.options.type === "postgres" ? "c.name ILIKE :name" : "c.name LIKE :name";

/** (a) What a team writes by hand: DTOs, a builder, the tenant from the caller. */
@Controller("hand")
class HandWrittenController {
  private readonly customers: Repository<Customer>;

  constructor(@Inject(BASE) private readonly base: DataSource) {
    this.customers = base.getRepository(Customer);
  }

  @Get("w1")
  async w1(@Query() q: W1Query, @Req() request: Caller) {
    const [data, total] = await this.customers.createQueryBuilder("c")
      .where("c.tier = :tier", { tier: q.tier })
      .andWhere("c.createdAt BETWEEN :from AND :to", { from: new Date(q.from), to: new Date(q.to) })
      .andWhere("c.tier = :tenant", { tenant: request.user!.tenant })
      .orderBy("c.createdAt", "DESC").addOrderBy("c.id", "DESC")
      .skip((q.page - 1) * q.pageSize).take(q.pageSize)
      .getManyAndCount();
    return { data, total };
  }

  @Get("w2")
  async w2(@Query() q: W2Query, @Req() request: Caller) {
    const [data, total] = await this.customers.createQueryBuilder("c")
      .where(likeOf(this.base), { name: `%${q.name}%` })
      .andWhere("c.tier IN (:...tiers)", { tiers: q.tier })
      .andWhere("c.tier = :tenant", { tenant: request.user!.tenant })
      .orderBy("c.id", "ASC")
      .skip((q.page - 1) * q.pageSize).take(q.pageSize)
      .getManyAndCount();
    return { data, total };
  }

  @Get("w4")
  async w4(@Query() q: W4Query, @Req() request: Caller) {
    const [data, total] = await this.customers.createQueryBuilder("c")
      .leftJoin("c.contact", "ct")
      .select(["c.id", "c.name", "ct.id", "ct.email"])
      .where("c.isActive = :active", { active: q.active })
      .andWhere("c.tier = :tenant", { tenant: request.user!.tenant })
      .orderBy("c.name", "ASC").addOrderBy("c.id", "ASC")
      .offset((q.page - 1) * q.pageSize).limit(q.pageSize)
      .getManyAndCount();
    return { data, total };
  }
}

/** (b) nestjs-paginate: the query string is its own (filter.x=$op:v, sortBy, page, limit). */
@Controller("paginate")
class PaginateController {
  private readonly customers: Repository<Customer>;

  constructor(@Inject(BASE) base: DataSource) {
    this.customers = base.getRepository(Customer);
  }

  @Get("w1")
  w1(@Paginate() query: PaginateQuery, @Req() request: Caller) {
    return paginate(query, this.customers, {
      sortableColumns: ["id", "createdAt"], filterableColumns: { tier: true, createdAt: true }, maxLimit: 200,
      where: { tier: request.user!.tenant as CustomerTier },
    });
  }

  @Get("w2")
  w2(@Paginate() query: PaginateQuery, @Req() request: Caller) {
    return paginate(query, this.customers, {
      sortableColumns: ["id"], filterableColumns: { name: true, tier: true }, maxLimit: 200,
      where: { tier: request.user!.tenant as CustomerTier },
    });
  }

  @Get("w4")
  w4(@Paginate() query: PaginateQuery, @Req() request: Caller) {
    return paginate(query, this.customers, {
      sortableColumns: ["name", "id"], filterableColumns: { isActive: true }, relations: ["contact"], select: ["id", "name", "contact.email"], maxLimit: 200,
      where: { tier: request.user!.tenant as CustomerTier },
    });
  }
}

/** The event loop's delay since the last call, for the run that just ended. */
const resolutionMs = 5;
const loopDelay = monitorEventLoopDelay({ resolution: resolutionMs });
loopDelay.enable();

@Controller("__bench")
class BenchProbeController {
  @Get("eld")
  eld() {
    // The histogram holds each timer's whole interval: the delay is what exceeds the resolution.
    const ms = (ns: number) => Math.max(0, Math.round(ns / 1e4) / 100 - resolutionMs);
    const handled = (us: number) => Math.round(us) / 1000;
    const answer = {
      p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max), mean: ms(loopDelay.mean),
      handling: { count: handling.count, p50: handled(handling.percentile(50)), p99: handled(handling.percentile(99)) },
    };
    loopDelay.reset();
    handling.reset();
    return answer;
  }

  // V8's sampling profiler under load only (bench/http/profile.ts): --cpu-prof would
  // also sample startup, module loading and seeding.
  private profiler?: Session;

  @Post("profile/start")
  @HttpCode(200)
  async startProfile(): Promise<{ profiling: true }> {
    if (!profiling) throw new Error("start the server with --profile");
    this.profiler = new Session();
    this.profiler.connect();
    if (heap) {
      // Every sampled allocation, also those a GC has freed since: what a request allocates, not what it keeps.
      await this.profiler.post("HeapProfiler.startSampling", { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
      return { profiling: true };
    }
    await this.profiler.post("Profiler.enable");
    await this.profiler.post("Profiler.setSamplingInterval", { interval: 1000 });
    await this.profiler.post("Profiler.start");
    return { profiling: true };
  }

  @Post("profile/stop")
  @HttpCode(200)
  async stopProfile(): Promise<unknown> {
    const { profile } = heap ? await this.profiler!.post("HeapProfiler.stopSampling") : await this.profiler!.post("Profiler.stop");
    this.profiler!.disconnect();
    this.profiler = undefined;
    return profile;
  }
}

/**
 * QueryLib's tables on a database that has none yet. The paired runner starts two servers at once,
 * so the other one may be creating them right now: a failed CREATE waits for its last table.
 */
async function ensureQueryLibTables(runner: QueryRunner): Promise<void> {
  if (await runner.hasTable("querylib_audit_event")) return;
  try {
    await new QueryLibSchema1795564800000().up(runner);
  } catch (error) {
    for (let i = 0; i < 100 && !(await runner.hasTable("querylib_audit_event")); i++) await sleep(100);
    if (!(await runner.hasTable("querylib_audit_event"))) throw error;
  }
}

async function main(): Promise<void> {
  const quiet = () => undefined;
  const db = await openBenchDatabase(dialect, { customers, seed: 42 }, quiet);
  const guarded = await openGuardedDataSource(db.dataSource, [QpAuditEventRecord, UnmaskedCustomer, ContactInfo]);
  const runner = guarded.createQueryRunner();
  try {
    await ensureQueryLibTables(runner);
    // Each run starts from an empty trail: a table that grows from run to run would make later runs' inserts dearer.
    await runner.query(dialect === "mariadb" ? "DELETE FROM `querylib_audit_event`" : `DELETE FROM "querylib_audit_event"`);
  } finally {
    await runner.release();
  }

  @Module({
    imports: [
      QueryLibModule.forRoot({
        configure: (options) => {
          options.entities.expose(GuardedCustomer, GUARDED_NAMES.customers);
          options.entities.expose(UnmaskedCustomer, "unmaskedCustomers");
          options.hashSalt = BENCH_HASH_SALT;
          options.tokenVault = new QpInMemoryTokenVault();
        },
        claims: { userClaim: "sub", tenantClaim: "tenant", valueClaims: { tenant: "tenant" } },
        ...(audit === "off" ? {} : { audit: { sink: new QpTypeOrmAuditSink(guarded), groupCommit: audit === "group" } }),
        dataSource: guarded,
      }),
      QueryLibModule.forFeature([
        { entity: GuardedCustomer, path: "querylib/customers", shapes: ["filter"] },
        // A diagnostic, not one of the three endpoints: the same route and policy without masks.
        { entity: UnmaskedCustomer, path: "querylib/customers-unmasked", shapes: ["filter"] },
      ]),
    ],
    controllers: [HandWrittenController, PaginateController, BenchProbeController],
    providers: [{ provide: BASE, useValue: db.dataSource }, BenchAuthentication],
  })
  class BenchHttpModule {
    configure(consumer: MiddlewareConsumer): void {
      consumer.apply(BenchAuthentication).forRoutes("*path");
    }
  }

  const app = await NestFactory.create(BenchHttpModule, { logger: ["error"] });
  app.useGlobalPipes(new ValidationPipe({ transform: true, whitelist: true, forbidNonWhitelisted: true }));
  app.useGlobalInterceptors(new InFlightRequests());
  await app.listen(0, "127.0.0.1");
  const { port } = app.getHttpServer().address() as { port: number };
  process.stdout.write(`LISTENING ${port} ${db.serverVersion}\n`);
  const stop = async () => {
    // The requests still running when a load ends (at 200 connections, most of them waiting for a
    // pooled connection; their clients are gone) finish first: Nest's close() runs the modules'
    // destroy hooks before it stops the HTTP server, and they then failed on closed pools and were
    // logged as errors after every run (outside the timed window).
    const http = app.getHttpServer() as HttpServer;
    http.close();
    http.closeIdleConnections();
    const deadline = Date.now() + 10_000;
    while (inFlight > 0 && Date.now() < deadline) await sleep(10);
    await app.close();
    await guarded.destroy().catch(() => undefined);
    await db.close().catch(() => undefined);
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
}

main().catch((error: unknown) => {
  process.stderr.write(`bench server failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
