// A rule snapshot compiled for decisions: each rule attached to the member it names (owner
// class and property, however the member is reached) or to every member of a class (wildcard).
import { type Member, modelOfClass } from "../model/entity-model.js";
import { type FieldKind, textAssignableKinds } from "../model/field-kind.js";
import { PolicyEffect, PolicyFeature, PolicyLevel, QpSubjectKind } from "../shapes/policy-enums.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import type { DecisionSource } from "./decide.js";
import type { QpEntityCatalogue } from "./options.js";
import { type PolicyMember, reference } from "./references.js";
import type { QpRule } from "../rules/rule.js";
import { maskStrategyRow } from "../transform/strategies.js";
import { type QpRuleSnapshotData, snapshotIdentity } from "../rules/store.js";

export interface RuleTarget {
  readonly owner: Function;
  /** The property, or "*" for every member of the owner. */
  readonly property: string;
}

const levels: Record<QpSubjectKind, PolicyLevel> = {
  [QpSubjectKind.User]: PolicyLevel.DynamicUser,
  // Custom subjects rank with roles (documented).
  [QpSubjectKind.Custom]: PolicyLevel.DynamicRole,
  [QpSubjectKind.Role]: PolicyLevel.DynamicRole,
  [QpSubjectKind.Tenant]: PolicyLevel.DynamicTenant,
  [QpSubjectKind.Global]: PolicyLevel.DynamicGlobal,
};

export interface RuleSource extends DecisionSource {
  readonly rule: QpRule;
}

/** The owner class and property a rule's field names (public names accepted), or why not. */
export function ruleTarget(catalogue: QpEntityCatalogue, rule: Pick<QpRule, "entity" | "field">): RuleTarget | string {
  const entity = catalogue.find(rule.entity);
  if (!entity) return `no entity is exposed as "${rule.entity}"`;
  const root = modelOfClass(entity);
  if (rule.field === "*") return { owner: entity, property: "*" };
  const wildcard = rule.field.endsWith(".*");
  try {
    const ref = reference(root, wildcard ? rule.field.slice(0, -2) : rule.field, "field");
    if (!wildcard) return { owner: ref.end.owner, property: ref.end.member.name };
    const end = ref.end.member;
    if (end.kind === "column") return `"${rule.field}" puts a wildcard after a value`;
    return { owner: end.kind === "embedded" ? end.target : end.target().target, property: "*" };
  } catch (error) {
    return (error as Error).message;
  }
}

export class CompiledRules {
  private readonly byOwner = new Map<Function, { exact: Map<string, QpRule[]>; wildcard: QpRule[] }>();
  readonly epoch: string;
  readonly version: number;
  readonly rules: readonly QpRule[];
  /** (store epoch, version): what decision tables are cached by. */
  readonly identity: string;

  constructor(data: QpRuleSnapshotData, catalogue: QpEntityCatalogue) {
    this.epoch = data.epoch;
    this.version = data.version;
    this.rules = data.rules;
    this.identity = snapshotIdentity(data);
    for (const rule of this.rules) {
      const target = ruleTarget(catalogue, rule);
      if (typeof target === "string") continue; // validated on write; an entity no longer exposed is ignored
      let entry = this.byOwner.get(target.owner);
      if (!entry) this.byOwner.set(target.owner, (entry = { exact: new Map(), wildcard: [] }));
      if (target.property === "*") entry.wildcard.push(rule);
      else entry.exact.set(target.property, [...(entry.exact.get(target.property) ?? []), rule]);
    }
  }

  /**
   * Every rule naming the member (for explain), applicable or not; `skipped` says why a wildcard
   * rule does not reach this member at all.
   */
  rulesFor(member: Pick<PolicyMember, "owner" | "member">): { rule: QpRule; specificity: number; skipped: string | null }[] {
    const entry = this.byOwner.get(member.owner);
    if (!entry) return [];
    return [
      ...(entry.exact.get(member.member.name) ?? []).map((rule) => ({ rule, specificity: 1, skipped: null })),
      ...entry.wildcard.map((rule) => ({ rule, specificity: 0, skipped: wildcardSkip(rule, member.member) })),
    ];
  }

  sources(member: Pick<PolicyMember, "owner" | "member">, feature: PolicyFeature, context: QpPolicyContext): RuleSource[] {
    return this.rulesFor(member)
      // A Private rule decides no feature: it adds privacy on top of the features' decisions (privateSources).
      .filter(({ rule, skipped }) => skipped === null && rule.effect !== PolicyEffect.Private && rule.effect !== PolicyEffect.Exact && (rule.features & feature) !== 0 && appliesTo(rule, context))
      .map(({ rule, specificity }) => ({ effect: rule.effect, level: levels[rule.subjectKind], specificity, priority: rule.priority, source: `rule ${rule.id}`, rule }));
  }

  /** The Private and Exact rules that apply to the caller on this member (their features do not matter: privacy covers every use). */
  privateSources(member: Pick<PolicyMember, "owner" | "member">, context: QpPolicyContext): RuleSource[] {
    return this.rulesFor(member)
      .filter(({ rule, skipped }) => skipped === null && ((rule.effect === PolicyEffect.Private && rule.private !== null) || rule.effect === PolicyEffect.Exact) && appliesTo(rule, context))
      .map(({ rule, specificity }) => ({ effect: rule.effect, level: levels[rule.subjectKind], specificity, priority: rule.priority, source: `rule ${rule.id}`, rule }));
  }
}

/**
 * The kind of a column a rule's mask cannot write to, or null: every strategy but Null emits
 * text, which only text-like columns take (transform rule 2).
 */
export function textMaskMismatch(rule: Pick<QpRule, "effect" | "mask">, member: Member | undefined): FieldKind | null {
  if (rule.effect !== PolicyEffect.Mask || !rule.mask || maskStrategyRow(rule.mask.strategy)?.emitsText === false) return null;
  if (!member || member.kind !== "column" || textAssignableKinds.includes(member.fieldKind)) return null;
  return member.fieldKind;
}

/**
 * A wildcard Mask rule skips the members its mask cannot write to (numbers, dates, booleans):
 * they are decided as if the rule did not exist. An exact rule of that kind is refused on write.
 */
function wildcardSkip(rule: QpRule, member: Member): string | null {
  const kind = textMaskMismatch(rule, member);
  return kind && `a ${rule.mask!.strategy} mask emits text and ${member.name} is a ${kind} field: the wildcard rule skips it`;
}

export function appliesTo(rule: QpRule, context: QpPolicyContext): boolean {
  return rule.subjectKind === QpSubjectKind.Global || context.subjects.some((s) => s.kind === rule.subjectKind && s.value === rule.subject);
}

/** Rules of several roles of one caller that disagree at the winning level resolve to Deny. */
export function roleConflict(winner: DecisionSource, sources: readonly DecisionSource[]): DecisionSource | null {
  if (winner.level !== PolicyLevel.DynamicRole) return null;
  const peers = sources.filter((s): s is RuleSource => "rule" in s && s.level === PolicyLevel.DynamicRole && s.specificity === winner.specificity);
  const roles = new Set(peers.map((s) => s.rule.subject));
  const effects = new Set(peers.map((s) => s.effect));
  if (roles.size < 2 || effects.size < 2) return null;
  return { effect: PolicyEffect.Deny, level: PolicyLevel.DynamicRole, specificity: winner.specificity, priority: winner.priority, source: `role conflict (${peers.map((p) => p.source).join(", ")})` };
}
