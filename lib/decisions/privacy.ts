// Whether a member is private for a caller (#45, docs/POLICY.md "Private aggregates"), and with
// which settings: the QpPrivate decorator makes it private for every caller; a Private rule makes
// it private for the rule's subjects. Among several, the one ranked first as any decision source
// is (level, then exact before wildcard, then priority) gives the settings: a sealed QpPrivate
// before every rule, an overridable one after them. An Exact rule ranked first lifts privacy for
// its subjects (never a sealed QpPrivate's). Privacy only closes channels, so nothing here can
// lift a restriction a feature decision makes.
import { PolicyEffect, PolicyLevel } from "../shapes/policy-enums.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import { type PrivateSettings, privateSettingsOf } from "../privacy/private-options.js";
import type { CompiledRules } from "./compiled-rules.js";
import { type DecisionSource, compareSources } from "./decide.js";
import { describeSource } from "./entity-policy.js";
import type { PolicyMember } from "./references.js";

/** A member's privacy for one caller: the settings and the source they come from ("QpPrivate on Account.balance", "rule r-1"). */
export interface PrivateDecision extends PrivateSettings {
  readonly source: string;
  readonly level: PolicyLevel;
}

export function privacyOf(member: PolicyMember, rules: CompiledRules, context: QpPolicyContext): PrivateDecision | null {
  const sources: (DecisionSource & { settings: PrivateSettings | null })[] = [];
  for (const attribute of member.policy?.attributes ?? []) {
    if (attribute.kind !== "private") continue;
    const level = attribute.overridable ? PolicyLevel.OverridableAttribute : PolicyLevel.SealedAttribute;
    sources.push({ effect: PolicyEffect.Private, level, specificity: 1, priority: 0, source: describeSource(attribute, member.policy!), settings: privateSettingsOf(attribute.options) });
  }
  // An Exact rule (settings null) lifts what it outranks: an overridable QpPrivate, a Private rule of a lower rank.
  for (const source of rules.privateSources(member, context)) sources.push({ ...source, settings: source.rule.effect === PolicyEffect.Exact ? null : privateSettingsOf(source.rule.private!) });
  if (sources.length === 0) return null;
  const [winner] = sources.sort(compareSources);
  if (winner!.settings === null) return null;
  return { ...winner!.settings, source: winner!.source, level: winner!.level };
}
