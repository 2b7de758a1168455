// QueryLibModule.forFeature: a guarded query controller per exposed entity, in one line.
//
//   QueryLibModule.forFeature([{ entity: Customer, path: "customers", shapes: ["filter", "summary"] }], { guards: [AuthGuard] })
//
// mounts POST customers/filter (and GET, its query string), POST customers/summary. Each route
// does what a hand-written one would: prepare the caller's context with the module's claims
// (@QpContext), apply the policy on the entity's repository and run the request as the route's
// shape with the module's caps (see run()); errors are the module's (QpExceptionFilter), audit is the
// module's interceptor's, and the host's guards run first. Like the admin controller, each class
// is made here because a controller's path is fixed when its class is defined.
import { type CanActivate, Controller, type ExecutionContext, Get, HttpCode, Inject, Injectable, type DynamicModule, type OnModuleInit, Post, Req, Res, type Type, UseFilters, UseGuards, createParamDecorator } from "@nestjs/common";
import type { ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ObjectLiteral, Repository } from "typeorm";
import { type Filter, type QpPolicyContext, QpConfigurationError, applyPolicy, toCsv, toNdjson } from "../lib/index.js";
import type { QpShapeName } from "../lib/openapi/document.js";
import { QpExceptionFilter, QpHttpError, requireJsonObject } from "./errors.js";
import { QpContext, QpFilter, rawQueryOf } from "./params.js";
import type { QpRuntime } from "./runtime.js";
import type { QpFeatureRoute } from "./options.js";

import { QP_RUNTIME } from "./tokens.js";
import { type QpAgGridRouteOptions, agGridRows, checkAgGridOption } from "./ag-grid-route.js";

export type { QpShapeName };
const allShapes: readonly QpShapeName[] = ["filter", "segment", "summary"];

/** One entity's query routes. */
export interface QpFeatureEntity {
  /** The TypeORM entity class; it must be exposed (`options.entities.expose` in QueryLibModule's configure). */
  readonly entity: Function;
  /** The controller path (literal segments), e.g. "customers". */
  readonly path: string;
  /** The shapes served; default all three. */
  readonly shapes?: readonly QpShapeName[];
  /**
   * Also mount `POST {path}/export` (a Filter or Segment body) and `GET {path}/export` (the filter
   * query string): every row the caller may read, streamed as NDJSON, or CSV for `Accept: text/csv`
   * (docs/NESTJS.md, "Exports"). Off by default: an export reads up to MaxExportRows rows.
   */
  readonly exports?: boolean;
  /**
   * Also mount `POST {path}/ag-grid`: AG Grid's own server-side request body (startRow, endRow,
   * rowGroupCols, valueCols, groupKeys, filterModel, sortModel), translated on the server against
   * the caller's schema and answered `{ rowData, rowCount }` (docs/CLIENTS.md). `true`, or
   * `{ timeZone }`: where a date without an offset is read (default "UTC"; a body may name its own).
   */
  readonly agGrid?: boolean | QpAgGridRouteOptions;
}

export interface QpFeatureOptions {
  /** Guards (classes or instances) run before every route of these controllers, e.g. the host's authentication. */
  readonly guards?: readonly (CanActivate | Type<CanActivate>)[];
  /**
   * Whether `?sql=true` may ask for the SQL (the result's `queryString`); the policy still decides
   * (QueryStringDenied). Default true.
   */
  readonly sqlParameter?: boolean;
}

