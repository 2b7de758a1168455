// A policy engine: options frozen at construction, providers that prepare contexts. Several
// independent engines may live in one process (tests, hosts with two data sources); QpPolicy
// is the process-wide default and keeps the spec's configure-once rule.
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { QpPolicyContext } from "../shapes/policy-context.js";
import { type QpPolicyProviders } from "./providers.js";
import type { DataSource } from "typeorm";
import { type SchemaResponse, type SimulateResponse, explainOf, schemaOf, simulateOf } from "../admin/admin.js";
import { type DecisionTable, DecisionTables } from "../decisions/decision-table.js";
import { checkRuleTarget } from "../decisions/rule-checks.js";
import { type IQpRuleStore, QpInMemoryRuleStore } from "../rules/store.js";
import { type QpPolicyHealth, RuleSnapshots } from "../decisions/snapshot.js";
import { type QpRule, type QpRuleInput, normalizeRule, storableRuleId, subjectKey } from "../rules/rule.js";
import { assertValidPolicy } from "../decisions/validate-policy.js";
import { GuardedCaches } from "../guard/guarded-caches.js";
import { type QpLintOptions, lintPolicy, reportLint } from "../lint/lint-policy.js";
import type { QpLintFinding } from "../lint/lint-fields.js";
import { type QpGuessBudgetInput, type QpPolicyOptions, type QpPolicyOptionsInput, bindPolicySection, resolveCounts, resolveCursorSecrets, resolveGuessBudget, resolveOptions } from "../decisions/options.js";
import { CursorKeyring } from "../cursor/cursor-codec.js";
import { QpConfigurationError } from "../errors/configuration-error.js";
import { observeSnapshots } from "../telemetry/metrics.js";

export class QpPolicyEngine {
  readonly options: QpPolicyOptions;
  readonly ruleStore: IQpRuleStore;
  private readonly snapshots: RuleSnapshots;
  /** This engine's decisions per snapshot and subject set. */
  private readonly decisionTables = new DecisionTables();
  /** This engine's guarded plans and sanitized shapes (guard/guarded-caches.ts). */
  readonly caches = new GuardedCaches();
  /** Seals and opens this engine's page cursors (options.cursorSecrets, or a random secret of this engine's). */
  readonly cursorKeyring: CursorKeyring;

  constructor(options: QpPolicyOptionsInput | QpPolicyOptions = {}, readonly providers: QpPolicyProviders = {}) {
    // A resolved object may have been changed by a configure callback since: its guess budget is resolved (defaults, checks) here.
    this.options = Object.freeze(isResolved(options)
      ? { ...options, caps: Object.freeze({ ...options.caps }), guessBudget: resolveGuessBudget(options.guessBudget as QpGuessBudgetInput | null | undefined), cursorSecrets: resolveCursorSecrets(options.cursorSecrets), counts: resolveCounts(options.counts as never) }
      : resolveOptions(options));
    this.cursorKeyring = this.options.cursorSecrets.length > 0 ? new CursorKeyring(this.options.cursorSecrets) : CursorKeyring.random();
    // Validated once, whole: every configuration problem of the exposed entities at startup.
    assertValidPolicy(this.options);
    for (const name of Object.keys(this.options.counts)) {
      if (name !== "*" && this.options.entities.find(name) === undefined) throw new QpConfigurationError(`counts.${name}: no entity is exposed as "${name}" (use a public name, or "*" for every entity)`);
    }
    // Linted once too: its decorators and options (the rules are linted by lintAsync, and where they change).
    if (this.options.lint !== "off") reportLint(lintPolicy(this.options, [], providers.lintOptions), this.options.lint, providers.logger ?? console);
    this.ruleStore = providers.ruleStore ?? new QpInMemoryRuleStore();
    // An explicit notifier (Redis) wins over the store's own (PostgreSQL LISTEN/NOTIFY).
    this.snapshots = new RuleSnapshots(this.ruleStore, this.options, providers.clock, providers.ruleNotifier ?? this.ruleStore.changeNotifier ?? null);
    // Its snapshot's age, version and notification state on the observable gauges (held weakly).
    observeSnapshots(this);
  }

  /**
   * Stops listening for rule changes (closing the listening connection with its last engine).
   * The engine still decides, polling every RefreshInterval. Call it when the host shuts down.
   */
  closeAsync(): Promise<void> {
    return this.snapshots.closeAsync();
  }

  /**
   * Forgets this engine's cached guarded plans and sanitized shapes (not other engines'). Never
   * needed for correctness: a rule change or another caller is another key. It frees memory.
   */
  clearCaches(): void {
    this.caches.clear();
  }

  /** Version of the rule snapshot in use (0 before any rule). */
  get snapshotVersion(): number {
    return this.snapshots.health().snapshotVersion;
  }

  /** The decisions for a caller under the current snapshot (cached per version and subject set). */
  async decisionsAsync(context: QpPolicyContext): Promise<DecisionTable> {
    return this.decisionTables.of(await this.snapshots.snapshotAsync(), context);
  }

