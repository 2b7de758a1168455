// The policy's configuration, validated once (Cedar's split): when an engine is built, over every
// exposed entity and every entity a navigation reaches from one, every problem collected at once
// instead of the first being found by some caller's first query. Guarded queries keep their own
// checks for entities that are not exposed (and as a second line), but nothing here depends on
// the caller. A policy linter belongs here too (issue #20).
import { type EntityModel, type Member, type MemberScope, modelOfClass } from "../model/entity-model.js";
import { dataTypeOfKind } from "../model/field-kind.js";
import { DataType } from "../shapes/enums.js";
import { operatorsOf } from "../shapes/operator-table.js";
import { aliasCollisions, classPolicyOf } from "./entity-policy.js";
import { isTransformAttribute, transformChainOf } from "../transform/field-transforms.js";
import { maskNeedsProblem } from "../transform/apply.js";
import { PolicyErrorCode } from "../errors/policy-exception.js";
import { type QpPolicyOptions } from "./options.js";
import { QpConfigurationError, configurationError, policyCodeOf } from "../errors/configuration-error.js";
import { privateOptionsProblem } from "../privacy/private-options.js";
import type { MemberPolicy } from "../registry/qp-registry.js";

export interface QpPolicyProblem {
  /** A PolicyErrorCode's name (the error a query would have met) or a configuration code. */
  readonly code: string;
  /** "Entity.member", or the entity alone. */
  readonly where: string;
  readonly message: string;
}

type Needs = Pick<QpPolicyOptions, "hashSalt" | "tokenVault">;

/** Every configuration problem of the exposed entities and those they reach; empty when there is none. */
export function validatePolicy(options: Pick<QpPolicyOptions, "entities" | "hashSalt" | "tokenVault"> & Partial<Pick<QpPolicyOptions, "guessBudget" | "inferenceProtection">>): QpPolicyProblem[] {
  const problems: QpPolicyProblem[] = [];
  // The guess budget charges guesses on fields inference protection protects: without it, nothing would ever be charged.
  if (options.guessBudget && !options.inferenceProtection) {
    problems.push({
      code: "GuessBudgetWithoutProtection", where: "guessBudget",
      message: "guessBudget charges the guesses a request makes on fields the caller sees transformed, which only inferenceProtection tells apart: turn inferenceProtection on, or remove guessBudget",
    });
  }
  const seen = new Set<Function>();
  for (const [, entity] of options.entities.entries()) collectProblems(modelOfClass(entity), { aliases: true, needs: options }, problems, seen);
  return problems;
}

/**
 * The problems of one entity and every entity its navigations reach. `aliases`: alias collisions
 * too; `needs`: the salt and vault its masks need too (null: not checked, as for an entity met at
 * a guarded query, whose rows are checked when transformed).
 */
export function collectProblems(model: EntityModel, what: { aliases: boolean; needs: Needs | null }, problems: QpPolicyProblem[] = [], seen = new Set<Function>()): QpPolicyProblem[] {
  if (seen.has(model.target)) return problems;
  seen.add(model.target);
  if (what.aliases) {
    for (const message of aliasCollisions(classPolicyOf(model.target), model.scope)) {
      problems.push({ code: PolicyErrorCode[PolicyErrorCode.AmbiguousFieldName], where: model.name, message });
    }
  }
  for (const reached of checkScope(model.scope, model.target, what.needs, problems, true)) collectProblems(reached, what, problems, seen);
  return problems;
}

/**
 * A forced predicate (QpForceWhere) that no query could apply: on a member that is not a value
 * column of the entity itself (one inside an embedded object is never read: forced predicates
 * are the root's own), or with an operator its column's DataType does not take. (The decorator
 * itself refuses operators without exactly one value.)
 */
function forcedPredicateProblems(member: Member, owner: Function, topLevel: boolean, where: string, problems: QpPolicyProblem[]): void {
  const policy = classPolicyOf(owner).members.get(member.name);
  for (const attribute of policy?.attributes ?? []) {
    if (attribute.kind !== "forceWhere") continue;
    const source = `QpForceWhere on ${where}`;
    if (!topLevel) {
      problems.push({ code: "ForcedPredicateNeverApplied", where, message: `${source}: a member of an embedded object, which no query reads a forced predicate from (only an entity's own columns); put it on one` });
      continue;
    }
    if (member.kind !== "column") {
      problems.push({ code: "ForcedPredicateNeedsColumn", where, message: `${source}: ${member.name} is not a value column` });
      continue;
    }
    const dataType = dataTypeOfKind[member.fieldKind] ?? DataType.Text;
    if (!operatorsOf[dataType].has(attribute.operator)) {
      problems.push({ code: "UnsupportedCombination", where, message: `${source}: ${attribute.operator} does not apply to a ${dataType} field` });
    }
  }
}

