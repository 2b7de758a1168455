// How the sample app reads request bodies, in front of every route (the query API, the admin API,
// the static files): JSON only, read by body-parser (through Nest's useBodyParser), and every
// body it cannot use answered with querylib/nest's JSON error body (httpErrorOf, the admin API's):
//   - a body on a GET, HEAD, DELETE or OPTIONS request: 400 InvalidRequestBody (those routes read none,
//     so a filter sent there would silently be ignored);
//   - a body that is not application/json: 415 UnsupportedMediaType (it was ignored, and the
//     route ran unfiltered);
//   - malformed JSON: 400 InvalidJson (the input is not echoed); an unreadable charset or
//     encoding: 415; over jsonBodyLimitBytes: 413 PayloadTooLarge.
// An empty body counts as no body (body-parser alone would read it as {}, an unfiltered query);
// the routes then refuse anything but a JSON object (requireJsonObject). Any JSON value is parsed
// (not only objects and arrays), so a top-level number or string gets that clear 400 too.
import { httpErrorOf, QpHttpError } from "../nest-module/index.js";

/** The largest JSON body read (body-parser's default, stated here so the tests and README can name it). */
export const jsonBodyLimitBytes = 100 * 1024;

interface BodyRequest {
  readonly method: string;
  readonly path?: string;
  readonly headers: Record<string, string | string[] | undefined>;
  /** Express's content-type test (type-is): null without a body, false on a mismatch. */
  is(type: string): string | false | null;
  body?: unknown;
}

interface BodyResponse {
  status(code: number): BodyResponse;
  json(body: unknown): unknown;
}

const methodsWithoutBody = new Set(["GET", "HEAD", "DELETE", "OPTIONS"]);

/** A chunked body or a non-zero content-length; `Content-Length: 0` (what fetch sends on an empty POST) is no body. */
function announcesBody(request: BodyRequest): boolean {
  if (request.headers["transfer-encoding"] !== undefined) return true;
  const length = request.headers["content-length"];
  return typeof length === "string" && Number(length) > 0;
}

/** Express middleware before the body parser: refuses a body where none is read and a body that is not JSON. */
export function refuseUnreadableBodies(request: BodyRequest, _response: unknown, next: (error?: unknown) => void): void {
  if (!announcesBody(request)) return next();
  if (methodsWithoutBody.has(request.method.toUpperCase())) {
    const message = `${request.method} ${request.path ?? ""} takes no request body; send its parameters in the path or query string`;
    return next(new QpHttpError(400, "InvalidRequestBody", message));
  }
  if (!request.is("application/json")) {
    const given = request.headers["content-type"];
    const message = `the request body must be JSON (content-type: application/json), not ${given ? `"${String(given)}"` : "untyped"}`;
    return next(new QpHttpError(415, "UnsupportedMediaType", message));
  }
  next();
}

const emptyBodies = new WeakSet<object>();

/** body-parser's json options: any JSON value, at most jsonBodyLimitBytes; an empty body is remembered (see forgetEmptyBodies). */
export const jsonParserOptions = {
  limit: jsonBodyLimitBytes,
  strict: false,
  verify: (request: object, _response: unknown, buffer: Buffer) => {
    if (buffer.length === 0) emptyBodies.add(request);
  },
};

/** Express middleware after the body parser: an empty body is no body (undefined), not the {} body-parser makes of it. */
export function forgetEmptyBodies(request: BodyRequest, _response: unknown, next: () => void): void {
  if (emptyBodies.has(request)) request.body = undefined;
  next();
}

/** Express error middleware after the body parser: its errors and refuseUnreadableBodies's, as querylib/nest's JSON error body. */
export function answerBodyErrors(error: unknown, _request: unknown, response: BodyResponse, _next: unknown): void {
  const { status, body } = httpErrorOf(error);
  response.status(status).json(body);
}