const literalPath = /^\/?[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*\/?$/;

function checkEntry(entry: unknown, at: string): asserts entry is QpFeatureEntity {
  if (entry === null || typeof entry !== "object") throw new QpConfigurationError(`${at} must be { entity, path, shapes? }`);
  for (const key of Object.keys(entry)) {
    if (!["entity", "path", "shapes", "exports", "agGrid"].includes(key)) throw new QpConfigurationError(`${at}.${key}: unknown option; expected entity, path, shapes, exports or agGrid`);
  }
  const e = entry as QpFeatureEntity;
  if (e.exports !== undefined && typeof e.exports !== "boolean") throw new QpConfigurationError(`${at}.exports must be true or false`);
  checkAgGridOption(e.agGrid, at);
  if (typeof e.entity !== "function") throw new QpConfigurationError(`${at}.entity must be an entity class`);
  if (typeof e.path !== "string" || !literalPath.test(e.path)) {
    throw new QpConfigurationError(`${at}.path "${String(e.path)}" must be a literal path such as "customers" (letters, digits, . _ ~ - and /)`);
  }
  if (e.shapes !== undefined) {
    if (!Array.isArray(e.shapes) || e.shapes.length === 0) throw new QpConfigurationError(`${at}.shapes must list one or more of ${allShapes.join(", ")}`);
    for (const shape of e.shapes) if (!allShapes.includes(shape)) throw new QpConfigurationError(`${at}.shapes: "${String(shape)}" is not one of ${allShapes.join(", ")}`);
  }
}

/** `?sql=true`, given at most once. */
function sqlRequested(request: object, allowed: boolean): boolean {
  if (!allowed) return false;
  const values = new URLSearchParams(rawQueryOf(request)).getAll("sql");
  if (values.length > 1) throw new QpHttpError(400, "InvalidRequest", "query parameter sql must be given once, as a plain value");
  return values[0] === "true";
}

interface FeatureControllerInstance {
  readonly route: QpFeatureRoute;
  readonly repository: Repository<ObjectLiteral>;
}

/**
 * Runs a route's request. A POST body is handed over as JSON for the guarded query to parse as
 * the route's shape, only when no cached plan answers it (toListAsyncOf): parsing it here first
 * cost a repeated request a parse it did not need (13 µs of 1.2 ms on the HTTP benchmark's W1).
 * A GET query string is parsed by @QpFilter, its grammar being the route's, not the library's.
 */
function run(instance: FeatureControllerInstance, kind: QpShapeName | null, shape: unknown, context: QpPolicyContext, request: object) {
  const guarded = applyPolicy(instance.repository, context);
  const sql = sqlRequested(request, instance.route.sqlParameter);
  return kind === null ? guarded.toListAsync(shape as Filter, sql) : guarded.toListAsyncOf(kind, shape, sql);
}

/**
 * An export route: the rows stream as NDJSON (or CSV for `Accept: text/csv`) from the guarded
 * export (api/export.ts). The first batch is read before anything is written, so a refusal (a
 * denied field, CapExceeded past MaxExportRows) is the module's error response, not a truncated
 * body; after that, each chunk is written when the client has taken the last (pipeline waits on
 * the socket), and a client that goes away ends the pipeline, which returns the export's iterator:
 * no further batch is read and the guard records its audit events once.
 */
async function exportTo(instance: FeatureControllerInstance, shape: unknown, context: QpPolicyContext, request: object, response: ServerResponse): Promise<void> {
  const accept = String((request as { headers?: Record<string, unknown> }).headers?.accept ?? "");
  const csv = /\btext\/csv\b/i.test(accept);
  const batches = applyPolicy(instance.repository, context).exportAsync(shape as Filter);
  const first = await batches.next();
  const rest = async function* () {
    if (!first.done) yield first.value;
    yield* batches;
  };
  const chunks = csv ? toCsv(rest()) : toNdjson(rest());
  response.statusCode = 200;
  response.setHeader("content-type", csv ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8");
  response.setHeader("content-disposition", `attachment; filename="${instance.route.publicName}.${csv ? "csv" : "ndjson"}"`);
  try {
    await pipeline(Readable.from(chunks), response);
  } catch (error) {
    // The client went away (or the export failed after its first rows): the body cannot say so; the connection is closed.
    if (!response.destroyed) response.destroy(error as Error);
  } finally {
    // Ends the export however the pipeline ended (a no-op once it finished): no batch is read after it.
    await batches.return(undefined);
  }
}

/** A POST route's body, a JSON object (else 400 InvalidRequestBody); its shape is read by run(). */
const jsonBody = createParamDecorator((_data: unknown, context: ExecutionContext) => requireJsonObject(context.switchToHttp().getRequest<{ body?: unknown }>().body));

/** The controller class of one entry (its routes defined as the admin controller's are). */
function createFeatureController(entry: QpFeatureEntity, options: QpFeatureOptions): Type<unknown> {
  const shapes = entry.shapes ?? allShapes;
  const ignore = ["sql"];
  const sqlParameter = options.sqlParameter !== false;

  @Injectable()
  class QpEntityQueryController implements FeatureControllerInstance, OnModuleInit {
    route!: QpFeatureRoute;
    /** Looked up once, at startup: a request neither searches the module graph for the DataSource nor asks it for the repository. */
    repository!: Repository<ObjectLiteral>;

    constructor(@Inject(QP_RUNTIME) readonly runtime: QpRuntime) {}

    onModuleInit(): void {
      // At startup, not on the first request: the entity must be exposed, as rules and the schema name it.
      const publicName = this.runtime.engine.options.entities.nameOf(entry.entity);
      if (publicName === undefined) {
        throw new QpConfigurationError(
          `QueryLibModule.forFeature: ${entry.entity.name} is not exposed; expose it in QueryLibModule's configure: options.entities.expose(${entry.entity.name}, "<public name>")`,
        );
      }
      this.route = { entity: entry.entity, publicName, path: normalizedPath(entry.path), shapes, sqlParameter, exports: entry.exports === true, agGrid: agGrid !== null };
      this.repository = this.runtime.dataSource().getRepository(entry.entity as new () => ObjectLiteral);
      this.runtime.features.push(this.route);
    }
  }

  const prototype = QpEntityQueryController.prototype as unknown as Record<string, unknown>;
  type Handler = (instance: FeatureControllerInstance, body: unknown, context: QpPolicyContext, request: object, response: ServerResponse) => Promise<unknown>;
  /** One route: its parameters (the request's shape, the caller's context, the request, and for a streamed answer the response), its method and path. */
  const defineRoute = (name: string, method: "GET" | "POST", path: string, parameter: ParameterDecorator, handler: Handler, streamed = false) => {
    prototype[name] = async function (this: FeatureControllerInstance, body: unknown, context: QpPolicyContext, request: object, response: ServerResponse) {
      return handler(this, body, context, request, response);
    };
    Object.defineProperty(prototype[name], "name", { value: name });
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name)!;
    parameter(prototype, name, 0);
    QpContext()(prototype, name, 1);
    Req()(prototype, name, 2);
    if (streamed) Res()(prototype, name, 3);
    if (method === "POST") {
      if (!streamed) HttpCode(200)(prototype, name, descriptor);
      Post(path)(prototype, name, descriptor);
    } else {
      Get(path)(prototype, name, descriptor);
    }
  };
  const define = (name: string, method: "GET" | "POST", shape: QpShapeName, parameter: ParameterDecorator) => {
    const kind = method === "POST" ? shape : null;
    defineRoute(name, method, shape, parameter, (instance, body, context, request) => run(instance, kind, body, context, request));
  };
  if (shapes.includes("filter")) {
    define("filter", "POST", "filter", jsonBody());
    define("filterByQueryString", "GET", "filter", QpFilter({ entity: entry.entity, ignore }));
  }
  if (shapes.includes("segment")) define("segment", "POST", "segment", jsonBody());
  if (shapes.includes("summary")) define("summary", "POST", "summary", jsonBody());
  const agGrid = checkAgGridOption(entry.agGrid, "QueryLibModule.forFeature");
  if (agGrid !== null) {
    defineRoute("agGrid", "POST", "ag-grid", jsonBody(), (instance, body, context) =>
      agGridRows((instance as QpEntityQueryController).runtime.engine, instance.repository, instance.route.publicName, body as Record<string, unknown>, context, agGrid));
  }
  if (entry.exports === true) {
    defineRoute("exportByBody", "POST", "export", jsonBody(), exportTo, true);
    defineRoute("exportByQueryString", "GET", "export", QpFilter({ entity: entry.entity, ignore }), exportTo, true);
  }

  Controller(normalizedPath(entry.path))(QpEntityQueryController);
  UseGuards(...(options.guards ?? []))(QpEntityQueryController);
  UseFilters(QpExceptionFilter)(QpEntityQueryController);
  // @nestjs/swagger leaves these out of its own scan: their document is QueryLib's (openapi.ts), which knows each field.
  Reflect.defineMetadata("swagger/apiExcludeController", [true], QpEntityQueryController);
  Object.defineProperty(QpEntityQueryController, "name", { value: `${entry.entity.name}QueryController` });
  return QpEntityQueryController;
}

const normalizedPath = (path: string) => path.replace(/^\/+|\/+$/g, "");

/** Each forFeature module is its own: Nest identifies a dynamic module by its metadata, and this makes two calls with like entries differ. */
let featureModules = 0;

/** The module forFeature returns: the controllers, in the host's module tree (QueryLibModule, global, gives them the runtime). */
export function featureModule(host: Function, entries: readonly QpFeatureEntity[], options: QpFeatureOptions = {}): DynamicModule {
  if (!Array.isArray(entries) || entries.length === 0) throw new QpConfigurationError("QueryLibModule.forFeature needs one or more { entity, path, shapes? }");
  entries.forEach((entry, i) => checkEntry(entry, `QueryLibModule.forFeature[${i}]`));
  if (options.guards !== undefined && !Array.isArray(options.guards)) throw new QpConfigurationError("QueryLibModule.forFeature: guards must be a list of guard classes or instances");
  const paths = entries.map((e) => normalizedPath(e.path).toLowerCase());
  const twice = paths.find((p, i) => paths.indexOf(p) !== i);
  if (twice) throw new QpConfigurationError(`QueryLibModule.forFeature: two entities are mounted at "${twice}"; give each its own path`);
  return {
    module: host as Type<unknown>,
    controllers: entries.map((entry) => createFeatureController(entry, options)),
    providers: [{ provide: Symbol(`querylib.feature.${++featureModules}`), useValue: featureModules }],
  };
}
