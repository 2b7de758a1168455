// The page's only way to the server: the sample app's query API and the admin schema route,
// each call as the chosen dev user (Authorization: Bearer <token>). Errors keep the server's
// { code, errorCode, message, path } so the editor can show them where they belong.
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code ?? `Http${status}`;
    this.errorCode = body?.errorCode ?? null;
    this.path = body?.path ?? null;
  }
}

async function call(method, path, { token, body } = {}) {
  const headers = { accept: "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw new ApiError(0, { code: "NetworkError", message: `the server did not answer (${error.message})` });
  }
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    parsed = { message: text };
  }
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

export const api = {
  /** { entities, endpoints } */
  index: () => call("GET", "/api"),
  /** [{ token, sub, name, roles, tenant, about }] */
  devUsers: () => call("GET", "/api/dev-users"),
  /** POST /qp-admin/schema: the fields this caller may use, walked from each of `paths` ("" = the entity). */
  schema: (token, entity, paths, depth) => call("POST", "/qp-admin/schema", { token, body: { entity, paths, depth } }),
  /** GET /api/policy-health: { findings } for an admin (their tenant's and everyone's), else { findings: null }. */
  policyHealth: (token) => call("GET", "/api/policy-health", { token }),
  /** POST /api/{entity}/{filter|summary|segment} */
  run: (token, entity, mode, body) => call("POST", `/api/${encodeURIComponent(entity)}/${mode}`, { token, body }),
};
