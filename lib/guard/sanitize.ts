// Sanitizing a parsed request under a guard, before any SQL is built: every field reference is
// resolved alias-aware and decided per feature; denied ones throw or are dropped by the
// blocked-action table; required predicates, caps and the cost budget are checked. The output is
// no new request: it is what was resolved and decided at each place of the caller's request
// (placements.ts), from which the plan is built once, what the policy adds to that plan (forced
// predicates, the group floor, the page and the projection: plan-pass.ts) and the
// diagnostics its trace and audit events come from.
import { Codes, fail, summaryOrderField } from "../errors/codes.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { Connector, DataType, Operator } from "../shapes/enums.js";
import { largestCountAdmitted, operators as operatorTable } from "../shapes/operator-table.js";
import { PolicyAction, PolicyEffect, PolicyFeature, PolicyLevel, QpTier } from "../shapes/policy-enums.js";
import type { AggregateBy, Condition, ConditionGroup, Filter, OrderBy, PageBy, Segment, Summary } from "../shapes/shapes.js";
import { resolvePath } from "../resolve/resolve-path.js";
import { Placements } from "./placements.js";
import { type EntityModel, type MemberScope, columnPathsOf } from "../model/entity-model.js";
import { dataTypeOfKind } from "../model/field-kind.js";
import { groupKeyName } from "../plan/build-summary.js";
import { bySort } from "../validate/shape-checks.js";
import type { PlanAdditions } from "./plan-pass.js";
import { checkFilterShape, checkSegmentShape, checkSummaryShape } from "../validate/shape-checks.js";
import type { Decision } from "../decisions/decide.js";
import type { DecisionTable } from "../decisions/decision-table.js";
import { ruleMaskChain } from "../transform/field-transforms.js";
import { checkAliasCollisions, classPolicyOf, describeSource, operatorsAllowedBy } from "../decisions/entity-policy.js";
import type { QpPolicyOptions } from "../decisions/options.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import { type PolicyMember, type Reference, navigationDepth, policyMember, reference } from "../decisions/references.js";
import { referenceCost } from "../decisions/cost.js";
import type { PolicyTrace } from "./trace.js";
import type { QpAuditEvent } from "../decisions/audit.js";
import { type PolicyDiagnostic, auditEventsOf, traceEntryOf } from "./diagnostics.js";
import { type RenameTree, addRename } from "./renames.js";
import { type TransformChain, transformChainOf } from "../transform/field-transforms.js";
import { type TransformTree, addTransform, checkChainNeeds } from "../transform/apply.js";
import { checkEntityTransforms } from "../decisions/entity-checks.js";
import { type TransformStep, headlineStep, transformSteps } from "./transform-actions.js";
import { Aggregator } from "../shapes/enums.js";
import { summaryOrderTarget } from "./summary-order-target.js";
import { type InferenceGuard, equalityOperators, guessOperators, guessesOf, inferenceGuardOf, onBoundary, rangeOperators } from "../decisions/inference.js";
import { toToken } from "../resolve/coerce-values.js";
import { InferenceRisk } from "../shapes/policy-enums.js";
import { navigationScopes, refusedNavigation } from "../decisions/tenant-navigation.js";
import type { Hop } from "../resolve/resolved-path.js";
import { keyPathOf } from "../plan/projection.js";


const deniedCode: Record<number, PolicyErrorCode> = {
  [PolicyFeature.Where]: PolicyErrorCode.FieldDeniedForWhere,
  [PolicyFeature.Select]: PolicyErrorCode.FieldDeniedForSelect,
  [PolicyFeature.Order]: PolicyErrorCode.FieldDeniedForOrder,
  [PolicyFeature.Group]: PolicyErrorCode.FieldDeniedForGroup,
  [PolicyFeature.Aggregate]: PolicyErrorCode.FieldDeniedForAggregate,
  [PolicyFeature.Segment]: PolicyErrorCode.FieldDeniedForSegment,
};

/** Operators that pin a field to given values: what satisfies QpRequireWhere by default. */
const pinningOperators = Object.values(Operator).filter((op) => operatorTable[op].pinsValue);


export interface SanitizeResult {
  /** What was resolved and decided at each place of the caller's request: the plan is built through it. */
  readonly placements: Placements;
  readonly trace: PolicyTrace;
  /** Real → public names for the members returned. */
  readonly renames: RenameTree;
  /** Summary output keys: real key name → public key name. */
  readonly keyRenames: ReadonlyMap<string, string>;
  /** Where transformed members sit in the result (real names). */
  readonly transforms: TransformTree;
  /** What the policy adds to the request's plan (transformPlan): forced predicates, the group floor, the page and the projection. */
  readonly additions: PlanAdditions;
  /**
   * Whether a decision read a condition's values (inference protection's In caps and range
   * boundaries): such decisions hold for this request only, never for its shape (sanitized-shapes.ts).
   */
  readonly readValues: boolean;
  /**
   * Inference protection's guesses: per protected field (its public path from the root), how
   * many values this request tests against it (guessCountsOf in inference.ts says what counts).
   * Empty when protection is off or no condition tests a protected field.
   */
  readonly guesses: ReadonlyMap<string, number>;
  /**
   * The same guesses per stored column ("Entity.member", public names of the member's owning
   * entity and the member), whatever path reached it: what a guess budget charges, so a column
   * reached from two roots or by two paths is one allowance across requests.
   */
  readonly guessedColumns: ReadonlyMap<string, GuessedColumn>;
}

