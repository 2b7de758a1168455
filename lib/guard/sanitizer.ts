// The sanitizer's core, shared by every clause (sanitize-*.ts): the caller's context and decision
// table, the decision per field reference (allow: allowed, masked, dropped or refused; scoped
// navigations; an Order on a field shown transformed), the navigation depth and cost of each
// reference, the output chain of a member and its inference guard, the diagnostics the trace and
// audit events come from (record, refuse), and the request-wide checks that end it (finish:
// conditions, cost, the query string) with the result. It decides nothing about a clause itself:
// the clause files call it as they place each field (placements.ts).
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import type { Operator } from "../shapes/enums.js";
import { PolicyAction, PolicyEffect, PolicyFeature, PolicyLevel, QpTier, InferenceRisk } from "../shapes/policy-enums.js";
import type { Condition, PageBy } from "../shapes/shapes.js";
import { resolvePath } from "../resolve/resolve-path.js";
import { Placements } from "./placements.js";
import type { EntityModel } from "../model/entity-model.js";
import type { PlanAdditions, PrivateGroupRelease } from "./plan-pass.js";
import type { Decision } from "../decisions/decide.js";
import type { DecisionTable } from "../decisions/decision-table.js";
import { type TransformChain, ruleMaskChain, transformChainOf } from "../transform/field-transforms.js";
import { checkAliasCollisions, classPolicyOf } from "../decisions/entity-policy.js";
import type { QpPolicyOptions } from "../decisions/options.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import { type PolicyMember, type Reference, navigationDepth } from "../decisions/references.js";
import { referenceCost } from "../decisions/cost.js";
import type { PolicyTrace } from "../shapes/policy-trace.js";
import type { QpAuditEvent } from "../decisions/audit.js";
import { type PolicyDiagnostic, auditEventsOf, traceEntryOf } from "./diagnostics.js";
import type { RenameTree } from "./renames.js";
import { type TransformTree, addTransform, checkChainNeeds } from "../transform/apply.js";
import { checkEntityTransforms } from "../decisions/entity-checks.js";
import { type TransformStep, headlineStep, transformSteps } from "./transform-actions.js";
import { type InferenceGuard, inferenceGuardOf } from "../decisions/inference.js";
import { navigationScopes, refusedNavigation } from "../decisions/tenant-navigation.js";
import type { GuessedColumn, PrivateAggregate, SanitizeResult } from "./sanitize-result.js";

/** The code a denied use is refused with, per feature. */
const deniedCode: Record<number, PolicyErrorCode> = {
  [PolicyFeature.Where]: PolicyErrorCode.FieldDeniedForWhere,
  [PolicyFeature.Select]: PolicyErrorCode.FieldDeniedForSelect,
  [PolicyFeature.Order]: PolicyErrorCode.FieldDeniedForOrder,
  [PolicyFeature.Group]: PolicyErrorCode.FieldDeniedForGroup,
  [PolicyFeature.Aggregate]: PolicyErrorCode.FieldDeniedForAggregate,
  [PolicyFeature.Segment]: PolicyErrorCode.FieldDeniedForSegment,
};

/** The code a use of a field private for the caller is refused with (#45, privacy-channels.ts), per feature. */
const privateChannelCode: Record<number, PolicyErrorCode> = {
  [PolicyFeature.Where]: PolicyErrorCode.PrivateFieldDeniedForWhere,
  [PolicyFeature.Segment]: PolicyErrorCode.PrivateFieldDeniedForWhere,
  [PolicyFeature.Order]: PolicyErrorCode.PrivateFieldDeniedForOrder,
  [PolicyFeature.Group]: PolicyErrorCode.PrivateFieldDeniedForGroup,
};

/** The trace's reason on a use that relies on an inference risk its field accepts. */
const accepted = (guard: InferenceGuard, risk: InferenceRisk) => (guard.accepted.has(risk) ? `inference risk accepted: ${risk} (${guard.source})` : undefined);

