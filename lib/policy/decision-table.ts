// Decisions for one (snapshot identity, subject set): memoised per member and feature, so a
// guarded query does no rule matching on the hot path once a caller's kind has been seen.
import type { CompiledRules } from "../rules/compiled-rules.js";
import { roleConflict } from "../rules/compiled-rules.js";
import type { PolicyFeature } from "../shapes/policy-enums.js";
import type { QpPolicyContext } from "./context.js";
import { type Decision, attributeSources, decide } from "./decide.js";
import type { PolicyMember } from "./references.js";
import { keyOf } from "../execute/sql-texts.js";

export class DecisionTable {
  private readonly memo = new WeakMap<Function, Map<string, Decision>>();

  constructor(readonly rules: CompiledRules, private readonly context: QpPolicyContext) {}

  decide(member: PolicyMember, feature: PolicyFeature): Decision {
    let byMember = this.memo.get(member.owner);
    if (!byMember) this.memo.set(member.owner, (byMember = new Map()));
    const key = `${member.member.name}|${feature}`; // unambiguous: the feature, a number, follows the last "|"
    let decision = byMember.get(key);
    if (!decision) {
      const sources = [...attributeSources(member.policy, feature), ...this.rules.sources(member, feature, this.context)];
      decision = decide(feature, sources, roleConflict);
      byMember.set(key, decision);
    }
    return decision;
  }
}

const tables = new Map<string, DecisionTable>();
const maxTables = 1000;

/**
 * The table for a caller's subjects under a snapshot (bounded cache; subjects sorted into the
 * key). The snapshot's identity (store epoch and version), not its version alone, keys it: two
 * stores, or a store re-created, can both be at version N with different rules.
 */
export function decisionTable(rules: CompiledRules, context: QpPolicyContext, engineId: number): DecisionTable {
  // Each subject self-delimiting (lengths before texts, whatever a kind or value holds), so the
  // key reads back into one subject set. A value that is no text (a hand-built context) stays
  // apart from its spelling: rules match text only.
  const subjects = context.subjects.map((s) => keyOf([String(s.kind), typeof s.value === "string" ? s.value : [String(s.value)]])).sort();
  const key = keyOf([engineId, rules.identity, subjects]);
  let table = tables.get(key);
  if (!table) {
    if (tables.size >= maxTables) tables.clear();
    table = new DecisionTable(rules, context);
    tables.set(key, table);
  }
  return table;
}