/**
 * QpPrivate (#45): settings that could not be used (bounds, granularity, ε: the words Private
 * rules are refused with), on a member that is not a numeric value column, or twice on one member.
 */
function privateProblems(member: Member, policy: MemberPolicy | undefined, where: string, problems: QpPolicyProblem[]): void {
  const declared = (policy?.attributes ?? []).filter((a) => a.kind === "private");
  if (declared.length === 0) return;
  if (declared.length > 1) problems.push({ code: "InvalidPrivateSettings", where, message: `QpPrivate on ${where}: declared ${declared.length} times; declare its bounds once` });
  if (member.kind !== "column" || member.fieldKind !== "number") {
    const what = member.kind === "column" ? `a ${member.fieldKind} field` : "not a value column";
    problems.push({ code: "PrivateFieldNotNumeric", where, message: `QpPrivate on ${where}: ${member.name} is ${what}; only numeric columns can be private` });
  }
  for (const attribute of declared) {
    const problem = attribute.kind === "private" ? privateOptionsProblem(attribute.options) : null;
    if (problem) problems.push({ code: "InvalidPrivateSettings", where, message: `QpPrivate on ${where}: ${problem}` });
  }
}

/** Throws one QpConfigurationError naming every problem (its code: the first problem's). */
export function assertValidPolicy(options: Pick<QpPolicyOptions, "entities" | "hashSalt" | "tokenVault"> & Partial<Pick<QpPolicyOptions, "guessBudget" | "inferenceProtection">>): void {
  // Problems with a policy code first (stable otherwise): the error's code is the first one's, so
  // a MissingHashSalt (21) or MissingTokenVault (22) makes it a PolicyException with that errorCode.
  const all = validatePolicy(options);
  if (all.length === 0) return;
  const problems = [...all.filter((p) => policyCodeOf(p.code) !== undefined), ...all.filter((p) => policyCodeOf(p.code) === undefined)];
  // One problem reads as itself; several as a list, each with its code and place.
  const message = problems.length === 1
    ? problems[0]!.message
    : `the policy has ${problems.length} configuration problems:\n${problems.map((p) => `- ${p.code} at ${p.where}: ${p.message}`).join("\n")}`;
  throw Object.assign(configurationError(message, problems[0]!.code), { problems });
}

/** The members of one scope; returns the entities its navigations lead to. */
function checkScope(scope: MemberScope, owner: Function, needs: Needs | null, problems: QpPolicyProblem[], topLevel: boolean): EntityModel[] {
  const policies = classPolicyOf(owner).members;
  const reached: EntityModel[] = [];
  for (const member of scope.all()) {
    const policy = policies.get(member.name);
    const where = `${owner.name}.${member.name}`;
    forcedPredicateProblems(member, owner, topLevel, where, problems);
    privateProblems(member, policy, where, problems);
    if (member.kind === "column") {
      let chain;
      try {
        chain = transformChainOf(policy, member.fieldKind);
      } catch (error) {
        if (!(error instanceof QpConfigurationError)) throw error;
        problems.push({ code: error.code, where, message: error.message });
        continue;
      }
      const missing = needs && chain ? maskNeedsProblem(chain.mask?.strategy, { hashSalt: needs.hashSalt, vault: needs.tokenVault }, chain.source) : null;
      if (missing) problems.push({ code: PolicyErrorCode[missing.code], where, message: missing.message });
      continue;
    }
    const transform = policy?.attributes.find(isTransformAttribute);
    if (transform) {
      const what = member.kind === "embedded" ? `an embedded object (${member.target.name})` : `a navigation to ${member.target().name}`;
      problems.push({
        code: "TransformOnObjectMember", where,
        message: `${transform.decorator} on ${where}: ${member.name} is ${what}; transformations apply to value columns, so decorate the members inside it instead`,
      });
    }
    if (member.kind === "embedded") reached.push(...checkScope(member.scope, member.target, needs, problems, false));
    else reached.push(member.target());
  }
  return reached;
}
