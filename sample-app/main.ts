// The sample app: a NestJS application on an embedded, seeded SQLite database (PostgreSQL or
// MariaDB with QUERYLIB_DB, see ormconfig.ts), QueryLib's policy layer on every query, the admin
// API at /qp-admin, dev users selected by bearer tokens (dev mode only, see dev-mode.ts) and, at
// /, the filter page (static files from sample-app/public). `npm start` runs it in dev mode on
// 127.0.0.1:3000 (PORT changes the port) and prints what to try.
import "reflect-metadata";
import { type INestApplication, Logger, type LoggerService, type LogLevel } from "@nestjs/common";
import { HttpAdapterHost, NestFactory } from "@nestjs/core";
import type { NestExpressApplication } from "@nestjs/platform-express";
import { fileURLToPath } from "node:url";
import { DataSource } from "typeorm";
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from "@nestjs/swagger";
import { QpExceptionFilter, mergeQueryLibOpenApi } from "../nest-module/index.js";
import { type SampleAppOptions, SampleAppModule, SampleSeeder } from "./app.module.js";
import type { StartupOutcome } from "./startup.js";
import { canReadPolicies, devAuthentication, devUsers, type DevUser, refuseDevTokens } from "./auth.js";
import { sampleKeyVariables } from "./secrets.js";
import { devHostBanner, devHostNotice, devModeRequested, markDevHost, resolveDevMode } from "./dev-mode.js";
import { publicDirectory, setStaticHeaders } from "./public-files.js";
import { gridVendor } from "./grid-vendor.js";
import { answerBodyErrors, forgetEmptyBodies, jsonParserOptions, refuseUnreadableBodies } from "./request-bodies.js";
import { serveMetrics, startSampleTelemetry } from "./telemetry.js";

export const sampleHost = "127.0.0.1";

/** The folders of dist/lib that querylib/client's modules import. */
const clientFolders = ["client", "shapes", "errors"];

export interface SampleApp {
  readonly url: string;
  readonly port: number;
  readonly app: INestApplication;
  readonly dataSource: DataSource;
  readonly users: readonly DevUser[];
  /** Whether dev mode was granted (asked for, and not in a production configuration). */
  readonly devMode: boolean;
  /** "seeded": this process seeded an empty database; "found": the data was there (another replica, an earlier run). */
  readonly startup: StartupOutcome;
  close(): Promise<void>;
}

export interface StartOptions extends SampleAppOptions {
  /** Nest's logger: false for silence (tests), or the levels to print. */
  readonly logger?: false | LogLevel[] | LoggerService;
}

/**
 * Express middleware in front of /docs and /docs-json: the OpenAPI document describes every
 * route and what it accepts, which is for whoever administers the policy, not for the callers it
 * describes. The admin API's read policy (canReadPolicies) or 401/403, with the JSON error body.
 */
export function requireAdminRead(request: { user?: unknown; method?: string; path?: string }, response: { status(code: number): { json(body: unknown): unknown } }, next: () => void): void {
  if (canReadPolicies({ user: request.user, method: request.method, path: "/docs" })) return next();
  const signedIn = request.user !== undefined && request.user !== null;
  response.status(signedIn ? 403 : 401).json(signedIn
    ? { code: "Forbidden", message: "the OpenAPI document and Swagger UI need the admin API's read policy" }
    : { code: "Unauthorized", message: "the OpenAPI document and Swagger UI need a signed-in caller with the admin API's read policy" });
}

/**
 * Swagger UI at /docs (the document at /docs-json), behind the admin read policy (requireAdminRead): @nestjs/swagger describes the app's own
 * controllers and QueryLib adds the entity routes with their schemas. Made on the first request,
 * once the entity routes have started (the factory form of SwaggerModule.setup).
 */
function serveApiDocs(app: INestApplication): void {
  const config = new DocumentBuilder().setTitle("QueryLib sample app").setVersion("3.0.0")
    .setDescription("The entity routes (QueryLibModule.forFeature) and the app's own. Dev mode: Authorization: Bearer <token> of a dev user (GET /api/dev-users).")
    .addBearerAuth().build();
  let document: OpenAPIObject | undefined;
  SwaggerModule.setup("docs", app, () => (document ??= mergeQueryLibOpenApi(SwaggerModule.createDocument(app, config), app)), { jsonDocumentUrl: "docs-json" });
}

