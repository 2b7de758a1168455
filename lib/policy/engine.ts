// A policy engine: options frozen at construction, providers that prepare contexts. Several
// independent engines may live in one process (tests, hosts with two data sources); QpPolicy
// is the process-wide default and keeps the spec's configure-once rule.
import { setUnguardedCheck } from "../api/unguarded.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { QpPolicyContext, type QpPolicyProviders } from "./context.js";
import { classPolicyOf } from "./entity-policy.js";
import { modelOfClass } from "../model/entity-model.js";
import { transformChainOf } from "../transform/field-transforms.js";
import { type QpPolicyOptions, type QpPolicyOptionsInput, QpConfigurationError, bindPolicySection, resolveOptions } from "./options.js";

export class QpPolicyEngine {
  readonly options: QpPolicyOptions;

  constructor(options: QpPolicyOptionsInput | QpPolicyOptions = {}, readonly providers: QpPolicyProviders = {}) {
    this.options = Object.freeze(isResolved(options) ? { ...options, caps: Object.freeze({ ...options.caps }) } : resolveOptions(options));
    for (const [, entity] of this.options.entities.entries()) checkTransforms(entity);
  }

  /** Version of the rule snapshot decisions are made against (0: attributes only). */
  get snapshotVersion(): number {
    return 0;
  }

  /** Resolves subjects and values through the providers; once per request. */
  async prepareAsync(context: QpPolicyContext): Promise<QpPolicyContext> {
    const subjects = [...context.subjects, ...((await this.providers.resolveSubjects?.(context)) ?? [])];
    const values = new Map(context.values);
    for (const [name, value] of Object.entries((await this.providers.resolveValues?.(context)) ?? {})) values.set(name, value);
    return new QpPolicyContext(subjects, values, this);
  }

  /** The engine a guarded query runs under: the one that prepared its context. */
  static of(context: QpPolicyContext): QpPolicyEngine {
    if (!(context?.preparedBy instanceof QpPolicyEngine)) {
      policyError(PolicyErrorCode.PolicyContextNotPrepared, "prepare the context with QpPolicy.prepareAsync (or an engine's prepareAsync) once per request before a guarded query");
    }
    return context.preparedBy;
  }
}

const isResolved = (options: object): options is QpPolicyOptions => "entities" in options && "caps" in options && typeof (options as QpPolicyOptions).maxSnapshotAge === "number" && typeof (options as QpPolicyOptions).refreshInterval === "number" && (options as QpPolicyOptions).caps !== undefined && "maxPageSize" in (options as QpPolicyOptions).caps;

/** Configure-time checks of an exposed entity's transformation decorators (rule 2 and friends). */
function checkTransforms(entity: Function, seen = new Set<Function>()): void {
  if (seen.has(entity)) return;
  seen.add(entity);
  const walk = (scope: ReturnType<typeof modelOfClass>["scope"], owner: Function) => {
    const policy = classPolicyOf(owner);
    for (const member of scope.all()) {
      if (member.kind === "embedded") walk(member.scope, member.target);
      else transformChainOf(policy.members.get(member.name), member.kind === "column" ? member.fieldKind : null);
    }
  };
  const model = modelOfClass(entity);
  walk(model.scope, entity);
}

let defaultEngine: QpPolicyEngine | null = null;

export const QpPolicy = {
  /** Configures the process-wide engine; a second call is refused. */
  configure(options: QpPolicyOptionsInput | QpPolicyOptions = {}, providers: QpPolicyProviders = {}): QpPolicyEngine {
    if (defaultEngine) throw new QpConfigurationError("QpPolicy.configure was already called: policies are configured once, at startup");
    defaultEngine = new QpPolicyEngine(options, providers);
    return defaultEngine;
  },

  get engine(): QpPolicyEngine | null {
    return defaultEngine;
  },

  prepareAsync(context: QpPolicyContext): Promise<QpPolicyContext> {
    if (!defaultEngine) throw new QpConfigurationError("QpPolicy.configure (or addQpPolicies) must run at startup before QpPolicy.prepareAsync");
    return defaultEngine.prepareAsync(context);
  },
};

/** Binds the `QueryLib.Policies` section, lets `configure` set code-only options, and configures QpPolicy. */
export function addQpPolicies(section: Record<string, unknown> | undefined, configure?: (options: QpPolicyOptions) => void, providers?: QpPolicyProviders): QpPolicyEngine {
  return QpPolicy.configure(bindPolicySection(section, configure), providers);
}

/** For tests of the configure-once rule only. */
export function resetDefaultPolicyEngineForTests(): void {
  defaultEngine = null;
}

// An entity marked QpEntity({ requirePolicy: true }) refuses every unguarded query function.
setUnguardedCheck((model) => {
  if (classPolicyOf(model.target).requirePolicy) {
    policyError(PolicyErrorCode.PolicyRequired, `${model.name} requires a policy: query it through applyPolicy(source, context)`);
  }
});
