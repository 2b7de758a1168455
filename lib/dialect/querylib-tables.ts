// What each dialect gives lib/migrations/: QueryLib's own tables (the relational rule store, audit
// sink, token vault and budget ledger) in the family's SQL, one field per schema version. Each
// family's statements are in its folder (<family>/ddl.ts), frozen once released.

/** The statements of each schema version, in the order they run. */
export interface QueryLibDdl {
  /** Version 1: querylib_rule, querylib_rule_version, querylib_token and querylib_audit_event (QueryLibSchema1795564800000). */
  readonly schemaV1: readonly string[];
  /** The budget ledger, querylib_budget (QueryLibBudget1795910400000). */
  readonly budgetV2: readonly string[];
  /** querylib_audit_event.count (QueryLibSchema1796515200000): added, and dropped again on down. */
  readonly auditCountV2: { readonly up: string; readonly down: string };
  /** The stored released answers of private Summaries, querylib_release (QueryLibRelease1796601600000, #45). */
  readonly releaseV3: readonly string[];
}

/** querylib_audit_event's indexes (name, column), the same on every family. */
export const auditIndexes: ReadonlyArray<readonly [string, string]> = [
  ["IDX_6d12e1a9c20e2e25076f463e9e", "at"],
  ["IDX_01397c2209a99d84efcd5fbbf9", "requestId"],
  ["IDX_77554ab0d7f4b85a13cc9edc1c", "clientRequestId"],
  ["IDX_93f139ac8dddd771261ca9bc6b", "userId"],
  ["IDX_16d6975851ba35fac0c99fc7aa", "tenant"],
];