export class Sanitizer {
  // The state below is read and written by the clause files (sanitize-*.ts) as they decide.
  /** Every decision, in order: the trace and the audit events are derived from it (diagnostics.ts). */
  readonly diagnostics: PolicyDiagnostic[] = [];
  cost = 0;
  conditionCount = 0;
  forcedCount = 0;
  readonly placements = new Placements();
  /** The real path of each caller condition's field (required conditions are looked for among them). */
  readonly canonicalFields = new Map<Condition, string>();
  /** Set when a decision read values (an In list's length, a range's boundaries): the result is not reusable for other values. */
  readValues = false;
  /** Guesses per protected field so far, across the whole request (countGuesses). */
  readonly guesses = new Map<string, number>();
  /** The same per stored column (guessedColumns). */
  readonly guessedColumns = new Map<string, GuessedColumn>();
  /** Each condition that tested values of a protected field: a floored Summary refuses them (refuseGuessesUnderFloor). */
  readonly guessingConditions: { field: string; where: string; feature: string; guard: InferenceGuard; operator: Operator }[] = [];
  /** The page a guard injects when the request has none. */
  injectedPage: PageBy | null = null;
  /** The count mode the entity's counting gives a page that names none (sanitize-page.ts). */
  countDefault: PlanAdditions["countDefault"] = null;
  /** The forced conditions, once injected (the same for every Segment set). */
  forcedConditions: readonly Condition[] = [];
  renames: RenameTree = new Map();
  transforms: TransformTree = new Map();
  /** The keys a typed result may add below the root (grantKeys), by keyPathOf. */
  readonly selectKeys = new Set<string>();
  /** Key paths already decided by grantKeys (granted or not). */
  readonly decidedKeys = new Set<string>();
  /** The group floor of a Summary: caps.minGroupSize, raised by transformed fields it touches. */
  floor: number;
  /** A Summary's Sumation and Average of a private field, by alias: clamped to its bounds (#45, plan-pass.ts). */
  readonly privateClamps = new Map<string, { lower: number; upper: number }>();
  /** A Summary's aggregates of private fields, by alias: noised and charged (#45). */
  readonly privateAggregates = new Map<string, PrivateAggregate>();

  constructor(
    readonly options: QpPolicyOptions,
    readonly context: QpPolicyContext,
    readonly root: EntityModel,
    readonly decisions: DecisionTable,
  ) {
    this.floor = options.caps.minGroupSize;
    checkAliasCollisions(classPolicyOf(root.target), root.scope);
    checkEntityTransforms(root); // and every entity a path can reach from it
  }

  /**
   * The chain a member's values go through on output: a rule's mask when a rule decided Mask,
   * none when a rule lifted an overridable transformation, else the decorators' chain.
   */
  private chainOf(member: PolicyMember): TransformChain | null {
    const chain = outputChainOf(member, this.decision(member, PolicyFeature.Select));
    if (chain) checkChainNeeds(chain, { hashSalt: this.options.hashSalt, vault: this.options.tokenVault });
    return chain;
  }

  noteTransform(path: readonly string[], member: PolicyMember): void {
    const chain = this.chainOf(member);
    if (chain) addTransform(this.transforms, path, chain);
  }

  /** Grouping or aggregating a transformed field reads stored values: only with allowAggregate. */
  aggregatable(ref: Reference, where: string, feature: string): TransformChain | null {
    const chain = this.chainOf(ref.end);
    if (!chain) return null;
    if (!chain.allowAggregate) {
      const why = `${ref.publicPath} is transformed after the query runs (${chain.source}); `
        + `its stored values cannot be used for ${feature} unless the decorator says allowAggregate`;
      this.refuse(PolicyErrorCode.TransformRequiresMaterialization, why, where, ref.publicPath, feature, { level: null, source: chain.source });
    }
    if (chain.minGroupSize !== null) this.floor = Math.max(this.floor, chain.minGroupSize);
    return chain;
  }

  get dryRun() {
    return this.options.dryRun;
  }

  record(
    field: string, feature: string, action: PolicyAction, decision: Pick<Decision, "level" | "source"> | null,
    enforced = true, reason?: string, member?: PolicyMember, transforms?: readonly TransformStep[],
  ) {
    this.diagnostics.push({
      field, feature, action, level: decision?.level ?? null, source: decision?.source ?? "policy", enforced,
      ...(reason ? { reason } : {}), ...(transforms ? { transforms } : {}), ...(member ? { member } : {}),
    });
  }

  /** A selected member's entry: Allowed, Masked by a rule's mask, or what its decorator chain does (Defaulted, Masked, Generalized, Mutated). */
  recordSelect(field: string, member: PolicyMember, decision: Decision): void {
    const steps = decision.effect === PolicyEffect.Mask && !decision.mask && member.policy ? transformSteps(member.policy) : [];
    const headline = headlineStep(steps);
    if (headline) this.record(field, "Select", headline.action, headline, true, undefined, member, steps);
    else this.record(field, "Select", decision.effect === PolicyEffect.Mask ? PolicyAction.Masked : PolicyAction.Allowed, decision, true, undefined, member);
  }

  /** Drops a dry run still enforces (scoped navigations): all selects gone is still an error. */
  enforcedDrops = 0;

  /** The audit events of the decisions so far (a cached plan replays them; a refused request's are rebuilt from them). */
  auditEvents(): QpAuditEvent[] {
    return auditEventsOf(this.diagnostics, this.options.entities.nameOf(this.root.target) ?? this.root.name, this.context.subjects);
  }

