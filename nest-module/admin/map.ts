// mapQpPolicyAdmin(app, options) (spec: `app.MapQpPolicyAdmin(options)`): the seven admin routes
// registered directly on the application's HTTP adapter, with the same handlers, policies and
// error bodies as the controller that QueryLibModule.forRoot({ admin }) declares.
import type { ExecutionContext, HttpServer, INestApplication } from "@nestjs/common";
import { QpConfigurationError } from "../../lib/index.js";
import { httpErrorOf, QpHttpError } from "../errors.js";
import type { QpAdminOptions, QpAuthorizationPolicy } from "../options.js";
import { runInScope, scopeOf } from "../request-scope.js";
import type { QpRuntime } from "../runtime.js";
import { QP_RUNTIME } from "../tokens.js";
import { QpAdminHandlers, adminRoutes, levelOf } from "./handlers.js";

const maxBodyBytes = 1024 * 1024;

interface AdapterRequest {
  body?: unknown;
  query?: Record<string, unknown>;
  params?: Record<string, unknown>;
  headers?: Record<string, unknown>;
  on?(event: string, listener: (...args: any[]) => void): unknown;
  [Symbol.asyncIterator]?(): AsyncIterator<Buffer>;
}

/** The JSON body when no body parser ran before the route (routes mapped before app.init()). */
async function jsonBody(request: AdapterRequest): Promise<unknown> {
  if (request.body !== undefined) return request.body;
  if (!request[Symbol.asyncIterator]) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBodyBytes) throw new QpHttpError(413, "PayloadTooLarge", `the request body is larger than ${maxBodyBytes} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new QpHttpError(400, "InvalidJson", "InvalidJson: the request body is not valid JSON");
  }
}

/** Marks the handlers of adapter-mapped admin routes (what a guard sees as getClass()). */
export class QpPolicyAdminRoutes {}

/** Registers the admin routes of `runtime.admin` on `adapter`. */
/**
 * The ExecutionContext an authorization policy receives for an adapter route, as Nest builds one
 * for a controller route (public interface only: Nest's own ExecutionContextHost is internal).
 */
function httpContext(args: unknown[], type: Function, handler: Function): ExecutionContext {
  const [request, response, next] = args;
  const http = { getRequest: () => request, getResponse: () => response, getNext: () => next };
  const context = {
    getClass: () => type,
    getHandler: () => handler,
    getArgs: () => args,
    getArgByIndex: (index: number) => args[index],
    getType: () => "http",
    switchToHttp: () => http,
    switchToRpc: () => { throw new Error("an admin route is HTTP"); },
    switchToWs: () => { throw new Error("an admin route is HTTP"); },
  };
  return context as unknown as ExecutionContext;
}

export function mapAdminRoutes(adapter: HttpServer, runtime: QpRuntime): void {
  const admin = runtime.admin;
  if (!admin) throw new QpConfigurationError("the admin API has no mapping");
  const handlers = new QpAdminHandlers(runtime);
  for (const route of adminRoutes) {
    const path = `${admin.routePrefix}/${route.path}`;
    const handler = async (request: AdapterRequest, response: object, next: unknown) => {
      const scope = scopeOf(request);
      scope.engine ??= runtime.engine;
      try {
        const context = httpContext([request, response, next], QpPolicyAdminRoutes, handler);
        await runtime.authorize(levelOf(route, runtime.admin), request as { user?: unknown }, context);
        const body = route.method === "POST" ? await jsonBody(request) : undefined;
        const reply = await runInScope(scope, () => handlers.run(route.name, request, { body, query: request.query ?? {}, params: request.params ?? {} }));
        adapter.reply(response, reply.body, reply.status);
      } catch (error) {
        const { status, body } = httpErrorOf(error);
        adapter.reply(response, body, status);
      }
    };
    const register = { GET: adapter.get, POST: adapter.post, DELETE: adapter.delete }[route.method] as (path: string, handler: unknown) => unknown;
    register.call(adapter, path, handler);
  }
}

/**
 * Maps the admin API on an application that imports QueryLibModule (without `admin` there).
 * Call it before `app.listen()` / `app.init()`. Fails, with what to fix, on a missing or
 * unregistered policy name, a second mapping or an application that is already listening.
 */
export function mapQpPolicyAdmin(app: INestApplication, options: QpAdminOptions & { authorizationPolicies?: Readonly<Record<string, QpAuthorizationPolicy>> }): INestApplication {
  let runtime: QpRuntime;
  try {
    runtime = app.get<QpRuntime>(QP_RUNTIME, { strict: false });
  } catch {
    throw new QpConfigurationError("mapQpPolicyAdmin: the application does not import QueryLibModule.forRoot/forRootAsync");
  }
  if ((app as unknown as { isInitialized?: boolean }).isInitialized) {
    throw new QpConfigurationError("mapQpPolicyAdmin: call it before app.listen()/app.init(): routes added later would never be reached");
  }
  if (runtime.admin) throw new QpConfigurationError(`mapQpPolicyAdmin: the admin API is already mapped at ${runtime.admin.routePrefix}; map it once`);
  const { authorizationPolicies, ...admin } = options ?? ({} as never);
  for (const [name, policy] of Object.entries(authorizationPolicies ?? {})) runtime.registerPolicy(name, policy);
  runtime.useAdmin(admin, "mapQpPolicyAdmin");
  mapAdminRoutes(app.getHttpAdapter(), runtime);
  return app;
}
