// Child processes of the consumer tests: each fixture is its own project, so it gets this
// process's environment without what `npm test` passes its scripts.
import { execFile } from "node:child_process";

export interface Run { readonly code: number | null; readonly stdout: string; readonly stderr: string }

/** This process's environment without what `npm test` passes its scripts (npm_config_*, npm_package_*): each fixture is its own project. */
export function ownEnvironment(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))), ...extra };
}

export function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 300_000): Promise<Run> {
  return new Promise((done) => {
    execFile(command, args, { cwd, env: ownEnvironment(env), timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

export async function mustRun(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const result = await run(command, args, cwd, env);
  if (result.code !== 0) throw new Error(`${command} ${args.join(" ")} (in ${cwd}) exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}
