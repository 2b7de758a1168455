// The one HTTP call every grid adapter makes: a JSON body posted to a QueryLib route, its answer
// read as JSON, a refusal thrown as QueryLibHttpError (status and QueryLib's error body, which the
// adapters map back to the grid's column). `fetch` is injectable (tests, SSR, a host's own client).
import type { QueryLibErrorBody } from "./core.js";

/** A QueryLib route's refusal: the HTTP status and QueryLib's `{ code, message, path }` (or `Http<status>` when the body is not QueryLib's). */
export class QueryLibHttpError extends Error {
  constructor(readonly status: number, readonly body: QueryLibErrorBody) {
    super(body.message ?? body.code);
    this.name = "QueryLibHttpError";
  }
}

export interface PostOptions {
  readonly headers?: Record<string, string>;
  readonly fetch?: typeof fetch;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** `POST url` with a JSON body; the parsed answer, or a QueryLibHttpError. */
export async function postJson(url: string, body: unknown, options: PostOptions = {}): Promise<unknown> {
  const response = await (options.fetch ?? fetch)(url, { method: "POST", headers: { "content-type": "application/json", ...options.headers }, body: JSON.stringify(body) });
  const json = (await response.json().catch(() => null)) as unknown;
  if (!response.ok) {
    throw new QueryLibHttpError(response.status, isObject(json) && typeof json["code"] === "string" ? (json as unknown as QueryLibErrorBody) : { code: `Http${response.status}`, message: response.statusText || `HTTP ${response.status}` });
  }
  return json;
}

/** A route under an API base (`https://host/api/customers` + `filter`), without doubled slashes. */
export const routeOf = (base: string, route: string) => `${base.replace(/\/+$/, "")}/${route}`;
