// Runtime rules: who (subject), what (entity public name, field path or wildcard), which
// features, which effect (Allow, Mask with mask settings, Deny), and a priority. Validated on
// write; a rule on a field sealed for those features is rejected.
import type { MaskOptions } from "../registry/qp-registry.js";
import { LogicException } from "../errors/logic-exception.js";
import { PolicyEffect, PolicyFeature, QpSubjectKind } from "../shapes/policy-enums.js";
import { maskOptionsProblem } from "../transform/mask-checks.js";
import { type QpPrivateOptions, privateOptionsProblem } from "../privacy/private-options.js";

export interface QpRuleInput {
  readonly id?: string;
  readonly subjectKind: QpSubjectKind;
  readonly subject?: string | null;
  readonly entity: string;
  readonly field: string;
  readonly features?: PolicyFeature;
  readonly effect: PolicyEffect;
  readonly mask?: MaskOptions | null;
  /** A Private rule's settings (#45): the field's public bounds, granularity and ε per aggregate. */
  readonly private?: QpPrivateOptions | null;
  readonly priority?: number;
  readonly description?: string | null;
}

export interface QpRule {
  readonly id: string;
  readonly subjectKind: QpSubjectKind;
  readonly subject: string | null;
  readonly entity: string;
  readonly field: string;
  readonly features: PolicyFeature;
  readonly effect: PolicyEffect;
  readonly mask: MaskOptions | null;
  readonly private: QpPrivateOptions | null;
  readonly priority: number;
  readonly description: string | null;
  readonly changedBy: string | null;
  readonly changedAt: string;
}

export const RuleRejected = "RuleRejected";

export const rejectRule = (reason: string): never => {
  throw new LogicException(RuleRejected, `RuleRejected: ${reason}`);
};

const enumValue = <E extends string>(value: unknown, members: readonly E[], name: string): E =>
  members.find((m) => typeof value === "string" && m.toLowerCase() === value.toLowerCase()) ?? rejectRule(`${name} must be one of ${members.join(", ")}`);

/**
 * An id every store can hold: 1 to 64 characters (the relational store's column), without U+0000
 * (PostgreSQL cannot store or even compare it: the driver fails, which read as a store outage).
 */
export const storableRuleId = (id: unknown): id is string => typeof id === "string" && id.length >= 1 && id.length <= 64 && !id.includes("\0");

/** The shape checks of a rule (entity and field are checked against metadata by the engine). */
export function normalizeRule(input: QpRuleInput, id: string, changedBy: string | null): QpRule {
  if (input === null || typeof input !== "object") rejectRule("a rule must be an object");
  if (!storableRuleId(id)) rejectRule("id must be 1 to 64 characters, without U+0000");
  const subjectKind = enumValue(input.subjectKind, Object.values(QpSubjectKind), "subjectKind");
  const subject = input.subject === undefined || input.subject === null || input.subject === "" ? null : String(input.subject);
  if (subjectKind === QpSubjectKind.Global && subject !== null) rejectRule("a Global rule has no subject");
  if (subjectKind !== QpSubjectKind.Global && subject === null) rejectRule(`a ${subjectKind} rule needs a subject`);
  if (typeof input.entity !== "string" || input.entity.trim() === "") rejectRule("entity (an exposed public name) is required");
  if (typeof input.field !== "string" || !/^(\*|[\p{L}_][\p{L}\p{Nd}_]*(\.[\p{L}_][\p{L}\p{Nd}_]*)*(\.\*)?)$/u.test(input.field.trim())) rejectRule("field must be a path, * or a path ending in .*");
  const features = input.features === undefined ? PolicyFeature.All : Number(input.features);
  if (!Number.isInteger(features) || features < 1 || (features & ~PolicyFeature.All) !== 0) rejectRule("features must be PolicyFeature flags between 1 and 63");
  const effect = enumValue(input.effect, Object.values(PolicyEffect), "effect");
  const mask = input.mask ?? null;
  if (effect === PolicyEffect.Mask && (mask === null || typeof mask !== "object" || Array.isArray(mask))) rejectRule("a Mask rule needs mask settings { strategy, … }");
  if (effect !== PolicyEffect.Mask && mask) rejectRule("only a Mask rule carries mask settings");
  // The same checks, and the same words, as the QpMask decorator.
  const maskProblem = mask ? maskOptionsProblem(mask) : null;
  if (maskProblem) rejectRule(maskProblem.message);
  const privateSettings = input.private ?? null;
  if (effect === PolicyEffect.Private && privateSettings === null) rejectRule("a Private rule needs private settings { lower, upper, granularity, epsilon? }");
  if (effect !== PolicyEffect.Private && privateSettings) rejectRule("only a Private rule carries private settings");
  // The same checks, and the same words, as the QpPrivate decorator's at startup.
  const privateProblem = privateSettings ? privateOptionsProblem(privateSettings) : null;
  if (privateProblem) rejectRule(privateProblem);
  const priority = input.priority === undefined ? 0 : Number(input.priority);
  if (!Number.isInteger(priority)) rejectRule("priority must be an integer");
  return {
    id, subjectKind, subject, entity: input.entity.trim(), field: input.field.trim(), features, effect, mask,
    private: privateSettings && { lower: privateSettings.lower, upper: privateSettings.upper, granularity: privateSettings.granularity, ...(privateSettings.epsilon === undefined ? {} : { epsilon: privateSettings.epsilon }) },
    priority,
    description: input.description ?? null, changedBy, changedAt: new Date().toISOString(),
  };
}

/** `Role:analyst`, `Tenant:t-1`, `Global`: the subject filter of the rules list. */
export function subjectKey(rule: Pick<QpRule, "subjectKind" | "subject">): string {
  return rule.subjectKind === QpSubjectKind.Global ? "Global" : `${rule.subjectKind}:${rule.subject}`;
}