  /**
   * Throws, or in dry run records what would have been refused and goes on. `always` refusals
   * protect rows, not fields (a navigation out of a tenant scope): a dry run enforces them too.
   */
  refuse(
    code: PolicyErrorCode, message: string, where: string, field: string, feature: string, decision: Pick<Decision, "level" | "source"> | null, always = false, member?: PolicyMember,
  ): void {
    if (this.dryRun && !always) return this.record(field, feature, PolicyAction.Denied, decision, false, message, member);
    this.record(field, feature, PolicyAction.Denied, decision, true, message, member);
    policyError(code, message, where);
  }

  /**
   * Rows of an entity scoped by QpForceWhere are reachable only as the root of a query, where the
   * forced predicate wraps the request: a path that navigates into such an entity is denied (its
   * rows would escape the scope), unless each hop into one is proven tenant-safe.
   */
  private scopedNavigation(ref: Reference, feature: PolicyFeature): Decision | null {
    // A proven hop (tenant-navigation.ts) gets the target's forced predicates (additions.navigation)
    // and the path is decided like any other.
    const reason = refusedNavigation(ref.path, this.provenNavigations);
    return reason === null ? null : { feature, effect: PolicyEffect.Deny, level: PolicyLevel.SealedAttribute, source: reason, overridden: [] };
  }

  /** The scoped entities a proven navigation enters (tenant-navigation.ts), with their models. */
  readonly provenNavigations = new Map<Function, EntityModel>();

  decision(member: PolicyMember, feature: PolicyFeature): Decision {
    return this.decisions.decide(member, feature);
  }

  /**
   * The Select decision on a member, Deny when the field is private for the caller (#45: its
   * values are what privacy hides), whatever the features decide: an explicit select (allow), the
   * default projection and a whole object's columns (sanitize-selects.ts) and the keys a typed
   * result adds all read it, so no path reads a private value into a row.
   */
  selectDecision(member: PolicyMember, decided: Decision = this.decision(member, PolicyFeature.Select)): Decision {
    const privacy = this.decisions.privacy(member);
    if (!privacy || decided.effect === PolicyEffect.Deny) return decided;
    return { feature: PolicyFeature.Select, effect: PolicyEffect.Deny, level: privacy.level, source: privacy.source, overridden: [] };
  }

  checkReference(ref: Reference, where: string): void {
    if (navigationDepth(ref) > this.options.caps.maxNavigationDepth) {
      const why = `"${ref.publicPath}" crosses ${navigationDepth(ref)} navigations; MaxNavigationDepth is ${this.options.caps.maxNavigationDepth}`;
      this.refuse(PolicyErrorCode.CapExceeded, why, where, ref.publicPath, "Query", null);
    }
    this.cost += referenceCost(ref, this.options.caps);
  }

  /** Allowed (possibly masked) → true; denied → throw, or false when the blocked action drops it. */
  allow(ref: Reference | { publicPath: string; end: PolicyMember }, feature: PolicyFeature, where: string, drops: boolean): boolean {
    const scoped = "path" in ref ? this.scopedNavigation(ref, feature) : null;
    let decision = scoped ?? this.decision(ref.end, feature);
    const name = PolicyFeature[feature];
    // A field private for the caller (#45): refused in a condition, key or order whatever the
    // features decide (each would answer for single values exactly), and not selectable.
    const privacy = this.decisions.privacy(ref.end);
    if (privacy && privateChannelCode[feature] !== undefined) {
      const use = feature === PolicyFeature.Segment ? "a Segment's conditions" : feature === PolicyFeature.Where ? "a condition" : `${name}`;
      this.refuse(privateChannelCode[feature]!, `${ref.publicPath} is private for this caller (${privacy.source}): it cannot be used in ${use}; only Count, CountDistinct, Sumation and Average of it are answered`,
        where, ref.publicPath, name, privacy, false, ref.end);
      return true; // a dry run goes on, as after any refusal it records
    }
    if (feature === PolicyFeature.Select) decision = this.selectDecision(ref.end, decision);
    // Ordering by a field the caller sees transformed ranks its stored values (decisions/inference.ts).
    const guard = feature === PolicyFeature.Order && decision.effect !== PolicyEffect.Deny ? this.guardOf(ref.end) : null;
    if (guard && !guard.orderable) decision = { feature, effect: PolicyEffect.Deny, level: null, source: guard.source, overridden: [] };
    if (decision.effect !== PolicyEffect.Deny) {
      if (feature === PolicyFeature.Select) this.recordSelect(ref.publicPath, ref.end, decision);
      else this.record(ref.publicPath, name, decision.effect === PolicyEffect.Mask ? PolicyAction.Masked : PolicyAction.Allowed, decision, true, guard ? accepted(guard, InferenceRisk.Order) : undefined, ref.end);
      return true;
    }
    const message = `${ref.publicPath} may not be used for ${name} (${decision.source})`;
    const enforced = !this.dryRun || scoped !== null;
    if (drops && this.options.tier === QpTier.Convenience) {
      this.record(ref.publicPath, name, PolicyAction.Dropped, decision, enforced, message, ref.end);
      if (enforced) this.enforcedDrops++;
      return !enforced;
    }
    this.refuse(deniedCode[feature]!, message, where, ref.publicPath, name, decision, scoped !== null, ref.end);
    return true;
  }

