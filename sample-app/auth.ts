// Dev authentication for the sample app: a few built-in users, each selected by a fixed bearer
// token (printed at start-up). No outside service. A real host puts a verified JWT payload (or
// a session's claims) on `request.user` instead; querylib/nest only reads `request.user`.
import { type CanActivate, type ExecutionContext, Injectable, UnauthorizedException } from "@nestjs/common";

export interface DevUser {
  /** The bearer token that selects the user. */
  readonly token: string;
  /** The claims put on `request.user`. */
  readonly claims: { readonly sub: string; readonly name: string; readonly roles: readonly string[]; readonly tenant: string; readonly admin_scope?: string };
  readonly about: string;
}

export const devUsers: readonly DevUser[] = [
  { token: "dev-ada", claims: { sub: "ada", name: "Ada Admin", roles: ["admin"], tenant: "acme" }, about: "administrator at Acme: admin API read and write" },
  { token: "dev-ben", claims: { sub: "ben", name: "Ben Analyst", roles: ["analyst"], tenant: "acme" }, about: "analyst at Acme: admin API read-only, customer initials, staff names hashed" },
  { token: "dev-cleo", claims: { sub: "cleo", name: "Cleo Support", roles: ["support"], tenant: "globex" }, about: "support agent at Globex: no salaries; of the admin API only the schema" },
  { token: "dev-dan", claims: { sub: "dan", name: "Dan Analyst", roles: ["analyst"], tenant: "initech" }, about: "analyst at Initech" },
  { token: "dev-erin", claims: { sub: "erin", name: "Erin Support", roles: ["support"], tenant: "umbrella" }, about: "support agent at Umbrella Retail" },
  // The one cross-tenant admin (admin_scope: all-tenants, the admin API's crossTenantSubject): dev mode only, like every dev user.
  {
    token: "dev-root", claims: { sub: "root", name: "Root Operator", roles: ["admin"], tenant: "acme", admin_scope: "all-tenants" },
    about: "platform operator (queries as Acme): the admin API for every tenant, role and global rules included",
  },
];

const byToken = new Map(devUsers.map((u) => [u.token, u]));

interface DevRequest {
  headers: Record<string, string | string[] | undefined>;
  user?: unknown;
}

interface DevResponse {
  status(code: number): DevResponse;
  setHeader(name: string, value: string): unknown;
  json(body: unknown): unknown;
}

/**
 * Express middleware of a dev-mode host: `Authorization: Bearer <token>` of a dev user →
 * `request.user` = its claims. No header: no user (routes then answer 401). An unknown token: 401 at once.
 */
export function devAuthentication(request: DevRequest, response: DevResponse, next: () => void): void {
  const header = request.headers.authorization;
  if (header === undefined) return next();
  const match = typeof header === "string" ? /^Bearer\s+(\S+)$/i.exec(header.trim()) : null;
  const user = match ? byToken.get(match[1]!) : undefined;
  if (!user) {
    response.setHeader("www-authenticate", 'Bearer realm="querylib-sample"');
    response.status(401).json({ code: "InvalidToken", message: "unknown bearer token; use one of the dev tokens printed at start-up" });
    return;
  }
  request.user = { ...user.claims, roles: [...user.claims.roles] };
  next();
}

/** Express middleware outside dev mode: no dev token signs anyone in (and the sample has no other sign-in). */
export function refuseDevTokens(request: DevRequest, response: DevResponse, next: () => void): void {
  if (request.headers.authorization === undefined) return next();
  response.setHeader("www-authenticate", 'Bearer realm="querylib-sample"');
  response.status(401).json({ code: "InvalidToken", message: "dev tokens are accepted in dev mode only (npm start, --dev or QUERYLIB_DEV=1, never with NODE_ENV=production)" });
}

const rolesOf = (request: { user?: unknown }): readonly string[] => {
  const roles = (request.user as { roles?: unknown } | undefined)?.roles;
  return Array.isArray(roles) ? roles.filter((r): r is string => typeof r === "string") : [];
};

/** Where the sample app mounts the admin API. */
export const adminRoutePrefix = "/qp-admin";

interface RoutedRequest {
  user?: unknown;
  method?: string;
  path?: string;
}

/** POST {prefix}/schema answers for the caller's own context only, so every signed-in user may ask it (the filter page does). */
const isSchemaRequest = (request: RoutedRequest) => request.method === "POST" && request.path?.replace(/\/+$/, "") === `${adminRoutePrefix}/schema`;

/** The admin API's read policy, a predicate over the request: admins and analysts (each confined to their tenant's rules); for the schema, any signed-in user. */
export const canReadPolicies = (request: RoutedRequest): boolean =>
  rolesOf(request).some((r) => r === "admin" || r === "analyst") || (request.user !== undefined && request.user !== null && isSchemaRequest(request));

/** Admins: the admin API's write policy, which GET /qp-admin/lint and the policy-health panel need too. */
export const isPolicyAdmin = (request: { user?: unknown }): boolean => rolesOf(request).includes("admin");

/** The claim that lifts the admin API's tenant confinement (claims.customClaims), and the subject it becomes. */
export const adminScopeClaim = "admin_scope";
export const crossTenantSubject = `Custom:${adminScopeClaim}:all-tenants`;

/** The admin API's write policy (and the audit trail's guard): a Nest guard, admins only. No user: 401. */
@Injectable()
export class AdminRoleGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ user?: unknown }>();
    if (!request.user) throw new UnauthorizedException({ code: "Unauthorized", message: "sign in with a dev token (Authorization: Bearer <token>)" });
    return isPolicyAdmin(request);
  }
}
