#!/usr/bin/env node
// `querylib lint --config <module> [--json]`: the policy linter for CI. The module (compiled
// JavaScript, resolved from the working directory) gives the policy in one of the shapes `help`
// lists (the same `configure` function or options object QueryLibModule.forRoot takes, or the
// policy options themselves), and optionally `rules` (the runtime rules to lint with them) and
// `lintOptions` (the context values the claims mapping provides). Exit 0: no error-level
// finding; 1: at least one; 2: the command or the module is wrong, or the module's decorators were
// recorded by another copy of QueryLib than this command's (two copies in node_modules).
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { QpPolicyEngine } from "../engine/engine.js";
import { findingLine, lintPolicy } from "../lint/lint-policy.js";
import { QpEntityCatalogue, type QpPolicyOptions, bindPolicySection } from "../decisions/options.js";
import { loadedQueryLibCopies, qpRegistry } from "../registry/qp-registry.js";
import { type QpRuleInput, normalizeRule } from "../rules/rule.js";

const usage = "usage: querylib lint --config <module> [--json]";

const help = `${usage}

Lints the policy a module gives, as QueryLibModule or QpPolicyEngine would build it at startup.
The module is compiled JavaScript (ESM or CommonJS), resolved from the working directory; it
exports the policy in one of these shapes (the first export found of policyOptions, configure,
queryLibOptions, default):

  export function configure(o) { o.entities.expose(Customer, "customers"); }
      the same function given to QueryLibModule.forRoot({ configure }) or QpPolicy.configure:
      called with the resolved options (entities, caps, …) to set them;
  export const queryLibOptions = { policies: { Tier: "Strict" }, configure, claims };
      the options object given to QueryLibModule.forRoot: its policies section (QueryLib.Policies)
      and configure; claims.valueClaims name the context values the linter assumes;
  export const policyOptions = { entities: new QpEntityCatalogue().expose(Customer, "customers") };
      the policy options themselves (QpPolicyEngine's input), or a function returning them.

Optional exports: rules (runtime rules to lint with the policy) and lintOptions
({ contextValues: ["tenantId"] }). Output: one line per finding and a count (--json: the findings
as JSON). Exit 0 without an error-level finding, 1 with one, 2 when the command or the module is
wrong, or when the module's entities were decorated by another copy of QueryLib than this one
(two copies in node_modules): run the copy the application uses, or deduplicate.
`;

type Loaded = Record<string, unknown>;

/** The policy options and the context values the module gives, whatever shape it gives them in. */
async function policyOf(loaded: Loaded): Promise<{ options: QpPolicyOptions | Record<string, unknown>; contextValues?: string[] } | null> {
  const name = ["policyOptions", "configure", "queryLibOptions"].find((key) => loaded[key] !== undefined) ?? "default";
  let exported = loaded[name];
  // A CommonJS module's exports arrive as the default export.
  if (name === "default" && exported && typeof exported === "object" && !isOptionsLike(exported)) {
    const inner = exported as Loaded;
    if (["policyOptions", "configure", "queryLibOptions"].some((key) => inner[key] !== undefined)) return policyOf(inner);
  }
  if (typeof exported === "function") {
    // forRoot's configure(options) sets the options it is given; a function of no parameter returns them.
    const options = bindPolicySection(undefined);
    const returned = await (exported as (o: QpPolicyOptions) => unknown)(options);
    exported = returned === undefined ? options : returned;
  }
  if (!exported || typeof exported !== "object") return null;
  const given = exported as Record<string, unknown>;
  if (given.entities === undefined && (typeof given.configure === "function" || given.policies !== undefined)) {
    // QueryLibModule.forRoot's options.
    const claims = given.claims as { valueClaims?: Record<string, unknown> } | undefined;
    return {
      options: bindPolicySection((given.policies ?? undefined) as Record<string, unknown> | undefined, given.configure as (o: QpPolicyOptions) => void),
      contextValues: claims?.valueClaims ? Object.keys(claims.valueClaims) : undefined,
    };
  }
  return { options: given };
}

const isOptionsLike = (value: object) => "entities" in value || "policies" in value || "configure" in value;

/** The exposed entities, from this copy's catalogue or another copy's (read by shape, not by class). */
function exposedEntities(options: object): Function[] {
  const entities = (options as { entities?: unknown }).entities;
  if (entities && typeof (entities as QpEntityCatalogue).entries === "function") return (entities as QpEntityCatalogue).entries().map(([, entity]) => entity);
  return [];
}

/** The reason to stop when another copy of QueryLib recorded the entities' decorators, else null. */
function otherCopyProblem(entities: readonly Function[]): string | null {
  const others = loadedQueryLibCopies().filter((copy) => copy.registry !== qpRegistry);
  const foreign = entities.filter((entity) => !qpRegistry.knows(entity) && others.some((copy) => copy.registry.knows(entity)));
  if (foreign.length === 0) return null;
  const root = (url: string) => resolve(dirname(fileURLToPath(url)), "..", "..", "..");
  const theirs = [...new Set(others.filter((copy) => foreign.some((entity) => copy.registry.knows(entity))).map((copy) => root(copy.registryUrl)))];
  return `two copies of querylib: the decorators of ${foreign.map((e) => e.name).join(", ")} were recorded by the copy at ${theirs.join(", ")}, ` +
    `but this command runs from the copy at ${root(import.meta.url)}, which would see no policy on them. ` +
    `Run the linter of the copy the application uses (node ${theirs[0]}/dist/lib/cli/querylib.js lint --config …), or leave one copy in node_modules (npm dedupe; npm ls querylib shows them)`;
}

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "help" || command === "--help" || rest.includes("--help") || rest.includes("-h")) {
    process.stdout.write(help);
    return 0;
  }
  const configAt = rest.indexOf("--config");
  const config = configAt >= 0 ? rest[configAt + 1] : undefined;
  if (command !== "lint" || !config) {
    process.stderr.write(`${usage}\n(querylib --help lists the shapes the module may export)\n`);
    return 2;
  }
  const loaded = await import(pathToFileURL(resolve(process.cwd(), config)).href) as Loaded;
  const policy = await policyOf(loaded);
  if (!policy) {
    process.stderr.write(`${config} exports no policy options (policyOptions, configure, queryLibOptions or a default export; querylib --help lists the shapes)\n`);
    return 2;
  }
  const problem = otherCopyProblem(exposedEntities(policy.options));
  if (problem) {
    process.stderr.write(`querylib: ${problem}\n`);
    return 2;
  }
  // The engine validates and resolves the options as at startup; its own startup lint stays off.
  const engine = new QpPolicyEngine({ ...(policy.options as object), lint: "off" });
  const rules = ((loaded.rules ?? []) as QpRuleInput[]).map((rule, i) => normalizeRule(rule, rule.id ?? `rule-${i + 1}`, null));
  const lintOptions = (loaded.lintOptions ?? (policy.contextValues ? { contextValues: policy.contextValues } : {})) as object;
  const findings = lintPolicy(engine.options, rules, lintOptions);
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
