// Parameter decorators for a handler that serves a QueryLib shape, so a controller is only its
// route table: `list(@QpFilter() filter: Filter, @QpContext() context: QpPolicyContext)`.
// @QpFilter(), @QpSegment() and @QpSummary() parse and validate the JSON body into the typed
// shape with the module's caps; @QpContext() is the caller's prepared context (the module's
// claims mapping, once per request). They are pipes on a custom parameter decorator, because a
// parameter decorator cannot await or inject and a pipe can. What they refuse is answered as the
// module's errors are (status and { code, errorCode?, message, path? }), with or without
// QpExceptionFilter on the controller: the pipe throws it as an HttpException.
import { type ArgumentMetadata, type ExecutionContext, HttpException, Inject, Injectable, type PipeTransform, createParamDecorator } from "@nestjs/common";
import { type Filter, type QpPolicyContext, type Segment, type Summary, parseFilter, parseSegment, parseSummary } from "../lib/index.js";
import { requireJsonObject } from "./admin/dto.js";
import { getPolicyContextAsync } from "./claims.js";
import { httpErrorOf } from "./errors.js";
import type { QpRuntime } from "./runtime.js";
import { QP_RUNTIME } from "./tokens.js";

type ShapeKind = "filter" | "segment" | "summary";

/** A refusal as the module answers it, whatever filters the host's controller uses. */
function asHttp(error: unknown): never {
  const { status, body } = httpErrorOf(error);
  if (status >= 500) throw error; // not the caller's fault: left to the host's filters and logs
  throw new HttpException(body, status);
}

const parsers: Record<ShapeKind, (body: unknown, caps: QpRuntime["engine"]["options"]["caps"]) => Filter | Segment | Summary> = {
  filter: parseFilter, segment: parseSegment, summary: parseSummary,
};

/** Parses the body as the decorator's shape, with the module's caps. */
@Injectable()
export class QpShapePipe implements PipeTransform {
  constructor(@Inject(QP_RUNTIME) private readonly runtime: QpRuntime) {}

  transform(body: unknown, metadata: ArgumentMetadata): Filter | Segment | Summary {
    try {
      // A JSON object only: a missing body or a JSON string (which the parsers would read as JSON text) is a 400.
      return parsers[metadata.data as ShapeKind](requireJsonObject(body), this.runtime.engine.options.caps);
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

const body = createParamDecorator((_kind: ShapeKind, context: ExecutionContext) => context.switchToHttp().getRequest<{ body?: unknown }>().body);
const request = createParamDecorator((_data: unknown, context: ExecutionContext) => context.switchToHttp().getRequest<object>());

/** The request body as a validated Filter (LogicException codes and paths, answered 400). */
export const QpFilter = (): ParameterDecorator => body("filter", QpShapePipe);
/** The request body as a validated Segment. */
export const QpSegment = (): ParameterDecorator => body("segment", QpShapePipe);
/** The request body as a validated Summary. */
export const QpSummary = (): ParameterDecorator => body("summary", QpShapePipe);
/** The caller's prepared policy context (claims mapping of QueryLibModule; 401/403 when the principal is refused). */
export const QpContext = (): ParameterDecorator => request(undefined, QpContextPipe);
