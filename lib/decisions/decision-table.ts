// Decisions for one (snapshot identity, subject set): memoised per member and feature, so a
// guarded query does no rule matching on the hot path once a caller's kind has been seen.
import type { CompiledRules } from "./compiled-rules.js";
import { roleConflict } from "./compiled-rules.js";
import type { PolicyFeature } from "../shapes/policy-enums.js";
import type { QpPolicyContext, QpSubject } from "../shapes/policy-context.js";
import { type Decision, attributeSources, decide } from "./decide.js";
import type { PolicyMember } from "./references.js";
import { type PrivateDecision, privacyOf } from "./privacy.js";

export class DecisionTable {
  private readonly memo = new WeakMap<Function, Map<string, Decision>>();
  private readonly privateMemo = new WeakMap<Function, Map<string, PrivateDecision | null>>();

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

  /** The member's privacy for this caller (decisions/privacy.ts), or null: not private. */
  privacy(member: PolicyMember): PrivateDecision | null {
    let byMember = this.privateMemo.get(member.owner);
    if (!byMember) this.privateMemo.set(member.owner, (byMember = new Map()));
    let found = byMember.get(member.member.name);
    if (found === undefined) byMember.set(member.member.name, (found = privacyOf(member, this.rules, this.context)));
    return found;
  }
}

/**
 * An engine's decision tables, one per (snapshot identity, subject set): an instance per engine,
 * so two engines never share one, and a count bound (each table's memo is bounded by the model's
 * members and features). The snapshot's identity (store epoch and version), not its version
 * alone, keys it: two stores, or a store re-created, can both be at version N with different rules.
 */
export class DecisionTables {
  private readonly tables = new Map<string, DecisionTable>();

  constructor(private readonly maxTables = 1000) {}

  /** The table for a caller's subjects under a snapshot (subjects sorted into the key). */
  of(rules: CompiledRules, context: QpPolicyContext): DecisionTable {
    const key = `${rules.identity.length}:${rules.identity}${subjectsKey(context.subjects)}`;
    let table = this.tables.get(key);
    if (!table) {
      if (this.tables.size >= this.maxTables) this.tables.clear();
      table = new DecisionTable(rules, context);
      this.tables.set(key, table);
    }
    return table;
  }
}

/**
 * A subject set as a key part: each subject self-delimiting (lengths before texts, whatever a
 * kind or value holds), sorted, so the part reads back into exactly one set. A value that is no
 * text (a hand-built context) is marked apart from its spelling: rules match text only. Made
 * afresh each time: a context is most often prepared for one request, and a WeakMap keyed by its
 * subject list found nothing and grew by one entry a request: 3.4 us of a PostgreSQL W1 request on
 * the HTTP benchmark's profile with the map, 1.8 us without it.
 */
function subjectsKey(subjects: readonly QpSubject[]): string {
  const text = (part: string) => `${part.length}:${part}`;
  return subjects.map((s) => text(String(s.kind)) + (typeof s.value === "string" ? text(s.value) : `~${text(String(s.value))}`)).sort().join("");
}