/** A stored column a request tests values of, and how many (SanitizeResult.guessedColumns). */
export interface GuessedColumn {
  readonly entity: string;
  readonly field: string;
  readonly count: number;
}

export class Sanitizer {
  /** Every decision, in order: the trace and the audit events are derived from it (diagnostics.ts). */
  private readonly diagnostics: PolicyDiagnostic[] = [];
  private cost = 0;
  private conditionCount = 0;
  private forcedCount = 0;
  readonly placements = new Placements();
  /** The real path of each caller condition's field (required conditions are looked for among them). */
  private readonly canonicalFields = new Map<Condition, string>();
  /** Set when a decision read values (an In list's length, a range's boundaries): the result is not reusable for other values. */
  private readValues = false;
  /** Guesses per protected field so far, across the whole request (countGuesses). */
  private readonly guesses = new Map<string, number>();
  /** The same per stored column (guessedColumns). */
  private readonly guessedColumns = new Map<string, GuessedColumn>();
  /** Each condition that tested values of a protected field: a floored Summary refuses them (refuseGuessesUnderFloor). */
  private readonly guessingConditions: { field: string; where: string; feature: string; guard: InferenceGuard; operator: Operator }[] = [];
  /** The page a guard injects when the request has none. */
  private injectedPage: PageBy | null = null;
  /** The forced conditions, once injected (the same for every Segment set). */
  private forcedConditions: readonly Condition[] = [];
  renames: RenameTree = new Map();
  transforms: TransformTree = new Map();
  /** The keys a typed result may add below the root (grantKeys), by keyPathOf. */
  private readonly selectKeys = new Set<string>();
  /** Key paths already decided by grantKeys (granted or not). */
  private readonly decidedKeys = new Set<string>();
  /** The group floor of a Summary: caps.minGroupSize, raised by transformed fields it touches. */
  floor: number;

