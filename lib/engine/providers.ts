// What an engine is given besides its options: hooks it calls while preparing a context, where
// its rules live and how it hears of changes, its clock and logger.
import type { QpPolicyContext, QpSubject } from "../shapes/policy-context.js";
import type { IQpRuleStore } from "../rules/store.js";
import type { IQpRuleNotifier } from "../rules/notifications.js";
import type { QpLintOptions } from "../lint/lint-policy.js";

/** Hooks an engine calls while preparing a context: extra subjects and values (claims, lookups). */
export interface QpPolicyProviders {
  resolveSubjects?(context: QpPolicyContext): Promise<readonly QpSubject[]> | readonly QpSubject[];
  resolveValues?(context: QpPolicyContext): Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Where runtime rules live: in memory by default, or `new QpTypeOrmRuleStore(dataSource)`. */
  ruleStore?: IQpRuleStore;
  /**
   * How engines in other processes hear of a rule change at once (`new QpRedisRuleNotifier(redis)`);
   * default: the store's own (the relational store on PostgreSQL), else polling only.
   */
  ruleNotifier?: IQpRuleNotifier | null;
  /** The clock snapshots age by (tests). */
  clock?: () => number;
  /** Where startup lint findings go (lint: "warn"): the host's logger; default console. */
  logger?: { warn(message: string): void };
  /** What the host knows that the linter cannot see: the context values its claims mapping provides. */
  lintOptions?: QpLintOptions;
}
