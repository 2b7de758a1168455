#!/usr/bin/env node
// `querylib lint --config <module> [--json]`: the policy linter for CI. The module (compiled
// JavaScript, resolved from the working directory) exports the policy options as its default
// export or as `policyOptions` (an object, or a function returning one, as QpPolicy.configure
// takes them, entities exposed), and optionally `rules` (the runtime rules to lint with them) and
// `lintOptions` (the context values the claims mapping provides). Exit 0: no error-level
// finding; 1: at least one; 2: the command or the module is wrong.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { QpPolicyEngine } from "../policy/engine.js";
import { findingLine, lintPolicy } from "../policy/lint-policy.js";
import { type QpRuleInput, normalizeRule } from "../rules/rule.js";

const usage = "usage: querylib lint --config <module exporting the policy options> [--json]";

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  const configAt = rest.indexOf("--config");
  const config = configAt >= 0 ? rest[configAt + 1] : undefined;
  if (command !== "lint" || !config) {
    process.stderr.write(`${usage}\n`);
    return 2;
  }
  const loaded = await import(pathToFileURL(resolve(process.cwd(), config)).href) as Record<string, unknown>;
  const exported = loaded.policyOptions ?? loaded.default;
  const input = typeof exported === "function" ? await (exported as () => unknown)() : exported;
  if (!input || typeof input !== "object") {
    process.stderr.write(`${config} exports no policy options (a default export or policyOptions)\n`);
    return 2;
  }
  // The engine validates and resolves the options as at startup; its own startup lint stays off.
  const engine = new QpPolicyEngine({ ...(input as object), lint: "off" });
  const rules = ((loaded.rules ?? []) as QpRuleInput[]).map((rule, i) => normalizeRule(rule, rule.id ?? `rule-${i + 1}`, null));
  const findings = lintPolicy(engine.options, rules, (loaded.lintOptions ?? {}) as object);
  if (rest.includes("--json")) process.stdout.write(`${JSON.stringify(findings, null, 2)}\n`);
  else for (const finding of findings) process.stdout.write(`${findingLine(finding)}\n`);
  const errors = findings.filter((f) => f.severity === "error").length;
  if (!rest.includes("--json")) process.stdout.write(`${findings.length} finding(s), ${errors} error(s)\n`);
  return errors > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (error: unknown) => {
  process.stderr.write(`querylib: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 2;
});
