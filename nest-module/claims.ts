// The claims adapter: a policy context from an authenticated principal, i.e. the plain claims
// object an authentication layer puts on `request.user` (a decoded JWT payload, say). Claim
// types are configurable; a claim's value is a string or an array of strings (numbers and
// booleans are read as text). Anonymous principals are refused unless `allowAnonymous`.
import { QpPolicy, QpPolicyContext, QpPolicyEngine, QpConfigurationError, QpSubjectKind } from "../lib/index.js";
import { currentScope, scopeOf } from "./request-scope.js";

export interface QpClaimsOptions {
  /** Claim holding the user id → a `User` subject. Default `"sub"`. */
  readonly userClaim?: string;
  /** Claim holding one role or an array of roles → one `Role` subject each. Default `"roles"`. */
  readonly roleClaim?: string;
  /** Claim holding the tenant → a `Tenant` subject (one value). Default `"tenant"`. */
  readonly tenantClaim?: string;
  /** Claims that become `Custom` subjects, each value as `"<claim>:<value>"` (rules name them `Custom:<claim>:<value>`). */
  readonly customClaims?: readonly string[];
  /** Context values (for `QpForceWhere({ contextValue })`) read from claims: `{ tenantId: "tenant" }`. */
  readonly valueClaims?: Readonly<Record<string, string>>;
  /** Accept a missing principal (or one without the user claim) as an anonymous caller with no subjects. Default false. */
  readonly allowAnonymous?: boolean;
  /** The engine that prepares the context; default: the request's QueryLibModule engine, else `QpPolicy`'s. */
  readonly engine?: QpPolicyEngine;
}

export type QpClaimsErrorCode = "AnonymousPrincipal" | "InvalidClaim";

/** A principal the adapter cannot turn into a context. AnonymousPrincipal answers 401, InvalidClaim 403. */
export class QpClaimsError extends Error {
  constructor(readonly code: QpClaimsErrorCode, message: string) {
    super(`${code}: ${message}`);
    this.name = "QpClaimsError";
  }
}

export const claimDefaults = Object.freeze({ userClaim: "sub", roleClaim: "roles", tenantClaim: "tenant" });

const claimOptionKeys = ["userClaim", "roleClaim", "tenantClaim", "customClaims", "valueClaims", "allowAnonymous", "engine"];

/** Refuses unknown keys and ill-typed members of claims options (a startup failure in the module). */
export function checkClaimsOptions(options: unknown, where = "claims"): void {
  if (options === undefined) return;
  if (options === null || typeof options !== "object") throw new QpConfigurationError(`${where} must be an object`);
  for (const [key, value] of Object.entries(options)) {
    if (!claimOptionKeys.includes(key)) throw new QpConfigurationError(`${where}.${key}: unknown option; expected one of ${claimOptionKeys.join(", ")}`);
    if (["userClaim", "roleClaim", "tenantClaim"].includes(key) && (typeof value !== "string" || value === "")) {
      throw new QpConfigurationError(`${where}.${key} must be a claim type (a non-empty string)`);
    }
    if (key === "customClaims" && (!Array.isArray(value) || value.some((c) => typeof c !== "string" || c === ""))) {
      throw new QpConfigurationError(`${where}.customClaims must be an array of claim types`);
    }
    if (key === "valueClaims" && (value === null || typeof value !== "object" || Object.values(value).some((c) => typeof c !== "string" || c === ""))) {
      throw new QpConfigurationError(`${where}.valueClaims must map context value names to claim types`);
    }
    if (key === "allowAnonymous" && typeof value !== "boolean") throw new QpConfigurationError(`${where}.allowAnonymous must be true or false`);
    if (key === "engine" && value !== undefined && !(value instanceof QpPolicyEngine)) throw new QpConfigurationError(`${where}.engine must be a QpPolicyEngine`);
  }
}