  /** The inference guard of a member for this caller (decisions/inference.ts), or null: protection off, or shown as stored. */
  guardOf(member: PolicyMember): InferenceGuard | null {
    if (!this.options.inferenceProtection) return null;
    return inferenceGuardOf(this.options, member, outputChainOf(member, this.decision(member, PolicyFeature.Select)));
  }

  /** Traces a use that relies on an inference risk the field's decorator accepts. */
  noteAccepted(field: string, feature: string, guard: InferenceGuard, risk: InferenceRisk, relied: boolean): void {
    if (relied && guard.accepted.has(risk)) this.record(field, feature, PolicyAction.Allowed, { level: null, source: guard.source }, true, accepted(guard, risk));
  }

  // ---- request-wide -----------------------------------------------------------------------

  /**
   * The request-wide checks, then the result. Value formats and DataType/operator pairs are not
   * checked here: the plan, built once from the parsed request through the placements, checks them after the policy
   * (the order of checks under a guard: the shape itself, then the policy on every field
   * reference, "so that a denied field is reported as denied whatever else is wrong with its
   * condition and a caller learns nothing about its type", then values), and names each
   * condition where the caller put it, since the forced predicates are not in the request.
   */
  finish(getQueryString: boolean, projection: readonly string[] | null | undefined, keyRenames: ReadonlyMap<string, string> = new Map(), floor = 1, privateRelease?: PrivateGroupRelease): SanitizeResult {
    const caps = this.options.caps;
    if (this.conditionCount > caps.maxConditions) {
      this.refuse(PolicyErrorCode.CapExceeded, `${this.conditionCount} conditions; MaxConditions is ${caps.maxConditions}`, "conditionGroup", "conditions", "Query", null);
    }
    if (this.cost > caps.maxQueryCost) this.refuse(PolicyErrorCode.QueryCostExceeded, `the query costs ${this.cost}; MaxQueryCost is ${caps.maxQueryCost}`, "", "query", "Query", null);
    if (getQueryString && (this.options.tier === QpTier.Strict || this.forcedCount > 0)) {
      const why = this.forcedCount > 0 ? "the SQL would show the values of forced predicates" : "the Strict tier never returns SQL";
      this.refuse(PolicyErrorCode.QueryStringDenied, why, "getQueryString", "queryString", "Query", null);
    }
    const trace: PolicyTrace = { tier: this.options.tier, dryRun: this.dryRun, snapshotVersion: this.decisions.rules.version, cost: this.cost, entries: this.diagnostics.map(traceEntryOf) };
    const additions: PlanAdditions = {
      forced: this.forcedConditions, floor, page: this.injectedPage, navigation: navigationScopes(this.provenNavigations, this.context.values),
      // The kept columns are real paths (resolved by property names, as decided above).
      projection: projection === undefined ? undefined : projection && projection.map((path) => resolvePath(this.root, path, "selects")),
      selectKeys: this.selectKeys,
      ...(this.countDefault ? { countDefault: this.countDefault } : {}),
      ...(this.privateClamps.size ? { clamps: this.privateClamps } : {}),
      ...(this.privateAggregates.size ? { privateCount: true } : {}),
      ...(privateRelease ? { privateRelease } : {}),
    };
    return { placements: this.placements, trace, renames: this.renames, keyRenames, transforms: this.transforms, additions, readValues: this.readValues, guesses: this.guesses, guessedColumns: this.guessedColumns, privateAggregates: this.privateAggregates };
  }
}

/** The output chain of a member given its Select decision (see Sanitizer.chainOf); the schema uses it too. */
export function outputChainOf(member: PolicyMember, decision: Decision): TransformChain | null {
  if (decision.effect === PolicyEffect.Mask && decision.mask) return ruleMaskChain(decision.mask, member, decision.source);
  if (decision.effect === PolicyEffect.Allow && decision.level !== null && decision.level < PolicyLevel.OverridableAttribute) return null;
  return transformChainOf(member.policy, member.member.kind === "column" ? member.member.fieldKind : null);
}
