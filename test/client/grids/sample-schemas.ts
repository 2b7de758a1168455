// For a describe block: the sample app in dev mode on in-memory SQLite, and the customers' schema
// each dev caller gets from its schema endpoint (the grids' column tests read these).
import assert from "node:assert/strict";
import type { GridSchema } from "../../../lib/client/grids/core.js";
import { type SampleApp, startSampleApp } from "../../../sample-app/main.js";

export const sampleTokens = { ada: "dev-ada", ben: "dev-ben", cleo: "dev-cleo" } as const;
export type SampleCaller = keyof typeof sampleTokens;

export interface SampleSchemas {
  /** The app (set by the suite's before hook). */
  app: SampleApp;
  readonly schemas: Record<SampleCaller, GridSchema>;
}

export function useSampleSchemas(): SampleSchemas {
  const session = { schemas: {} } as SampleSchemas;
  before(async () => {
    session.app = await startSampleApp(0, { logger: false, devMode: true, database: { kind: "sqlite", url: ":memory:" } });
    for (const [user, token] of Object.entries(sampleTokens)) {
      const reply = await fetch(`${session.app.url}/qp-admin/schema`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ entity: "customers", depth: 1 }) });
      assert.equal(reply.status, 200);
      session.schemas[user as SampleCaller] = (await reply.json()) as GridSchema;
    }
  });
  after(async () => session.app?.close());
  return session;
}
