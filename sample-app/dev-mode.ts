// Dev mode: the sample app's fixed dev tokens (the admin's included) sign callers in and
// GET /api/dev-users lists them, for the filter page's caller picker. That is only acceptable on
// a development host, so it is explicit: `npm start` asks for it (`--dev`), as does
// QUERYLIB_DEV=1 or startSampleApp's `devMode: true`, and a production configuration
// (NODE_ENV=production) refuses it even when asked. Without dev mode no dev token is accepted and
// the route does not exist: the sample has no other sign-in, so it then answers 401 to everyone.

export interface DevModeDecision {
  readonly enabled: boolean;
  /** Why dev mode was asked for and not granted. */
  readonly refusal?: string;
}

/** Whether the command line or the environment asks for dev mode. */
export function devModeRequested(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): boolean {
  return argv.slice(2).includes("--dev") || env.QUERYLIB_DEV === "1";
}

/** Dev mode when asked for, except in a production configuration. */
export function resolveDevMode(requested: boolean, env: NodeJS.ProcessEnv = process.env): DevModeDecision {
  if (!requested) return { enabled: false };
  if (env.NODE_ENV?.trim().toLowerCase() === "production") {
    return { enabled: false, refusal: "dev mode refused: NODE_ENV=production. Dev tokens are not accepted and GET /api/dev-users does not exist" };
  }
  return { enabled: true };
}

/** The response header that marks every answer of a dev-mode host. */
export const devHostHeader = "x-querylib-dev-host";
export const devHostNotice = "DEVELOPMENT HOST: fixed dev tokens (the admin's included) sign anyone in; never expose it";

/** The banner `npm start` prints in dev mode. */
export function devHostBanner(): string[] {
  const lines = [
    "DEVELOPMENT HOST (dev mode)",
    "Fixed dev tokens, the admin's included, sign anyone in, and",
    "GET /api/dev-users lists them to whoever reaches the port.",
    "Keep it on 127.0.0.1; never run it in production.",
  ];
  const width = Math.max(...lines.map((l) => l.length));
  const rule = "!".repeat(width + 8);
  return [rule, ...lines.map((l) => `!!  ${l.padEnd(width)}  !!`), rule];
}

/** Express middleware of a dev-mode host: every answer carries the dev-host header. */
export function markDevHost(_request: unknown, response: { setHeader(name: string, value: string): unknown }, next: () => void): void {
  response.setHeader(devHostHeader, devHostNotice);
  next();
}
