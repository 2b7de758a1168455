// HTTP status and JSON body of every error the admin API (and a host's guarded query endpoints)
// can meet. The body is always `{ code, errorCode?, message, path?, errors? }`; a stack trace
// never leaves the process.
import { type ArgumentsHost, BadRequestException, Catch, type ExceptionFilter, HttpException, HttpStatus, Logger } from "@nestjs/common";
import { BaseExceptionFilter, HttpAdapterHost } from "@nestjs/core";
import { LogicException, PolicyErrorCode, PolicyException, QpConfigurationError, RuleRejected, UnknownEntity } from "../lib/index.js";
import { QpClaimsError } from "./claims.js";

export interface QpErrorBody {
  /** A stable code: a LogicException code, a PolicyException name, or one of querylib/nest's own (docs/NESTJS.md). */
  code: string;
  /** The PolicyException number (1–24). */
  errorCode?: number;
  message: string;
  /** Where in the request body the problem is, when known. */
  path?: string;
  /** Body validation: one entry per offending property. */
  errors?: { property: string; problems: string[] }[];
}

/** An error querylib/nest raises itself with its status (validation, authorization, not found). */
export class QpHttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly details?: QpErrorBody["errors"]) {
    super(message);
    this.name = "QpHttpError";
  }
}

/** PolicyException number → HTTP status. */
export function policyStatus(errorCode: number): number {
  switch (errorCode) {
    case PolicyErrorCode.CapExceeded:
    case PolicyErrorCode.MissingContextValue:
      return HttpStatus.BAD_REQUEST;
    case PolicyErrorCode.StoreUnavailable:
    case PolicyErrorCode.PolicyContextNotPrepared:
    case PolicyErrorCode.MissingHashSalt:
    case PolicyErrorCode.MissingTokenVault:
      return HttpStatus.SERVICE_UNAVAILABLE;
    case PolicyErrorCode.GuessBudgetExhausted:
    case PolicyErrorCode.PrivacyBudgetExhausted:
      return HttpStatus.TOO_MANY_REQUESTS; // the request is fine; the caller's allowance for the window is spent
    default:
      return HttpStatus.FORBIDDEN; // 1–8, 10, 11, 13–16, 19, 20, 23, 26–31: the policy refuses the request
  }
}

const logger = new Logger("QueryLib");

const statusNames: Record<number, string> = {
  400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed", 409: "Conflict", 413: "PayloadTooLarge",
  415: "UnsupportedMediaType", 422: "UnprocessableEntity", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable",
};

/** The status and body for any thrown value. */
export function httpErrorOf(error: unknown): { status: number; body: QpErrorBody } {
  if (error instanceof QpHttpError) return { status: error.status, body: { code: error.code, message: error.message, ...(error.details ? { errors: error.details } : {}) } };
  if (error instanceof PolicyException) {
    return { status: policyStatus(error.errorCode), body: { code: error.code, errorCode: error.errorCode, message: error.message, ...(error.path ? { path: error.path } : {}) } };
  }
  if (error instanceof LogicException) {
    const status = error.code === UnknownEntity ? HttpStatus.NOT_FOUND : error.code === RuleRejected ? HttpStatus.CONFLICT : HttpStatus.BAD_REQUEST;
    return { status, body: { code: error.code, message: error.message, ...(error.path ? { path: error.path } : {}) } };
  }
  if (error instanceof QpClaimsError) {
    return { status: error.code === "AnonymousPrincipal" ? HttpStatus.UNAUTHORIZED : HttpStatus.FORBIDDEN, body: { code: error.code, message: error.message } };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const response = error.getResponse();
    const body = typeof response === "object" && response !== null ? (response as Record<string, unknown>) : {};
    const code = typeof body.code === "string" ? body.code : statusNames[status] ?? `Http${status}`;
    const raw = body.message ?? (typeof response === "string" ? response : error.message);
    const message = Array.isArray(raw) ? raw.join("; ") : String(raw);
    // What the parameter decorators throw carries the module's whole body (errorCode, path): kept, when well-typed.
    return {
      status,
      body: {
        code, ...(typeof body.errorCode === "number" ? { errorCode: body.errorCode } : {}), message,
        ...(typeof body.path === "string" ? { path: body.path } : {}), ...(Array.isArray(body.errors) ? { errors: body.errors as QpErrorBody["errors"] } : {}),
      },
    };
  }
  // A body that is not JSON (body-parser's SyntaxError carries status 400 and type "entity.parse.failed"), or another
  // client error of body-parser's (http-errors: a type, or `expose` as for a broken gzip stream).
  const parser = error as { status?: unknown; type?: unknown; expose?: unknown; message?: unknown };
  if (error instanceof Error && typeof parser.status === "number" && parser.status >= 400 && parser.status < 500 && (typeof parser.type === "string" || parser.expose === true)) {
    const code = parser.type === "entity.parse.failed" ? "InvalidJson" : statusNames[parser.status] ?? `Http${parser.status}`;
    return { status: parser.status, body: { code, message: parser.type === "entity.parse.failed" ? "InvalidJson: the request body is not valid JSON" : error.message } };
  }
  if (error instanceof QpConfigurationError) logger.error(error.message);
  else logger.error(error instanceof Error ? error.stack ?? error.message : String(error));
  return { status: HttpStatus.INTERNAL_SERVER_ERROR, body: { code: "InternalError", message: "internal error (logged on the server)" } };
}

/**
 * Answers every error with its status and JSON body (see httpErrorOf). The admin controller
 * uses it; hosts may put it on their own query controllers (`@UseFilters(QpExceptionFilter)`)
 * or install it globally.
 */