/** Starts the sample app on 127.0.0.1:`port` (0: an ephemeral port) and resolves once it listens. */
export async function startSampleApp(port = Number(process.env.PORT ?? 3000), options: StartOptions = {}): Promise<SampleApp> {
  const devMode = resolveDevMode(options.devMode === true);
  const app = await NestFactory.create<NestExpressApplication>(SampleAppModule.register(options), {
    logger: options.logger ?? ["error", "warn", "log"], abortOnError: false, bodyParser: false,
  });
  // The OpenTelemetry SDK (telemetry.ts): metrics for GET /metrics, spans in dev mode; released when the app closes.
  const telemetry = startSampleTelemetry(devMode.enabled);
  const logger = new Logger("SampleApp");
  if (devMode.refusal) logger.warn(devMode.refusal);
  if (devMode.enabled) {
    logger.warn(devHostNotice);
    const drawn = sampleKeyVariables.filter((variable) => !process.env[variable]?.trim());
    if (drawn.length > 0) logger.warn(`${drawn.join(" and ")} not set: drawn at random for this start (secrets.ts), so hashes and vault tokens change at every start`);
    app.use(markDevHost);
  }
  // Before any route or static file, in this order: refuse bodies that cannot be read, parse
  // JSON, answer the failures with the JSON error body (request-bodies.ts).
  app.use(refuseUnreadableBodies);
  app.useBodyParser("json", jsonParserOptions);
  app.use(forgetEmptyBodies);
  app.use(answerBodyErrors);
  app.useStaticAssets(publicDirectory(), { index: "index.html", redirect: false, setHeaders: setStaticHeaders });
  // querylib/client for the page, from the library's own build: its folder and the two it imports, nothing else of the server.
  for (const folder of clientFolders) {
    app.useStaticAssets(fileURLToPath(new URL(`../lib/${folder}/`, import.meta.url)), { prefix: `/querylib/${folder}/`, index: false, redirect: false, setHeaders: setStaticHeaders });
  }
  // The grid page's AG Grid Community, from node_modules (grid-vendor.ts).
  app.use(gridVendor());
  app.use(devMode.enabled ? devAuthentication : refuseDevTokens);
  app.use("/metrics", serveMetrics(telemetry));
  // Unknown routes (and anything a controller's own filter did not answer) get the same JSON error body.
  app.useGlobalFilters(new QpExceptionFilter(app.get(HttpAdapterHost)));
  app.use(["/docs", "/docs-json"], requireAdminRead);
  serveApiDocs(app);
  await app.listen(port, sampleHost).catch(async (error: unknown) => {
    await telemetry.release();
    throw error;
  });
  const address = app.getHttpServer().address() as { port: number };
  return {
    url: `http://${sampleHost}:${address.port}`,
    port: address.port,
    app,
    dataSource: app.get(DataSource),
    users: devUsers,
    devMode: devMode.enabled,
    startup: app.get(SampleSeeder).outcome!,
    close: () => app.close().finally(() => telemetry.release()),
  };
}

/** What `npm start` prints after start-up: the dev users and curl lines to try. */
export function tryLines(url: string): string[] {
  const json = (body: unknown) => `'${JSON.stringify(body)}'`;
  const curl = (token: string, path: string, body?: unknown) =>
    `curl -s ${url}${path} -H 'authorization: Bearer ${token}'${body === undefined ? "" : ` -H 'content-type: application/json' -d ${json(body)}`}`;
  return [
    `Filter page: ${url}/ (pick a dev user and an entity, build a query, run it)`,
    "",
    "Dev users (send Authorization: Bearer <token>):",
    ...devUsers.map((u) => `  ${u.token.padEnd(9)} ${u.claims.sub.padEnd(5)} roles=${u.claims.roles.join(",").padEnd(8)} tenant=${u.claims.tenant.padEnd(9)} ${u.about}`),
    "",
    "Try:",
    `  ${curl("dev-ben", "/api/customers/filter", { conditionGroup: { conditions: [{ sort: 1, field: "segment", dataType: "Enum", operator: "Equal", values: ["Enterprise"] }] }, selects: ["id", "name", "nationalId", "birthDate", "balance", "contact.email", "contact.phone"], page: { pageNumber: 1, pageSize: 3 } })}`,
    `  ${curl("dev-cleo", "/api/orders/summary", { groupBy: { fields: ["status"], aggregateBy: [{ alias: "orders", aggregator: "Count" }, { field: "total", alias: "revenue", aggregator: "Sumation" }] }, orders: [{ sort: 1, field: "status" }] })}`,
    `  ${curl("dev-ada", "/api/employees/filter", { selects: ["name", "title", "salary", "managerId"], orders: [{ sort: 1, field: "salary", direction: "Descending" }], page: { pageNumber: 1, pageSize: 3 } })}`,
    `  ${curl("dev-ben", "/qp-admin/schema", { entity: "customers", depth: 1 })}`,
    `  ${curl("dev-root", "/qp-admin/rules")}`,
    `  ${curl("dev-ada", "/api/audit?limit=5")}`,
  ];
}

const isMain = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1].replace(/\\/g, "/")}`).href;

if (isMain) {
  try {
    const sample = await startSampleApp(undefined, { devMode: devModeRequested() });
    const database = process.env.QUERYLIB_DB ?? "sqlite";
    const data = sample.startup === "seeded" ? "seeded" : "data found in the database, nothing seeded";
    console.log(`\nQueryLib sample app on ${sample.url} (${database}${database === "sqlite" ? ", in memory" : ""}, ${data}). Ctrl-C stops it.\n`);
    if (sample.devMode) {
      for (const line of devHostBanner()) console.log(line);
      console.log("");
      for (const line of tryLines(sample.url)) console.log(line);
    } else {
      console.log("Dev mode is off: no dev token signs anyone in and GET /api/dev-users does not exist; every query answers 401.");
      console.log("Dev mode: npm start (node dist/sample-app/main.js --dev) or QUERYLIB_DEV=1, never with NODE_ENV=production.");
    }
    console.log("");
    const stop = () => void sample.close().finally(() => process.exit(0));
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  } catch (error) {
    console.error(`The sample app did not start: ${(error as Error).message}`);
    process.exit(1);
  }
}