  constructor(
    private readonly options: QpPolicyOptions,
    private readonly context: QpPolicyContext,
    private readonly root: EntityModel,
    private readonly decisions: DecisionTable,
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

  private noteTransform(path: readonly string[], member: PolicyMember): void {
    const chain = this.chainOf(member);
    if (chain) addTransform(this.transforms, path, chain);
  }

  /** Grouping or aggregating a transformed field reads stored values: only with allowAggregate. */
  private aggregatable(ref: Reference, where: string, feature: string): TransformChain | null {
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

  private get dryRun() {
    return this.options.dryRun;
  }

  private record(
    field: string, feature: string, action: PolicyAction, decision: Pick<Decision, "level" | "source"> | null,
    enforced = true, reason?: string, member?: PolicyMember, transforms?: readonly TransformStep[],
  ) {
    this.diagnostics.push({
      field, feature, action, level: decision?.level ?? null, source: decision?.source ?? "policy", enforced,
      ...(reason ? { reason } : {}), ...(transforms ? { transforms } : {}), ...(member ? { member } : {}),
    });
  }

  /** A selected member's entry: Allowed, Masked by a rule's mask, or what its decorator chain does (Defaulted, Masked, Generalized, Mutated). */
  private recordSelect(field: string, member: PolicyMember, decision: Decision): void {
    const steps = decision.effect === PolicyEffect.Mask && !decision.mask && member.policy ? transformSteps(member.policy) : [];
    const headline = headlineStep(steps);
    if (headline) this.record(field, "Select", headline.action, headline, true, undefined, member, steps);
    else this.record(field, "Select", decision.effect === PolicyEffect.Mask ? PolicyAction.Masked : PolicyAction.Allowed, decision, true, undefined, member);
  }

  /** Drops a dry run still enforces (scoped navigations): all selects gone is still an error. */
  private enforcedDrops = 0;

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
  private readonly provenNavigations = new Map<Function, EntityModel>();

  decision(member: PolicyMember, feature: PolicyFeature): Decision {
    return this.decisions.decide(member, feature);
  }

  private checkReference(ref: Reference, where: string): void {
    if (navigationDepth(ref) > this.options.caps.maxNavigationDepth) {
      const why = `"${ref.publicPath}" crosses ${navigationDepth(ref)} navigations; MaxNavigationDepth is ${this.options.caps.maxNavigationDepth}`;
      this.refuse(PolicyErrorCode.CapExceeded, why, where, ref.publicPath, "Query", null);
    }
    this.cost += referenceCost(ref, this.options.caps);
  }

  /** Allowed (possibly masked) → true; denied → throw, or false when the blocked action drops it. */
  private allow(ref: Reference | { publicPath: string; end: PolicyMember }, feature: PolicyFeature, where: string, drops: boolean): boolean {
    const scoped = "path" in ref ? this.scopedNavigation(ref, feature) : null;
    let decision = scoped ?? this.decision(ref.end, feature);
    const name = PolicyFeature[feature];
    // Ordering by a field the caller sees transformed ranks its stored values (inference.ts).
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

  // ---- conditions -------------------------------------------------------------------------

  group(group: ConditionGroup, where: string, inSegment: boolean): void {
    group.conditions.forEach((c, i) => this.condition(c, `${where}.conditions[${i}]`, inSegment));
    group.subConditionGroups.forEach((g, i) => this.group(g, `${where}.subConditionGroups[${i}]`, inSegment));
  }

  private condition(condition: Condition, where: string, inSegment: boolean): void {
    this.conditionCount++;
    const ref = reference(this.root, condition.field, `${where}.field`);
    if (inSegment) this.allow(ref, PolicyFeature.Segment, `${where}.field`, false);
    this.allow(ref, PolicyFeature.Where, `${where}.field`, false);
    for (const attribute of ref.end.policy?.attributes ?? []) {
      if (attribute.kind !== "operators") continue;
      const allowed = operatorsAllowedBy(attribute);
      if (!allowed.includes(condition.operator)) {
        this.refuse(PolicyErrorCode.OperatorNotAllowed, `${condition.operator} is not allowed on ${ref.publicPath}; allowed: ${allowed.join(", ")}`, `${where}.operator`, ref.publicPath, "Where",
          { level: attribute.overridable ? PolicyLevel.OverridableAttribute : PolicyLevel.SealedAttribute, source: describeSource(attribute, ref.end.policy!) });
      }
    }
    const guard = this.guardOf(ref.end);
    if (guard) this.protectedCondition(guard, ref.publicPath, condition, where, "Where", ref.end);
    this.checkReference(ref, `${where}.field`);
    this.placements.place(`${where}.field`, ref);
    this.canonicalFields.set(condition, ref.canonical);
  }

  /** The inference guard of a member for this caller (inference.ts), or null: protection off, or shown as stored. */
  private guardOf(member: PolicyMember): InferenceGuard | null {
    if (!this.options.inferenceProtection) return null;
    return inferenceGuardOf(this.options, member, outputChainOf(member, this.decision(member, PolicyFeature.Select)));
  }

  /**
   * A condition (or a Having condition on a transformed extreme) on a field the caller sees
   * transformed: equality operators only, a short In list, ranges on boundaries (inference.ts).
   * A use that relies on a risk the field accepts is traced as such.
   */
  private protectedCondition(guard: InferenceGuard, field: string, condition: Condition, where: string, feature: string, member: PolicyMember): void {
    const decision = { level: null, source: guard.source };
    const { operator, values } = condition;
    if (guard.operators && !guard.operators.includes(operator)) {
      const why = `${operator} is not allowed on ${field}: it is shown transformed and inference protection allows ${guard.operators.join(", ")}`;
      this.refuse(PolicyErrorCode.OperatorNotAllowed, why, `${where}.operator`, field, feature, decision);
    } else if (!guard.operators) this.noteAccepted(field, feature, guard, InferenceRisk.Operators, !equalityOperators.includes(operator));
    if (operatorTable[operator].listValued) this.readValues = true; // the list's length counts
    this.countGuesses(guard, field, condition, where, feature, member);
    if (!rangeOperators.includes(operator)) return;
    if (guard.boundaries) {
      this.readValues = true; // the range's values
      values.forEach((value, i) => {
        if (onBoundary(toToken(value), condition.dataType, guard.boundaries!) !== false) return;
        const why = `${field} ${operator} ${toToken(value)}: ${field} is shown generalized, so a range on it must use its boundaries (${guard.boundaryText})`;
        this.refuse(PolicyErrorCode.RangeOffBoundary, why, `${where}.values[${i}]`, field, feature, decision);
      });
    } else this.noteAccepted(field, feature, guard, InferenceRisk.OffBoundaryRange, true);
  }

  /**
   * Inference protection counts guesses per request, not per list (#42): every value this
   * condition tests against the protected field (guessesOf) adds to one allowance per field for
   * the whole request, Or branches, sub-groups, Segment sets, Summary Where and Having included;
   * MaxProtectedInValues is that allowance. The condition that goes over it is CapExceeded.
   * Equal counts are fixed by the request's shape; an In list's length is not, and it already
   * marks the result readValues, so a shape reused from the cache never skips this count.
   */
  private countGuesses(guard: InferenceGuard, field: string, condition: Condition, where: string, feature: string, member: PolicyMember): void {
    const count = guessesOf(condition.operator, condition.values.length);
    if (count === 0) return;
    this.guesses.set(field, (this.guesses.get(field) ?? 0) + count);
    // The allowance is per stored column, whatever path reached it: two paths to one column (a
    // navigation there and back, such as orders.customer.contact.email beside contact.email) are
    // one allowance, not two.
    const entity = this.options.entities.nameOf(member.owner) ?? member.owner.name;
    const column = `${entity}.${member.publicName}`;
    const total = (this.guessedColumns.get(column)?.count ?? 0) + count;
    this.guessedColumns.set(column, { entity, field: member.publicName, count: total });
    this.guessingConditions.push({ field, where, feature, guard, operator: condition.operator });
    const allowance = guard.maxInValues;
    if (allowance !== null && total > allowance) {
      const why = `${total} values tested against ${field} (column ${column}, by any path) in one request (this ${condition.operator} brings ${count}); MaxProtectedInValues is ${allowance}, `
        + `an allowance per protected column and request (inference protection: ${field} is shown transformed)`;
      this.refuse(PolicyErrorCode.CapExceeded, why, `${where}.values`, field, feature, { level: null, source: guard.source });
    } else this.noteAccepted(field, feature, guard, InferenceRisk.LongInList, allowance === null && total > this.options.caps.maxProtectedInValues);
  }

  /**
   * A Summary under a group floor above 1 promises groups of at least `floor` rows, but a caller
   * who tests a protected field's values in its Where (or in a Having on its extreme) can meet the
   * floor with padding rows of its own choosing (Or id In (p1, p2)) and learn from whether the
   * group appears whether one row matched its guess (#42). Such tests are refused there unless the
   * field accepts InferenceRisk.SummaryGuess; ranges on a generalization's boundaries and
   * IsNull/IsNotNull stay (they reveal no finer than what is shown).
   */
  refuseGuessesUnderFloor(floor: number): void {
    for (const use of this.guessingConditions) {
      if (!guessOperators.includes(use.operator)) continue;
      if (use.guard.accepted.has(InferenceRisk.SummaryGuess)) {
        this.noteAccepted(use.field, use.feature, use.guard, InferenceRisk.SummaryGuess, true);
        continue;
      }
      const why = `${use.field} ${use.operator} in a Summary: ${use.field} is shown transformed and the group floor (${floor}) can be met with rows the request chooses, `
        + `so whether a group appears would confirm a guess (inference protection)`;
      const code = use.feature === "Where" ? PolicyErrorCode.FieldDeniedForWhere : PolicyErrorCode.FieldDeniedForAggregate;
      this.refuse(code, why, `${use.where}.operator`, use.field, use.feature, { level: null, source: use.guard.source });
    }
  }

  /** Traces a use that relies on an inference risk the field's decorator accepts. */
  private noteAccepted(field: string, feature: string, guard: InferenceGuard, risk: InferenceRisk, relied: boolean): void {
    if (relied && guard.accepted.has(risk)) this.record(field, feature, PolicyAction.Allowed, { level: null, source: guard.source }, true, accepted(guard, risk));
  }

  /** Conditions that must hold for a row to match (no Or with more than one branch above them), with their paths. */
  private mandatory(group: ConditionGroup | null, where: string): [Condition, string][] {
    if (!group) return [];
    const branches = group.conditions.length + group.subConditionGroups.length;
    if (group.connector === Connector.Or && branches > 1) return [];
    return [
      ...group.conditions.map((c, i): [Condition, string] => [c, `${where}.conditions[${i}]`]),
      ...group.subConditionGroups.flatMap((g, i) => this.mandatory(g, `${where}.subConditionGroups[${i}]`)),
    ];
  }

  /**
   * QpRequireWhere: a mandatory condition on the field with a required operator, which must
   * narrow: a list of more than MaxRequiredInValues values satisfies nothing (CapExceeded at its
   * values), so listing every key does not stand for the filter.
   */
  required(group: ConditionGroup | null, where: string): void {
    const rootPolicy = classPolicyOf(this.root.target);
    const cap = this.options.caps.maxRequiredInValues;
    for (const member of rootPolicy.members.values()) {
      for (const attribute of member.attributes) {
        if (attribute.kind !== "requireWhere") continue;
        const operators = attribute.operators ?? pinningOperators;
        const candidates = this.mandatory(group, where).filter(([c]) => this.canonicalFields.get(c) === member.property && operators.includes(c.operator));
        if (candidates.some(([c]) => operatorTable[c.operator].listValued)) this.readValues = true; // the list's length
        const narrowing = candidates.find(([c]) => !operatorTable[c.operator].listValued || c.values.length <= cap);
        const publicName = member.alias ?? member.property;
        const decision = { level: attribute.overridable ? PolicyLevel.OverridableAttribute : PolicyLevel.SealedAttribute, source: describeSource(attribute, member) };
        if (narrowing) this.record(publicName, "Where", PolicyAction.Allowed, decision, true, "required condition present");
        else if (candidates.length > 0) {
          const [widest, path] = candidates[0]!;
          const why = `${widest.values.length} values in the ${widest.operator} list that stands for the filter ${publicName} requires; MaxRequiredInValues is ${cap}: a required filter must narrow`;
          this.refuse(PolicyErrorCode.CapExceeded, why, `${path}.values`, publicName, "Where", decision);
        } else this.refuse(PolicyErrorCode.RequiredFilterMissing, `a condition on ${publicName} with ${operators.join(", ")} is required, outside any Or`, where, publicName, "Where", decision);
      }
    }
  }

  /**
   * The forced conditions (QpForceWhere) of the root, traced as Injected where they apply (once
   * per Segment set); transformPlan puts them around the caller's predicate, never in a flat
   * merge. Dry run never relaxes them.
   */
  injectForced(): readonly Condition[] {
    const rootPolicy = classPolicyOf(this.root.target);
    const forced: Condition[] = [];
    for (const member of rootPolicy.members.values()) {
      for (const attribute of member.attributes) {
        if (attribute.kind !== "forceWhere") continue;
        const column = this.root.scope.find(member.property);
        if (!column || column === "ambiguous" || column.kind !== "column") fail(Codes.InvalidField, `QpForceWhere on ${this.root.name}.${member.property} needs a value column`);
        let value: unknown = attribute.value;
        if (attribute.contextValue !== undefined) {
          value = this.context.values.get(attribute.contextValue);
          if (value === undefined || value === null || value === "") {
            policyError(PolicyErrorCode.MissingContextValue, `the context has no value "${attribute.contextValue}" required by ${describeSource(attribute, member)}`);
          }
        }
        const values = Array.isArray(value) && operatorTable[attribute.operator].listValued ? value : [value];
        forced.push({ sort: forced.length + 1, field: member.property, dataType: dataTypeOfKind[column.fieldKind] ?? DataType.Text, operator: attribute.operator, values });
        this.forcedCount++;
        const level = attribute.overridable ? PolicyLevel.OverridableAttribute : PolicyLevel.SealedAttribute;
        this.record(member.alias ?? member.property, "Where", PolicyAction.Injected, { level, source: describeSource(attribute, member) });
      }
    }
    this.forcedConditions = forced;
    return forced;
  }

  // ---- orders, page, selects --------------------------------------------------------------

  orders(orders: readonly OrderBy[] | null | undefined): void {
    if (!orders) return;
    if (orders.length > this.options.caps.maxOrderFields) {
      this.refuse(PolicyErrorCode.CapExceeded, `${orders.length} order fields; MaxOrderFields is ${this.options.caps.maxOrderFields}`, "orders", "orders", "Order", null);
    }
    orders.forEach((order, i) => {
      const where = `orders[${i}].field`;
      const ref = reference(this.root, order.field, where);
      if (!this.allow(ref, PolicyFeature.Order, where, true)) return this.placements.drop(where);
      this.checkReference(ref, where);
      this.placements.place(where, ref);
    });
  }

  /** A guarded query always pages: without a page it reads page 1 of MaxPageSize rows. */
  page(page: PageBy | null | undefined): void {
    const max = this.options.caps.maxPageSize;
    if (!page) {
      this.record("page", "Page", PolicyAction.Injected, null, true, `page 1 of ${max}`);
      this.injectedPage = { pageNumber: 1, pageSize: max };
      return;
    }
    if (page.pageSize > max) this.refuse(PolicyErrorCode.CapExceeded, `pageSize ${page.pageSize} is above MaxPageSize ${max}`, "page.pageSize", "page", "Page", null);
  }

  /**
   * The columns the caller may read: a select list, or null for every column of the root, which
   * is what the default projection comes to when the policy leaves out none of them (the planner
   * then reads the whole root as an unguarded request does, without resolving each path again).
   */
  selects(selects: readonly string[] | null | undefined): string[] | null {
    const kept: string[] = [];
    if (!selects) {
      if (this.defaultProjection(kept)) return null;
    }
    else {
      selects.forEach((raw, i) => {
        const where = `selects[${i}]`;
        const ref = reference(this.root, raw, where);
        if (!this.allow(ref, PolicyFeature.Select, where, true)) return;
        this.checkReference(ref, where);
        const end = ref.end.member;
        if (end.kind === "column") {
          kept.push(ref.canonical);
          addRename(this.renames, [...ref.crossed, ref.end]);
          this.noteTransform(ref.canonical.split("."), ref.end);
          this.grantKeys(ref.path.hops, [...ref.crossed, ref.end]);
          return;
        }
        // A whole relation or embedded object: each of its columns on its own.
        const scope = end.kind === "embedded" ? end.scope : end.target().scope;
        const owner = end.kind === "embedded" ? end.target : end.target().target;
        const whole = ref.path.end;
        this.grantKeys(whole.kind === "relation" ? [...ref.path.hops, whole.hop] : ref.path.hops, [...ref.crossed, ref.end]);
        for (const column of columnsOf(scope, owner)) this.selectColumn(`${ref.canonical}.${column.path}`, [...ref.crossed, ref.end, ...column.members], kept, where);
      });
    }
    if (kept.length === 0 && (!this.dryRun || this.enforcedDrops > 0)) {
      policyError(PolicyErrorCode.AllSelectsDenied, "every requested select was dropped by the policy; the query does not fall back to other fields", "selects");
    }
    return kept;
  }

  /**
   * 2.1.5 §4.1: a typed result returns each object a select builds below the root with its key
   * (plan/projection.ts). Each such key is decided as a select of its own and added only where
   * the caller may select it as stored: allowed, with no transform (a masked or hashed key
   * would identify nothing; a denied one must not leak through the addition, dry run included).
   * It is not traced: the caller did not ask for it, and a dynamic row never carries it.
   * `members`: the policy members along `hops` (embeddeds included), ending on or past the last hop.
   */
  private grantKeys(hops: readonly Hop[], members: readonly PolicyMember[]): void {
    const relations = members.flatMap((m, i) => (m.member.kind === "reference" || m.member.kind === "collection" ? [i] : []));
    if (relations.length < hops.length) return; // not aligned: add nothing
    hops.forEach((hop, i) => {
      for (const key of hop.to.primaryKeys) {
        const path = keyPathOf(hops.slice(0, i + 1), key);
        if (this.decidedKeys.has(path)) continue;
        this.decidedKeys.add(path);
        const column = columnsOf(hop.to.scope, hop.to.target).find((c) => c.path === key.propertyPath);
        const member = column?.members[column.members.length - 1];
        if (!column || !member) continue;
        const decision = this.decision(member, PolicyFeature.Select);
        if (decision.effect !== PolicyEffect.Allow || outputChainOf(member, decision) !== null) continue;
        this.selectKeys.add(path);
        addRename(this.renames, [...members.slice(0, relations[i]! + 1), ...column.members]);
      }
    });
  }

  /**
   * Every root column the caller may select; the rest is left out. It depends only on the
   * decision table and the root, so it is worked out once per pair and replayed: the same
   * columns, diagnostics (so trace entries and audit events), renames and transforms. It runs
   * before anything else renames or transforms (checked), so those trees are its alone. True
   * when it kept every column of the root.
   */
  private defaultProjection(kept: string[]): boolean {
    const columnsOfRoot = columnsOf(this.root.scope, this.root.target);
    if (this.renames.size > 0 || this.transforms.size > 0) {
      for (const column of columnsOfRoot) this.selectColumn(column.path, column.members, kept, "selects");
      return kept.length === columnsOfRoot.length;
    }
    let byRoot = defaultProjections.get(this.decisions);
    if (!byRoot) defaultProjections.set(this.decisions, (byRoot = new WeakMap()));
    let known = byRoot.get(this.root);
    if (!known) {
      const decided = this.diagnostics.length;
      const columns: string[] = [];
      for (const column of columnsOfRoot) this.selectColumn(column.path, column.members, columns, "selects");
      known = { columns, diagnostics: this.diagnostics.slice(decided), renames: this.renames, transforms: this.transforms };
      byRoot.set(this.root, known);
    } else {
      this.diagnostics.push(...known.diagnostics);
      [this.renames, this.transforms] = [known.renames, known.transforms];
    }
    kept.push(...known.columns);
    return kept.length === columnsOfRoot.length;
  }

  private selectColumn(path: string, members: readonly PolicyMember[], kept: string[], where: string): void {
    const publicPath = members.map((m) => m.publicName).join(".");
    const end = members[members.length - 1]!;
    const decision = this.decision(end, PolicyFeature.Select);
    if (decision.effect === PolicyEffect.Deny) {
      this.record(publicPath, "Select", PolicyAction.Dropped, decision, !this.dryRun, `not selectable (${where} asked for the whole object)`, end);
      if (!this.dryRun) return;
    } else this.recordSelect(publicPath, end, decision);
    kept.push(path);
    addRename(this.renames, members);
    this.noteTransform(path.split("."), end);
  }

  // ---- summary ----------------------------------------------------------------------------

  groupFields(fields: readonly string[]): { keyRenames: Map<string, string>; publicKeys: string[]; refs: Reference[] } {
    const keyTransforms = this.transforms;
    const keyRenames = new Map<string, string>();
    const publicKeys: string[] = [];
    const refs: Reference[] = [];
    fields.forEach((raw, i) => {
      const where = `groupBy.fields[${i}]`;
      const ref = reference(this.root, raw, where);
      this.allow(ref, PolicyFeature.Group, where, false);
      this.checkReference(ref, where);
      this.placements.place(where, ref);
      const chain = this.aggregatable(ref, where, "Group");
      if (chain) addTransform(keyTransforms, [groupKeyName(ref.canonical)], chain);
      publicKeys.push(ref.publicPath);
      refs.push(ref);
      keyRenames.set(groupKeyName(ref.canonical), groupKeyName(ref.publicPath));
    });
    return { keyRenames, publicKeys, refs };
  }

  /**
   * A Summary order is a field reference like any other: a group key by its public name is an
   * Order use of that field; an aggregate alias is an Order use of the field it aggregates (a
   * Count reads no field: COUNT(*)); anything else, a real name behind an alias included, is unknown.
   */
  summaryOrders(orders: readonly OrderBy[], keys: { publicKeys: string[]; refs: Reference[] }, aggregates: readonly AggregateBy[]): void {
    if (orders.length > this.options.caps.maxOrderFields) {
      this.refuse(PolicyErrorCode.CapExceeded, `${orders.length} order fields; MaxOrderFields is ${this.options.caps.maxOrderFields}`, "orders", "orders", "Order", null);
    }
    orders.forEach((order, i) => {
      const where = `orders[${i}].field`;
      const target = summaryOrderTarget(order, keys.publicKeys, aggregates);
      // "empty": the plan reports the missing field; a key or an alias the plan matches by the caller's spelling.
      if (target.kind === "unknown") fail(summaryOrderField(order.field!), "order by a group field or an aggregate alias", where);
      const kept = target.kind === "empty" ? true
        : target.kind === "key" ? this.allow(keys.refs[target.index]!, PolicyFeature.Order, where, true)
          : target.field === null || this.allow(reference(this.root, target.field, where), PolicyFeature.Order, where, true);
      if (!kept) this.placements.drop(where);
    });
  }

  aggregates(aggregates: readonly AggregateBy[]): void {
    aggregates.forEach((a, i) => {
      if (a.field === null || a.field.trim() === "") return;
      const where = `groupBy.aggregateBy[${i}].field`;
      const ref = reference(this.root, a.field, where);
      this.allow(ref, PolicyFeature.Aggregate, where, false);
      this.checkReference(ref, where);
      this.placements.place(where, ref);
      const chain = this.aggregatable(ref, where, "Aggregate");
      const guard = sums.includes(a.aggregator) ? this.guardOf(ref.end) : null;
      if (guard && !guard.summable) {
        const why = `${a.aggregator} of ${ref.publicPath} is returned as computed from stored values, and ${ref.publicPath} is shown transformed: `
          + "two Summaries over groups that differ by one row would give that row's value (inference protection)";
        this.refuse(PolicyErrorCode.FieldDeniedForAggregate, why, where, ref.publicPath, "Aggregate", { level: null, source: guard.source }, false, ref.end);
      } else if (guard) this.noteAccepted(ref.publicPath, "Aggregate", guard, InferenceRisk.Aggregate, true);
      // An extreme of a transformed field is one of its values: it is transformed like them.
      if (chain && extremes.includes(a.aggregator) && a.alias) addTransform(this.transforms, [a.alias.trim()], chain);
    });
  }

  /**
   * Having on a transformed field's minimum, maximum, first or last (shown transformed) compares
   * its stored values: the field's inference guard applies to it as to a condition on the field.
   */
  protectedHaving(group: ConditionGroup | null | undefined, aggregates: readonly AggregateBy[], where = "having"): void {
    if (!group || !this.options.inferenceProtection) return;
    group.conditions.forEach((condition, i) => {
      const name = (condition.field ?? "").trim().toLowerCase();
      const aggregate = aggregates.find((a) => (a.alias ?? "").trim().toLowerCase() === name);
      if (!aggregate || !extremes.includes(aggregate.aggregator) || aggregate.field === null || aggregate.field.trim() === "") return;
      const ref = reference(this.root, aggregate.field, `groupBy.aggregateBy[${aggregates.indexOf(aggregate)}].field`);
      const guard = this.guardOf(ref.end);
      if (guard) this.protectedCondition(guard, ref.publicPath, condition, `${where}.conditions[${i}]`, "Aggregate", ref.end);
    });
    group.subConditionGroups.forEach((sub, i) => this.protectedHaving(sub, aggregates, `${where}.subConditionGroups[${i}]`));
  }

  /**
   * The group floor applies to this Summary: one entry, the same whether the floor withheld no
   * group, some or all of them (it runs in SQL; nothing here knows, and a count of withheld groups
   * would tell a caller about rows it may not see), so a result with `data: []` says why it may be empty.
   */
  recordFloor(): void {
    this.record("groupBy", "Group", PolicyAction.Injected, { level: null, source: "group floor (caps.minGroupSize, a decorator's minGroupSize)" }, true,
      "groups smaller than the group floor are withheld; totals and pages count only the groups returned");
  }

  /** A Having that asks only for groups below the floor: thrown, or traced in a dry run. */
  refuseGroupTooSmall(field: string, message: string): void {
    this.refuse(PolicyErrorCode.GroupTooSmall, message, "having", field, "Group", null);
  }

  countConditions(group: ConditionGroup | null | undefined): void {
    if (!group) return;
    this.conditionCount += group.conditions.length;
    group.subConditionGroups.forEach((g) => this.countConditions(g));
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
  finish(getQueryString: boolean, projection: readonly string[] | null | undefined, keyRenames: ReadonlyMap<string, string> = new Map(), floor = 1): SanitizeResult {
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
    };
    return { placements: this.placements, trace, renames: this.renames, keyRenames, transforms: this.transforms, additions, readValues: this.readValues, guesses: this.guesses, guessedColumns: this.guessedColumns };
  }
}

/** Aggregates returned as computed from stored values: inference protection refuses them on a field shown transformed. */
const sums: readonly Aggregator[] = [Aggregator.Sumation, Aggregator.Average];

/** Aggregates whose value is one of the field's values (shown transformed like them). */
const extremes: readonly Aggregator[] = [Aggregator.Minimum, Aggregator.Maximum, Aggregator.FirstOrDefault, Aggregator.LastOrDefault];

/** The trace's reason on a use that relies on an inference risk its field accepts. */
const accepted = (guard: InferenceGuard, risk: InferenceRisk) => (guard.accepted.has(risk) ? `inference risk accepted: ${risk} (${guard.source})` : undefined);

/** What the default projection did for a decision table and root (Sanitizer.defaultProjection). */
interface DefaultProjection {
  readonly columns: readonly string[];
  readonly diagnostics: readonly PolicyDiagnostic[];
  readonly renames: RenameTree;
  readonly transforms: TransformTree;
}
const defaultProjections = new WeakMap<DecisionTable, WeakMap<EntityModel, DefaultProjection>>();


/** Columns under a scope with the policy members on the way (embeddeds included). */
type ScopeColumn = { readonly path: string; readonly members: readonly PolicyMember[] };
const scopeColumns = new WeakMap<MemberScope, WeakMap<Function, readonly ScopeColumn[]>>();

/** Every column of a scope (embedded members flattened), once per scope and owner: the model is fixed. */
export function columnsOf(scope: MemberScope, owner: Function): readonly ScopeColumn[] {
  let byOwner = scopeColumns.get(scope);
  if (!byOwner) scopeColumns.set(scope, (byOwner = new WeakMap()));
  let columns = byOwner.get(owner);
  if (!columns) byOwner.set(owner, (columns = scopeColumnList(scope, owner)));
  return columns;
}

/** The columns of columnPathsOf with each step as a policy member (the embeddeds' owners on the way). */
function scopeColumnList(scope: MemberScope, owner: Function): ScopeColumn[] {
  return columnPathsOf(scope).map(({ path, steps }) => {
    let stepOwner = owner;
    const members = steps.map((step) => {
      const member = policyMember(stepOwner, step.scope, step.member);
      if (step.member.kind === "embedded") stepOwner = step.member.target;
      return member;
    });
    return { path, members };
  });
}

// ---- the three shapes ---------------------------------------------------------------------

export function sanitizeFilter(s: Sanitizer, filter: Filter, getQueryString: boolean): SanitizeResult {
  checkFilterShape(filter);
  if (filter.conditionGroup) s.group(filter.conditionGroup, "conditionGroup", false);
  s.orders(filter.orders);
  s.page(filter.page);
  const projection = s.selects(filter.selects);
  s.required(filter.conditionGroup ?? null, "conditionGroup");
  s.injectForced();
  return s.finish(getQueryString, projection);
}

export function sanitizeSegment(s: Sanitizer, segment: Segment, getQueryString: boolean): SanitizeResult {
  checkSegmentShape(segment);
  const sets = bySort(segment.conditionSets);
  for (const set of sets) {
    const where = `conditionSets[${segment.conditionSets.indexOf(set)}].conditionGroup`;
    s.group(set.conditionGroup, where, true);
    s.required(set.conditionGroup, where);
    s.injectForced();
  }
  if (sets.length === 0) {
    // No set selects everything: the forced predicate and the required conditions apply as to a
    // Filter without a group (transformPlan adds the set).
    s.required(null, "conditionSets");
    s.injectForced();
  }
  s.orders(segment.orders);
  s.page(segment.page);
  const projection = s.selects(segment.selects);
  return s.finish(getQueryString, projection);
}

export function sanitizeSummary(s: Sanitizer, summary: Summary, getQueryString: boolean): SanitizeResult {
  checkSummaryShape(summary);
  if (summary.conditionGroup) s.group(summary.conditionGroup, "conditionGroup", false);
  const groupBy = summary.groupBy;
  let keyRenames = new Map<string, string>();
  if (groupBy) {
    const keys = s.groupFields(groupBy.fields);
    keyRenames = keys.keyRenames;
    s.aggregates(groupBy.aggregateBy);
    const aliases = groupBy.aggregateBy.map((a) => a.alias ?? "");
    checkKeyNames([...keys.keyRenames.values(), ...aliases], [...keys.keyRenames.keys(), ...aliases]);
    s.summaryOrders(summary.orders ?? [], keys, groupBy.aggregateBy); // the caller's public names
    s.protectedHaving(summary.having, groupBy.aggregateBy);
  }
  s.countConditions(summary.having);
  s.page(summary.page);
  s.required(summary.conditionGroup ?? null, "conditionGroup");
  const having = summary.having ?? null;
  // The floor runs in SQL (transformPlan), so totals and pages count only the groups returned.
  const floor = groupBy ? s.floor : 1;
  if (floor > 1) {
    const tooSmall = floorRequestProblem(having, groupBy!.aggregateBy, floor);
    if (tooSmall) s.refuseGroupTooSmall(tooSmall.field, tooSmall.message);
    s.refuseGuessesUnderFloor(floor);
    s.recordFloor();
  }
  s.injectForced();
  return s.finish(getQueryString, undefined, keyRenames, floor);
}

/** The output chain of a member given its Select decision (see Sanitizer.chainOf); the schema uses it too. */
export function outputChainOf(member: PolicyMember, decision: Decision): TransformChain | null {
  if (decision.effect === PolicyEffect.Mask && decision.mask) return ruleMaskChain(decision.mask, member, decision.source);
  if (decision.effect === PolicyEffect.Allow && decision.level !== null && decision.level < PolicyLevel.OverridableAttribute) return null;
  return transformChainOf(member.policy, member.member.kind === "column" ? member.member.fieldKind : null);
}

/**
 * GroupTooSmall (20): a Having that can only select groups smaller than the floor (a mandatory
 * condition on a Count alias whose largest admissible count is below it) asks for exactly what
 * the floor hides; it is refused instead of silently answering nothing.
 */
function floorRequestProblem(having: ConditionGroup | null, aggregates: readonly AggregateBy[], floor: number): { field: string; message: string } | null {
  if (!having || (having.connector === Connector.Or && having.conditions.length + having.subConditionGroups.length > 1)) return null;
  const counts = new Set(aggregates.filter((a) => a.aggregator === Aggregator.Count).map((a) => (a.alias ?? "").trim().toLowerCase()));
  for (const c of having.conditions) {
    if (!counts.has((c.field ?? "").trim().toLowerCase())) continue;
    const numbers = c.values.map(Number);
    // The operator table's countBound column (lib/shapes/operator-table.ts).
    const largest = largestCountAdmitted(c.operator, numbers);
    if (largest < floor) return { field: c.field!, message: `having ${c.field} ${c.operator} ${c.values.join(", ")} selects only groups smaller than the group floor (${floor})` };
  }
  for (const group of having.subConditionGroups) {
    const problem = floorRequestProblem(group, aggregates, floor);
    if (problem) return problem;
  }
  return null;
}

/** Output names must be unique under both their public and real spellings (AmbiguousGroupKey). */
function checkKeyNames(publicNames: string[], realNames: string[]) {
  for (const names of [publicNames, realNames]) {
    const seen = new Set<string>();
    for (const name of names.filter((n) => n !== "")) {
      if (seen.has(name.toLowerCase())) policyError(PolicyErrorCode.AmbiguousGroupKey, `two summary outputs would both be named "${name}"`, "groupBy");
      seen.add(name.toLowerCase());
    }
  }
}