@Catch()
export class QpExceptionFilter implements ExceptionFilter {
  constructor(private readonly adapterHost?: HttpAdapterHost) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const { status, body } = httpErrorOf(error);
    const response = host.switchToHttp().getResponse();
    const adapter = this.adapterHost?.httpAdapter;
    if (adapter) adapter.reply(response, body, status);
    else response.status(status).json(body);
  }
}

/**
 * A request body the adapter's JSON parser refused, as Nest maps it (a BadRequestException with
 * the same status, body and cause), marked so that QueryLibModule's global filter can tell it
 * apart: body parsing runs before routing, so no controller's filter sees it.
 */
export class QpBodyParseError extends BadRequestException {
  constructor(mapped: HttpException, readonly parseFailure: unknown) {
    super(mapped.getResponse() as object, { cause: parseFailure });
  }
}

/** body-parser's error for a body that is not JSON (type "entity.parse.failed"; a SyntaxError with status 400). */
const isParseFailure = (error: unknown) =>
  error instanceof Error && ((error as { type?: unknown }).type === "entity.parse.failed" || (error instanceof SyntaxError && (error as { status?: unknown }).status === 400));

const marked = new WeakSet<object>();

/**
 * Wraps the adapter's mapException (Nest 12's Express and Fastify adapters map what a parser
 * middleware throws there) so that a JSON parse failure becomes a QpBodyParseError: every other
 * filter sees the same BadRequestException as before. Without mapException (another adapter)
 * nothing changes.
 */
export function markBodyParseErrors(adapter: unknown): void {
  const target = adapter as { mapException?: (error: unknown) => unknown } | null;
  if (!target || typeof target.mapException !== "function" || marked.has(target)) return;
  marked.add(target);
  const original = target.mapException.bind(target);
  target.mapException = (error: unknown) => {
    const mapped = original(error);
    return isParseFailure(error) && mapped instanceof HttpException && mapped.getStatus() === HttpStatus.BAD_REQUEST ? new QpBodyParseError(mapped, error) : mapped;
  };
}

/** The path of a request, without its query string, slashes trimmed, lower case (Express routes ignore case). */
function requestPath(request: { originalUrl?: string; url?: string }): string {
  const url = request.originalUrl ?? request.url ?? "";
  const at = url.indexOf("?");
  return (at < 0 ? url : url.slice(0, at)).replace(/^\/+|\/+$/g, "").toLowerCase();
}

/** What QueryLibModule's global filter needs of its module: the routes it mounted. */
export interface QpOwnRoutes {
  readonly features: readonly { readonly path: string; readonly shapes: readonly string[] }[];
  readonly admin: { readonly routePrefix: string } | null;
}

/** True when the request is for a route QueryLibModule mounted (forFeature's, the admin API), under any global prefix. */
export function isQueryLibRoute(routes: QpOwnRoutes, request: { originalUrl?: string; url?: string }): boolean {
  const path = requestPath(request);
  const under = (prefix: string) => prefix !== "" && (path === prefix || path.startsWith(`${prefix}/`) || path.endsWith(`/${prefix}`) || path.includes(`/${prefix}/`));
  if (routes.admin && under(routes.admin.routePrefix.replace(/^\/+|\/+$/g, "").toLowerCase())) return true;
  return routes.features.some((route) => route.shapes.some((shape) => {
    const full = `${route.path}/${shape}`.replace(/^\/+/, "").toLowerCase();
    return path === full || path.endsWith(`/${full}`);
  }));
}

/**
 * QueryLibModule's global filter (APP_FILTER): QueryLib's own errors, wherever its decorators and
 * services are used (a hand-written handler with @QpFilter() and @QpContext() needs no
 * @UseFilters), answered as QpExceptionFilter answers them: LogicException and PolicyException,
 * QpHttpError, QpClaimsError; and a malformed JSON body on one of the module's routes (400
 * InvalidJson). Nothing else reaches it (@Catch names those classes), and a malformed body on the
 * host's own routes gets Nest's default answer. Filters the host puts on a controller or method,
 * or installs with app.useGlobalFilters, are asked first, as Nest orders filters.
 */
@Catch(LogicException, QpHttpError, QpClaimsError, QpBodyParseError)
export class QpModuleExceptionFilter extends BaseExceptionFilter {
  constructor(private readonly routes: QpOwnRoutes, private readonly adapterHostOf: HttpAdapterHost) {
    super(adapterHostOf.httpAdapter);
  }

  override catch(error: unknown, host: ArgumentsHost): void {
    if (host.getType() !== "http") throw error;
    if (error instanceof QpBodyParseError && !isQueryLibRoute(this.routes, host.switchToHttp().getRequest())) {
      super.catch(error, host);
      return;
    }
    const { status, body } = error instanceof QpBodyParseError
      ? { status: HttpStatus.BAD_REQUEST, body: { code: "InvalidJson", message: "InvalidJson: the request body is not valid JSON" } }
      : httpErrorOf(error);
    this.adapterHostOf.httpAdapter.reply(host.switchToHttp().getResponse(), body, status);
  }
}

/** The body as a JSON object, or 400 InvalidRequestBody (no body, an array, a string, a number, null); hosts' query routes use it too. */
export function requireJsonObject(body: unknown): Record<string, unknown> {
  if (body === null || body === undefined || typeof body !== "object" || Array.isArray(body)) {
    throw new QpHttpError(400, "InvalidRequestBody", "the request body must be a JSON object (content-type: application/json)");
  }
  return body as Record<string, unknown>;
}
