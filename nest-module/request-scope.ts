// The per-request scope of querylib/nest: the policy contexts built for one HTTP request (and
// so their audit events), the engine that serves it and a request id generated here (a client's
// `x-request-id` is only kept beside it: clients choose it, so two users could send the same). The scope is attached
// to the request object and, while the request runs under QpAuditInterceptor or
// useQpPolicyAudit, held in AsyncLocalStorage, so code without the request in hand finds the
// request's own context and concurrent requests never share one.
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { QpPolicyContext, QpPolicyEngine } from "../lib/index.js";

export interface QpRequestScope {
  /** A UUID generated for this request on the server; stamped on its audit events. */
  readonly requestId: string;
  /** The client's `x-request-id` header when it is a short token, else null: a label, never an identity. */
  readonly clientRequestId: string | null;
  readonly method: string | null;
  readonly path: string | null;
  /** The engine of the QueryLibModule serving the request (set by the interceptor or middleware). */
  engine: QpPolicyEngine | null;
  /** Contexts prepared for this request, in creation order; their audit events are drained at its end. */
  readonly contexts: QpPolicyContext[];
  /** Prepared contexts by claims options, so a request prepares each kind of context once. */
  readonly prepared: Map<object, Promise<QpPolicyContext>>;
  /** Set once the audit events were drained; a second drain does nothing. */
  drained: boolean;
}

const storage = new AsyncLocalStorage<QpRequestScope>();
const scopeKey = Symbol.for("querylib.nest.requestScope");

interface RequestLike {
  method?: unknown;
  url?: unknown;
  originalUrl?: unknown;
  headers?: Record<string, unknown>;
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,64}$/;

/** The request's scope, created on first use. */
export function scopeOf(request: object): QpRequestScope {
  const holder = request as Record<symbol, QpRequestScope | undefined>;
  let scope = holder[scopeKey];
  if (!scope) {
    const r = request as RequestLike;
    const header = r.headers?.["x-request-id"];
    const url = typeof r.originalUrl === "string" ? r.originalUrl : typeof r.url === "string" ? r.url : null;
    scope = {
      requestId: randomUUID(),
      clientRequestId: typeof header === "string" && requestIdPattern.test(header) ? header : null,
      method: typeof r.method === "string" ? r.method : null,
      path: url === null ? null : url.split("?")[0]!,
      engine: null,
      contexts: [],
      prepared: new Map(),
      drained: false,
    };
    Object.defineProperty(request, scopeKey, { value: scope, enumerable: false, configurable: true });
  }
  return scope;
}

/** The scope of the request running now (inside QpAuditInterceptor or useQpPolicyAudit), if any. */
export function currentScope(): QpRequestScope | undefined {
  return storage.getStore();
}

/** Runs `fn` with `scope` as the current request scope. */
export function runInScope<R>(scope: QpRequestScope, fn: () => R): R {
  return storage.run(scope, fn);
}
