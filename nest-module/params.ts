// Parameter decorators for a handler that serves a QueryLib shape, so a controller is only its
// route table: `list(@QpFilter() filter: Filter, @QpContext() context: QpPolicyContext)`.
// @QpFilter(), @QpSegment() and @QpSummary() parse and validate the JSON body into the typed
// shape with the module's caps; @QpContext() is the caller's prepared context (the module's
// claims mapping, once per request). They are pipes on a custom parameter decorator, because a
// parameter decorator cannot await or inject and a pipe can. On GET, @QpFilter(Entity) reads the
// query string instead of a body (client/query-string.ts has the grammar). What they refuse is answered as the
// module's errors are (status and { code, errorCode?, message, path? }), with or without
// QpExceptionFilter on the controller: the pipe throws it as an HttpException.
import { type ArgumentMetadata, type ExecutionContext, HttpException, Inject, Injectable, type PipeTransform, createParamDecorator } from "@nestjs/common";
import {
  type Filter, type QpPolicyContext, type Segment, type Summary, QpConfigurationError, parseFilter, parseFilterQueryString, parseSegment, parseSummary,
} from "../lib/index.js";
import { getPolicyContextAsync } from "./claims.js";
import { httpErrorOf, requireJsonObject } from "./errors.js";
import type { QpRuntime } from "./runtime.js";
import { QP_RUNTIME } from "./tokens.js";

type ShapeKind = "filter" | "segment" | "summary";

/** What a shape decorator was given: its shape and, for a Filter read from a GET query string, the entity. */
export interface QpShapeParameter {
  readonly kind: ShapeKind;
  /** The entity whose fields type the query string's values (GET and HEAD requests; docs/NESTJS.md, "Query strings"). */
  readonly entity?: Function;
  /** Query parameters the handler reads itself (e.g. `sql`), left alone instead of refused. */
  readonly ignore?: readonly string[];
}

/** What @QpFilter takes: the entity of its GET route (or the options object). */
export type QpFilterOptions = Function | { readonly entity?: Function; readonly ignore?: readonly string[] };

/** A refusal as the module answers it, whatever filters the host's controller uses. */
function asHttp(error: unknown): never {
  const { status, body } = httpErrorOf(error);
  if (status >= 500) throw error; // not the caller's fault: left to the host's filters and logs
  throw new HttpException(body, status);
}

const parsers: Record<ShapeKind, (body: unknown, caps: QpRuntime["engine"]["options"]["caps"]) => Filter | Segment | Summary> = {
  filter: parseFilter, segment: parseSegment, summary: parseSummary,
};

interface ShapeRequest {
  readonly method?: string;
  readonly body?: unknown;
  readonly url?: string;
  readonly originalUrl?: string;
}

/** The raw query string of a request, whatever the adapter's query parser made of it (Express's simple or extended, Fastify's). */
export function rawQueryOf(request: ShapeRequest): string {
  const url = request.originalUrl ?? request.url ?? "";
  const at = url.indexOf("?");
  return at < 0 ? "" : url.slice(at + 1);
}

const readsQueryString = (request: ShapeRequest) => request.method === "GET" || request.method === "HEAD";

/** Parses the request as the decorator's shape (a body; a Filter on GET, its query string), with the module's caps. */
@Injectable()
export class QpShapePipe implements PipeTransform {
  constructor(@Inject(QP_RUNTIME) private readonly runtime: QpRuntime) {}

  transform(request: ShapeRequest, metadata: ArgumentMetadata): Filter | Segment | Summary {
    const parameter = metadata.data as unknown as QpShapeParameter;
    const caps = this.runtime.engine.options.caps;
    if (readsQueryString(request)) {
      // The host's mistake, not the caller's: a 500 with the fix in the log.
      if (parameter.kind !== "filter") throw new QpConfigurationError(`@Qp${parameter.kind === "segment" ? "Segment" : "Summary"}() reads a body: use it on POST routes (a GET query string holds a Filter only)`);
      if (!parameter.entity) throw new QpConfigurationError("@QpFilter() on a GET route needs its entity, @QpFilter(Customer): the query string's values are typed by its fields");
      try {
        return parseFilterQueryString(parameter.entity, rawQueryOf(request), { limits: caps, ignore: parameter.ignore });
      } catch (error) {
        return asHttp(error);
      }
    }
    try {
      // A JSON object only: a missing body or a JSON string (which the parsers would read as JSON text) is a 400.
      return parsers[parameter.kind](requireJsonObject(request.body), caps);
    } catch (error) {
      return asHttp(error);
    }
  }
}

/** Prepares the caller's context from the request with the module's claims mapping. */
@Injectable()
export class QpContextPipe implements PipeTransform {
  constructor(@Inject(QP_RUNTIME) private readonly runtime: QpRuntime) {}

  async transform(request: object): Promise<QpPolicyContext> {
    try {
      return await getPolicyContextAsync(request, this.runtime.claims);
    } catch (error) {
      return asHttp(error);
    }
  }
}

const request = createParamDecorator((_data: unknown, context: ExecutionContext) => context.switchToHttp().getRequest<object>());

/**
 * The request as a validated Filter (LogicException codes and paths, answered 400): its JSON
 * body, or on a GET route its query string, which needs the route's entity: `@QpFilter(Customer)`.
 */
export const QpFilter = (options?: QpFilterOptions): ParameterDecorator => {
  const { entity, ignore } = typeof options === "function" ? { entity: options, ignore: undefined } : options ?? {};
  return request({ kind: "filter", entity, ignore } satisfies QpShapeParameter, QpShapePipe);
};
/** The request body as a validated Segment. */
export const QpSegment = (): ParameterDecorator => request({ kind: "segment" } satisfies QpShapeParameter, QpShapePipe);
/** The request body as a validated Summary. */
export const QpSummary = (): ParameterDecorator => request({ kind: "summary" } satisfies QpShapeParameter, QpShapePipe);
/** The caller's prepared policy context (claims mapping of QueryLibModule; 401/403 when the principal is refused). */
export const QpContext = (): ParameterDecorator => request(undefined, QpContextPipe);
