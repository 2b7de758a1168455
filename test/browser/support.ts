// Shared pieces of the browser tests: Debian's Chromium driven by playwright-core (headless, no
// sandbox, background networking off), the sample app on 127.0.0.1 with an ephemeral port, a
// watch on the browser console, and where screenshots go.
import { existsSync, mkdirSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { type Browser, type BrowserContext, type Page, chromium } from "playwright-core";
import { type SampleApp, startSampleApp } from "../../sample-app/main.js";

export const chromiumPath = "/usr/bin/chromium";
export const repositoryRoot = fileURLToPath(new URL("../../../", import.meta.url));
export const screenshotDirectory = join(repositoryRoot, "test-output", "screenshots");

/**
 * For a `before` hook: without Chromium the browser tests are pending (with the reason printed),
 * except under CI=true, where a missing browser is a failure (.ci/run installs it).
 */
export function requireChromium(context: Mocha.Context): void {
  if (existsSync(chromiumPath)) return;
  if (process.env.CI === "true") throw new Error(`${chromiumPath} is missing and CI=true: .ci/run installs it (apt-get install chromium)`);
  console.log(`    browser tests pending: ${chromiumPath} is missing (apt-get install chromium)`);
  context.skip();
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, headless: true, chromiumSandbox: false, args: ["--disable-background-networking", "--disable-component-update", "--no-first-run"] });
}

/** The sample app on embedded SQLite, seeded and in dev mode as `npm start` runs it, listening on 127.0.0.1. */
export function startApp(): Promise<SampleApp> {
  return startSampleApp(0, { logger: false, devMode: true, database: { kind: "sqlite", url: ":memory:" } });
}

export function screenshotPath(name: string): string {
  mkdirSync(screenshotDirectory, { recursive: true });
  return join(screenshotDirectory, `${name}.png`);
}

/**
 * Every console error and uncaught page error of a page. Chromium logs each HTTP error answer
 * as a console error ("Failed to load resource: … status of 403"); a test that provokes a
 * refusal on purpose names it with expectRefusal, and nothing else may appear.
 */
export class ConsoleWatch {
  private readonly problems: { text: string; url: string }[] = [];
  private readonly refusals: { url: string; status: number }[] = [];

  constructor(page: Page, private readonly base: string) {
    page.on("console", (message) => {
      if (message.type() === "error") this.problems.push({ text: message.text(), url: message.location().url });
    });
    page.on("pageerror", (error) => this.problems.push({ text: `uncaught: ${error.message}`, url: "" }));
  }

  expectRefusal(path: string, status: number): void {
    this.refusals.push({ url: this.base + path, status });
  }

  assertClean(): void {
    const unexpected = this.problems.filter((p) => !this.refusals.some((r) => p.url === r.url && p.text === `Failed to load resource: the server responded with a status of ${r.status} (${statusText[r.status]})`));
    expect(unexpected.map((p) => `${p.text} ${p.url}`), "console errors").to.deep.equal([]);
  }
}

const statusText: Record<number, string> = { 400: "Bad Request", 403: "Forbidden" };

/** The API as the page calls it, from Node: the same JSON, the same caller. */
export async function callApi(base: string, token: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(base + path, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

/** What useAppPage gives each test: the suite's app and browser, the test's own context, page and console watch. */
export interface AppPage {
  app: SampleApp;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  console: ConsoleWatch;
}

/**
 * For a describe block: the sample app and Chromium for the suite (pending without Chromium, as
 * requireChromium says), a fresh context and page for each test with its console watched, then
 * `open` (the page's own first steps). The fields are set when the hooks run.
 */
export function useAppPage(viewport: { width: number; height: number }, open?: (session: AppPage) => Promise<void> | void): AppPage {
  const session = {} as AppPage;
  before(async function () {
    requireChromium(this);
    session.app = await startApp();
    session.browser = await launchChromium();
  });
  after(async () => {
    await session.browser?.close();
    await session.app?.close();
  });
  beforeEach(async () => {
    session.context = await session.browser.newContext({ viewport });
    session.page = await session.context.newPage();
    session.console = new ConsoleWatch(session.page, session.app.url);
    await open?.(session);
  });
  afterEach(() => session.context?.close());
  return session;
}

/**
 * For a test's own static server: passes a request for the sample app's API (`/api/…`,
 * `/qp-admin/…`) on to it at `api`, so a page served elsewhere calls the API on its own origin.
 * False when the path is not the API's (the caller serves it).
 */
export async function proxyToApi(request: IncomingMessage, response: ServerResponse, api: string): Promise<boolean> {
  const url = new URL(request.url ?? "/", "http://127.0.0.1");
  if (!url.pathname.startsWith("/api/") && !url.pathname.startsWith("/qp-admin/")) return false;
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const headers: Record<string, string> = {};
  for (const name of ["authorization", "content-type", "accept"]) if (typeof request.headers[name] === "string") headers[name] = request.headers[name] as string;
  const reply = await fetch(api + url.pathname + url.search, { method: request.method, headers, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
  response.writeHead(reply.status, { "content-type": reply.headers.get("content-type") ?? "application/json" });
  response.end(Buffer.from(await reply.arrayBuffer()));
  return true;
}