/** A claim's values: the exact key, else a dotted path into nested objects (`realm_access.roles`). */
export function claimValues(principal: Record<string, unknown>, claim: string): string[] {
  let raw: unknown = principal[claim];
  if (raw === undefined && claim.includes(".")) {
    raw = claim.split(".").reduce<unknown>((node, key) => (node !== null && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined), principal);
  }
  if (raw === undefined || raw === null) return [];
  const list = Array.isArray(raw) ? raw : [raw];
  return list.map((value) => {
    if (typeof value === "string") return value.trim();
    if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
    throw new QpClaimsError("InvalidClaim", `claim "${claim}" holds a ${value === null ? "null" : typeof value}; a claim is a string or an array of strings`);
  }).filter((value) => value !== "");
}

function single(principal: Record<string, unknown>, claim: string): string | null {
  const values = claimValues(principal, claim);
  if (values.length > 1) throw new QpClaimsError("InvalidClaim", `claim "${claim}" must hold one value, not ${values.length}`);
  return values[0] ?? null;
}

export const QpClaimsAdapter = {
  /** The unprepared context of a principal (subjects and values from its claims). */
  buildContext(principal: unknown, claimsOptions: QpClaimsOptions = {}): QpPolicyContext {
    const options = { ...claimDefaults, ...claimsOptions };
    const claims = principal !== null && typeof principal === "object" && !Array.isArray(principal) ? (principal as Record<string, unknown>) : null;
    const user = claims ? single(claims, options.userClaim) : null;
    if (user === null) {
      if (!options.allowAnonymous) {
        throw new QpClaimsError("AnonymousPrincipal", claims ? `the principal has no "${options.userClaim}" claim` : "no authenticated principal on the request");
      }
      if (!claims) return new QpPolicyContext();
    }
    let context = new QpPolicyContext();
    if (user !== null) context = context.withSubject(QpSubjectKind.User, user);
    const tenant = single(claims!, options.tenantClaim);
    if (tenant !== null) context = context.withSubject(QpSubjectKind.Tenant, tenant);
    for (const role of new Set(claimValues(claims!, options.roleClaim))) context = context.withSubject(QpSubjectKind.Role, role);
    for (const claim of options.customClaims ?? []) {
      for (const value of new Set(claimValues(claims!, claim))) context = context.withSubject(QpSubjectKind.Custom, `${claim}:${value}`);
    }
    for (const [name, claim] of Object.entries(options.valueClaims ?? {})) {
      const values = claimValues(claims!, claim);
      if (values.length === 1) context = context.withValue(name, values[0]);
      else if (values.length > 1) context = context.withValue(name, values);
    }
    return context;
  },

  /** The prepared context of a principal (spec: `QpClaimsAdapter.CreateContextAsync`). */
  async createContextAsync(principal: unknown, claimsOptions: QpClaimsOptions = {}, signal?: AbortSignal): Promise<QpPolicyContext> {
    signal?.throwIfAborted();
    const context = QpClaimsAdapter.buildContext(principal, claimsOptions);
    const engine = claimsOptions.engine ?? currentScope()?.engine ?? QpPolicy.engine;
    if (!engine) throw new QpConfigurationError("QpClaimsAdapter: no policy engine; import QueryLibModule, pass claimsOptions.engine or call QpPolicy.configure at startup");
    const prepared = await engine.prepareAsync(context);
    signal?.throwIfAborted();
    return prepared;
  },
};

/**
 * The request's prepared policy context from `request.user` (spec: `GetPolicyContextAsync`).
 * Prepared once per request and claims options; registered on the request so that its audit
 * events are drained at the end of the request.
 */
export function getPolicyContextAsync(request: object, claimsOptions: QpClaimsOptions = {}): Promise<QpPolicyContext> {
  if (request === null || typeof request !== "object") throw new TypeError("getPolicyContextAsync needs the request object");
  const scope = scopeOf(request);
  let pending = scope.prepared.get(claimsOptions);
  if (!pending) {
    const engine = claimsOptions.engine ?? scope.engine ?? currentScope()?.engine ?? undefined;
    pending = QpClaimsAdapter.createContextAsync((request as { user?: unknown }).user, engine ? { ...claimsOptions, engine } : claimsOptions).then((context) => {
      scope.contexts.push(context);
      return context;
    });
    scope.prepared.set(claimsOptions, pending);
    // A refused principal is not cached: the next call reports it again.
    pending.catch(() => scope.prepared.delete(claimsOptions));
  }
  return pending;
}
