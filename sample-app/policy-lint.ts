// The sample app's policy as `npx querylib lint --config dist/sample-app/policy-lint.js` reads it
// (CI runs it: test/policy/lint-cli.test.ts): the options its module binds from
// QueryLib.Policies, its exposed entities, its seeded rules and the context values its claims
// mapping provides. A module of its own so the linter loads no Nest application.
import { QpEntityCatalogue, QpInMemoryTokenVault } from "../lib/index.js";
import { bindPolicySection } from "../lib/decisions/options.js";
import { publicNames } from "./domain/entities.js";
import { sampleConfiguration, sampleRules } from "./app.module.js";
import { resolveSampleSecrets } from "./secrets.js";

export function policyOptions() {
  const options = bindPolicySection(sampleConfiguration().QueryLib.Policies as Record<string, unknown>);
  const entities = new QpEntityCatalogue();
  for (const [entity, name] of publicNames) entities.expose(entity, name);
  return { ...options, entities, hashSalt: resolveSampleSecrets(true).hashSalt /* the linter hashes nothing: any key, drawn when unset */, tokenVault: new QpInMemoryTokenVault() };
}

export const rules = sampleRules;

/** The sample's claims mapping: valueClaims { tenantId: "tenant" }; its admin API is confined to each admin's tenant. */
export const lintOptions = { contextValues: ["tenantId"], adminTenantConfined: true };