  health(): QpPolicyHealth {
    return this.snapshots.health();
  }

  /** Creates (no id) or replaces a rule after validating it; this instance sees it at once. */
  async upsertRuleAsync(input: QpRuleInput, changedBy?: string): Promise<QpRule> {
    const shaped = normalizeRule(input, input?.id ?? "pending", changedBy ?? null);
    checkRuleTarget(this.options, shaped);
    const rule = await this.ruleStore.upsertAsync(input, changedBy ?? null);
    await this.snapshots.refreshAsync();
    this.snapshots.publishCurrent();
    return rule;
  }

  async deleteRuleAsync(id: string): Promise<boolean> {
    // An id no store can hold names no rule: nothing to ask the store (PostgreSQL would fail on U+0000).
    if (!storableRuleId(id)) return false;
    const deleted = await this.ruleStore.deleteAsync(id);
    await this.snapshots.refreshAsync();
    if (deleted) this.snapshots.publishCurrent();
    return deleted;
  }

  /** The fields of an exposed entity a caller may use, for a filter UI (docs/RULES.md, "The admin functions"). */
  schemaAsync(entity: string, request: { paths?: readonly string[] | null; depth?: unknown }, context: QpPolicyContext): Promise<SchemaResponse> {
    return schemaOf(this, entity, request, context);
  }

  /** The whole decision chain of one field (or of every field a schema request would show). */
  explainAsync(entity: string, request: { field?: string | null; paths?: readonly string[] | null; depth?: unknown }, context: QpPolicyContext) {
    return explainOf(this, entity, request, context);
  }

  /** The sanitized clause and the SQL that would run: nothing executes, no audit event is written. */
  simulateAsync(entity: string, filter: unknown, context: QpPolicyContext, dataSource: DataSource): Promise<SimulateResponse> {
    return simulateOf(this, context, entity, filter, dataSource);
  }

  /** Every finding of the policy linter over the configuration and the rules in force (docs/POLICY.md, "Linting a policy"). */
  async lintAsync(lint: QpLintOptions = this.providers.lintOptions ?? {}): Promise<QpLintFinding[]> {
    // The rules the engine decides with now, under its store failure mode: a failing store fails
    // closed (StoreUnavailable) rather than reporting findings that ignore the rules.
    const { rules } = await this.snapshots.snapshotAsync();
    return lintPolicy(this.options, rules, lint);
  }

  /**
   * The findings a rule would introduce: those of the current rules with it written (a new id, or
   * replacing its own) that the current rules alone do not have. Refused like a write when the
   * rule itself is (RuleRejected).
   */
  async lintRuleAsync(input: QpRuleInput, lint: QpLintOptions = this.providers.lintOptions ?? {}): Promise<QpLintFinding[]> {
    const candidate = normalizeRule(input, input?.id ?? "(new rule)", null);
    checkRuleTarget(this.options, candidate);
    const { rules } = await this.ruleStore.loadAsync();
    const key = (f: QpLintFinding) => [f.code, f.entity, f.field, f.feature, f.subject, f.source].join("\u0000");
    const before = new Set(lintPolicy(this.options, rules, lint).map(key));
    const after = lintPolicy(this.options, [...rules.filter((r) => r.id !== candidate.id), candidate], lint);
    return after.filter((f) => !before.has(key(f)));
  }

  /** Rules, optionally for one subject ("Role:analyst", "Tenant:t-1", "Global"). */
  async listRulesAsync(subject?: string): Promise<QpRule[]> {
    const { rules } = await this.ruleStore.loadAsync();
    return subject ? rules.filter((r) => subjectKey(r).toLowerCase() === subject.trim().toLowerCase()) : [...rules];
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

const isResolved = (options: object): options is QpPolicyOptions => {
  const resolved = options as QpPolicyOptions;
  return "entities" in options && "caps" in options && typeof resolved.maxSnapshotAge === "number"
    && typeof resolved.refreshInterval === "number" && resolved.caps !== undefined && "maxPageSize" in resolved.caps;
};

let defaultEngine: QpPolicyEngine | null = null;

/**
 * QpPolicy's engine is configured only by QpPolicy.configure or addQpPolicies. QueryLibModule
 * (querylib/nest) runs an engine of its own by design, one per application, so a Nest user who
 * follows the spec's QpPolicy.prepareAsync meets an unconfigured QpPolicy: say which way out.
 */
const prepareWithoutConfigure = "QpPolicy.prepareAsync: QpPolicy has no engine; QpPolicy.configure (or addQpPolicies) must run at startup first. "
  + "Under NestJS, QueryLibModule.forRoot runs an engine of its own and does not configure QpPolicy: prepare contexts with "
  + "QueryLibService.prepareAsync(context) (or QpClaimsAdapter.createContextAsync and getPolicyContextAsync, which use the module's engine), or pass useDefaultEngine: true to QueryLibModule.forRoot "
  + "to have the module configure QpPolicy's engine and use it";

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
    if (!defaultEngine) throw new QpConfigurationError(prepareWithoutConfigure, "PolicyNotConfigured");
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
