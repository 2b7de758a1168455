// HTTP status and JSON body of every error the admin API (and a host's guarded query endpoints)
// can meet. The body is always `{ code, errorCode?, message, path?, errors? }`; a stack trace
// never leaves the process.
import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, HttpStatus, Logger } from "@nestjs/common";
import { HttpAdapterHost } from "@nestjs/core";
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
      return HttpStatus.TOO_MANY_REQUESTS; // the request is fine; the caller's allowance for the window is spent
    default:
      return HttpStatus.FORBIDDEN; // 1–8, 10, 11, 13–16, 19, 20, 23: the policy refuses the request
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
