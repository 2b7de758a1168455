// The engine's admin functions (no HTTP here; querylib/nest exposes them): schema for a filter
// UI, explain for one field's whole decision chain, simulate for the sanitized clause and SQL.
import type { DataSource } from "typeorm";
import { LogicException } from "../errors/logic-exception.js";
import { Codes, fail } from "../errors/codes.js";
import { type MemberScope, modelOfClass } from "../model/entity-model.js";
import { dataTypeOfKind } from "../model/field-kind.js";
import { DataType, type Operator } from "../shapes/enums.js";
import { PolicyEffect, PolicyFeature, PolicyLevel, singleFeatures } from "../shapes/policy-enums.js";
import type { FilterPlan } from "../plan/nodes.js";
import { forcedClause } from "../guard/plan-pass.js";
import { runBuild } from "../pipeline/driver.js";
import { type GuardEngine, PolicyGuard } from "../guard/policy-guard.js";
import { appliesTo } from "../decisions/compiled-rules.js";
import type { QpPolicyContext } from "../shapes/policy-context.js";
import type { Decision } from "../decisions/decide.js";
import type { DecisionTable } from "../decisions/decision-table.js";
import { type PolicyMember, policyMember, reference } from "../decisions/references.js";
import { memberCost, referenceCost } from "../decisions/cost.js";
import { whereOperatorsOf } from "../decisions/entity-policy.js";
import { hopsOf, navigationRefusal } from "../decisions/tenant-navigation.js";
import { outputChainOf } from "../guard/sanitizer.js";
import { type InferenceGuard, inferenceGuardOf } from "../decisions/inference.js";
import type { TransformChain } from "../transform/field-transforms.js";
import type { QpPolicyOptions } from "../decisions/options.js";
import { copyTrace } from "../guard/trace.js";
import type { PolicyTrace } from "../shapes/policy-trace.js";
import type { ConditionGroup, Filter } from "../shapes/shapes.js";
import type { Placements } from "../guard/placements.js";
import { privateAggregators } from "../guard/privacy-channels.js";

export const UnknownEntity = "UnknownEntity";

export interface AdminEngine {
  readonly options: QpPolicyOptions;
  decisionsAsync(context: QpPolicyContext): Promise<DecisionTable>;
}

export function entityClass(options: QpPolicyOptions, publicName: string): Function {
  const entity = typeof publicName === "string" ? options.entities.find(publicName) : undefined;
  if (!entity) throw new LogicException(UnknownEntity, `UnknownEntity: no entity is exposed as "${publicName}"`);
  return entity;
}


// ---- schema ---------------------------------------------------------------------------------

export interface SchemaField {
  path: string; parent: string; label: string; description: string | null; group: string | null; order: number | null;
  dataType: DataType | null; operators: Operator[]; allowedValues: string[] | null; cost: number; features: string[]; masked: boolean;
  /** What the caller's values go through on output, in chain order: "Mask:Email", "Mask:Tokenize", "Generalize:Bucket", "Truncate", "Format", "Default", "Mutate". */
  transforms: string[];
  /** What one use of the path adds to a query's cost: the field's cost plus that of every navigation it crosses. */
  pathCost: number;
  /**
   * Under inference protection, what still limits this field for the caller (it is shown
   * transformed): the most values one request may test against it (maxInValues: every Equal value,
   * In element and range bound of the request together, #42), and what a range on it must hit; null when
   * nothing does. Its operators and features above are already restricted.
   */
  inference: { maxInValues: number | null; rangeBoundaries: string | null; summable: boolean; acceptedRisks: string[] } | null;
  /**
   * The field is private for the caller (#45, docs/POLICY.md "Private aggregates"): its public
   * bounds, granularity and ε per aggregate, and the aggregates it may take; null when it is not.
   * Where, Select, Order, Group and Segment are then not among its features.
   */
  private: SchemaPrivacy | null;
}
export interface SchemaPrivacy {
  lower: number; upper: number; granularity: number; epsilon: number; aggregators: string[]; source: string;
  /**
   * What each aggregator costs the caller's privacy budget, in ε (a Summary pays the sum of its
   * private aggregates', plus one more Count at its smallest ε when its group keys are free-form).
   */
  costs: Record<string, number>;
  /**
   * The caller's privacy budget for this field: its limit, what is left in this window and when
   * the window resets, its scope and window; `remaining` null when the caller has no subject of
   * the budget's scope or the ledger could not answer.
   */
  budget: { limit: number; remaining: number | null; resetsAt: string | null; scope: string; window: string };
}
/** Where a field's budget is kept in the ledger (its owning entity's public name, its public name), for privacyBudgets. */
const budgetKeys = new WeakMap<SchemaPrivacy, { entity: string; field: string }>();
function schemaPrivacy(decisions: DecisionTable, step: PolicyMember, options: QpPolicyOptions): SchemaPrivacy | null {
  const p = decisions.privacy(step);
  if (!p) return null;
  const { limit, scope, window } = options.privacyBudget;
  const out: SchemaPrivacy = {
    lower: p.lower, upper: p.upper, granularity: p.granularity, epsilon: p.epsilon, aggregators: [...privateAggregators], source: p.source,
    costs: Object.fromEntries(privateAggregators.map((a) => [a, p.epsilon])),
    budget: { limit, remaining: null, resetsAt: null, scope, window },
  };
  budgetKeys.set(out, { entity: options.entities.nameOf(step.owner) ?? step.owner.name, field: step.publicName });
  return out;
}

/**
 * Fills each private field's budget with what is left for the caller: a charge of 0 to the
 * ledger reads it (no cost). A caller without a subject of the budget's scope, or a ledger that
 * cannot answer, leaves `remaining` null (the schema is still answered).
 */
async function privacyBudgets(options: QpPolicyOptions, context: QpPolicyContext, fields: readonly (SchemaPrivacy | null)[]): Promise<void> {
  const { ledger, limit, scope, window } = options.privacyBudget;
  const ids = [...new Set(context.subjectsOf(scope as never))].sort();
  if (ids.length === 0) return;
  const scopeId = ids.length === 1 ? ids[0]! : JSON.stringify(ids);
  for (const privacy of fields) {
    const key = privacy && budgetKeys.get(privacy);
    if (!key) continue;
    try {
      const read = await ledger.charge({ scopeKind: scope, scopeId, entity: key.entity, field: key.field, kind: "privacy", cost: 0, limit, window });
      privacy!.budget = { ...privacy!.budget, remaining: read.remaining, resetsAt: read.resetsAt ? read.resetsAt.toISOString() : null };
    } catch {
      // Left null: the schema says the ledger did not answer; a query would be refused (StoreUnavailable).
    }
  }
}
/** The features a private field never takes (its values would be compared or ranked exactly). */
const closedByPrivacy: readonly PolicyFeature[] = [PolicyFeature.Where, PolicyFeature.Select, PolicyFeature.Order, PolicyFeature.Group, PolicyFeature.Segment];
export interface SchemaNode { path: string; parent: string; entity: string; depth: number; expanded: boolean; remainingDepth: number }
export interface SchemaResponse {
  entity: string; roots: string[]; depth: number; maxDepth: number; truncated: boolean;
  /** The cost budget of one query (MaxQueryCost), for a UI to show a query's cost against. */
  maxCost: number;
  fields: SchemaField[]; nodes: SchemaNode[];
}

export async function schemaOf(engine: AdminEngine, entity: string, request: { paths?: readonly string[] | null; depth?: unknown }, context: QpPolicyContext): Promise<SchemaResponse> {
  const { caps } = engine.options;
  const root = entityClass(engine.options, entity);
  if (request.depth !== undefined && request.depth !== null && (typeof request.depth !== "number" || !Number.isInteger(request.depth) || request.depth < 1)) {
    throw new LogicException("InvalidSchemaDepth", "InvalidSchemaDepth: depth must be an integer of at least 1");
  }
  const depth = Math.min((request.depth as number | undefined) ?? caps.schemaDepth, caps.maxNavigationDepth);
  const decisions = await engine.decisionsAsync(context);
  const model = modelOfClass(root);
  const response: SchemaResponse = { entity, roots: [], depth, maxDepth: caps.maxNavigationDepth, truncated: false, maxCost: caps.maxQueryCost, fields: [], nodes: [] };
  const name = (target: Function) => engine.options.entities.nameOf(target) ?? target.name;

  // crossedCost: what the navigations (and embeddeds) on the way to `scope` add to each use of a field in it.
  const walk = (scope: MemberScope, owner: Function, path: string, level: number, hops: number, counts: Map<Function, number>, crossedCost: number, embeddedPrefix = "") => {
    for (const member of scope.all()) {
      if (response.truncated) return;
      const step = policyMember(owner, scope, member);
      const own = embeddedPrefix + step.publicName;
      const full = path ? `${path}.${own}` : own;
      if (member.kind === "embedded") {
        walk(member.scope, member.target, path, level, hops, counts, crossedCost + costOf(step, engine.options), `${own}.`);
        continue;
      }
      if (member.kind === "column") {
        // A transformed member's stored values cannot be grouped or aggregated without allowAggregate
        // (TransformRequiresMaterialization): not offered either.
        const chain = outputChainOf(step, decisions.decide(step, PolicyFeature.Select));
        const readsStored = chain !== null && !chain.allowAggregate ? [PolicyFeature.Group, PolicyFeature.Aggregate] : [];
        // Under inference protection a field shown transformed cannot be ordered (unless it accepts that risk).
        const guard = inferenceGuardOf(engine.options, step, chain);
        if (guard && !guard.orderable) readsStored.push(PolicyFeature.Order);
        if (decisions.privacy(step)) readsStored.push(...closedByPrivacy);
        const allowed = singleFeatures.filter((f) => !readsStored.includes(f) && decisions.decide(step, f).effect !== PolicyEffect.Deny);
        if (allowed.length === 0) continue; // sealed or denied for every feature: never shown
        if (response.fields.length >= caps.maxSchemaFields) {
          response.truncated = true;
          return;
        }
        response.fields.push(describeField(step, full, path, allowed, chain, guard, decisions, engine.options, crossedCost));
        continue;
      }
      const target = member.target();
      // Rows of a QpForceWhere-scoped entity are reachable only as a query's root or through a
      // navigation proven tenant-safe (tenant-navigation.ts; rule 8: what every query through
      // this navigation would refuse is not offered).
      if (navigationRefusal(owner, member.name, target.target)) continue;
      const nodeHops = hops + 1;
      const seen = counts.get(target.target) ?? 0;
      const expandable = level < depth && seen + 1 <= caps.schemaCycleLimit && nodeHops <= caps.maxNavigationDepth;
      response.nodes.push({ path: full, parent: path, entity: name(target.target), depth: level + 1, expanded: expandable, remainingDepth: Math.max(0, caps.maxNavigationDepth - nodeHops + 1) });
      if (expandable) walk(target.scope, target.target, full, level + 1, nodeHops, new Map(counts).set(target.target, seen + 1), crossedCost + costOf(step, engine.options));
    }
  };

  for (const raw of request.paths?.length ? request.paths : [""]) {
    if (raw === "") {
      response.roots.push("");
      walk(model.scope, root, "", 1, 0, new Map([[root, 1]]), 0);
      continue;
    }
    const ref = reference(model, raw, "paths");
    if (ref.path.end.kind !== "relation") fail(Codes.InvalidField, `"${raw}" is not a navigation`, "paths");
    const target = ref.path.end.hop.to;
    const hops = ref.path.hops.length + 1;
    if (hops > caps.maxNavigationDepth) fail(Codes.InvalidField, `"${raw}" is deeper than MaxNavigationDepth (${caps.maxNavigationDepth})`, "paths");
    // A subtree through a scoped entity is as absent as its node: nothing to describe.
    if (hopsOf(ref.path).some((hop) => navigationRefusal(hop.from.target, hop.member.name, hop.to.target))) continue;
    response.roots.push(ref.publicPath);
    // A subtree request resets the cycle count: the subtree's own type counts once.
    const crossedCost = referenceCost(ref, engine.options.caps);
    walk(target.scope, target.target, ref.publicPath, 1, hops, new Map([[target.target, 1]]), crossedCost);
  }
  await privacyBudgets(engine.options, context, response.fields.map((f) => f.private));
  return response;
}

const describeOf = (step: PolicyMember) => {
  const describe = step.policy?.attributes.find((a) => a.kind === "describe");
  return describe && describe.kind === "describe" ? describe : null;
};

const costOf = (step: PolicyMember, options: QpPolicyOptions) => memberCost(step, options.caps);

/** A chain's steps as labels, in the order they run (docs/TRANSFORMS.md, the chain; QpDefault short-circuits it). */
function transformLabels(chain: TransformChain | null): string[] {
  if (!chain) return [];
  if (chain.defaultValue) return ["Default"];
  return [
    chain.mutate ? "Mutate" : null,
    chain.generalize ? `Generalize:${chain.generalize.mode}` : null,
    chain.format !== undefined ? "Format" : null,
    chain.mask ? `Mask:${chain.mask.strategy}` : null,
    chain.truncate ? "Truncate" : null,
  ].filter((label): label is string => label !== null);
}

function describeField(
  step: PolicyMember, path: string, parent: string, allowed: PolicyFeature[], chain: TransformChain | null, guard: InferenceGuard | null,
  decisions: DecisionTable, options: QpPolicyOptions, crossedCost: number,
): SchemaField {
  const attributes = step.policy?.attributes ?? [];
  const describe = describeOf(step);
  const values = attributes.find((a) => a.kind === "allowedValues");
  const column = step.member.kind === "column" ? step.member : null;
  const dataType = column ? dataTypeOfKind[column.fieldKind] : null;
  let ops = allowed.includes(PolicyFeature.Where) && column ? whereOperatorsOf(step.policy, column.fieldKind) : [];
  if (guard?.operators) ops = ops.filter((op) => guard.operators!.includes(op));
  const enumValues = column?.enumDefinition ? (Array.isArray(column.enumDefinition) ? column.enumDefinition : Object.values(column.enumDefinition as object)).map(String) : null;
  const select = decisions.decide(step, PolicyFeature.Select);
  return {
    path, parent,
    label: describe?.label ? describe.label : step.publicName,
    description: describe?.description ?? null,
    group: describe?.group ?? null,
    order: describe?.order ?? null,
    dataType, operators: ops,
    allowedValues: values && values.kind === "allowedValues" ? [...values.values] : enumValues,
    cost: costOf(step, options),
    pathCost: crossedCost + costOf(step, options),
    features: allowed.map((f) => PolicyFeature[f]),
    masked: select.effect === PolicyEffect.Mask,
    transforms: transformLabels(chain),
    // A private field's sums are answered with noise (#45): summable for this caller whatever inference protection says of exact ones.
    inference: guard && { maxInValues: guard.maxInValues, rangeBoundaries: guard.boundaryText, summable: guard.summable || decisions.privacy(step) !== null, acceptedRisks: [...guard.accepted] },
    private: schemaPrivacy(decisions, step, options),
  };
}

// ---- explain --------------------------------------------------------------------------------

export interface ExplainDecision { feature: string; effect: PolicyEffect; level: number | null; source: string; overrode: string[]; ignored: { source: string; reason: string }[] }
export interface ExplainResponse {
  entity: string; field: string; decisions: ExplainDecision[]; selectable: boolean; masked: boolean; mask: unknown;
  /** Private for this caller (#45): the public bounds and where they come from; null when not private. */
  private: SchemaPrivacy | null;
}

export async function explainOf(
  engine: AdminEngine, entity: string, request: { field?: string | null; paths?: readonly string[] | null; depth?: unknown }, context: QpPolicyContext,
): Promise<ExplainResponse | { entity: string; fields: ExplainResponse[] }> {
  const root = entityClass(engine.options, entity);
  const decisions = await engine.decisionsAsync(context);
  if (request.field) {
    const ref = reference(modelOfClass(root), request.field, "field");
    const one = explainMember(entity, ref.publicPath, ref.end, decisions, context, engine.options);
    await privacyBudgets(engine.options, context, [one.private]);
    return one;
  }
  const schema = await schemaOf(engine, entity, request, context);
  const model = modelOfClass(root);
  const fields = schema.fields.map((f) => explainMember(entity, f.path, reference(model, f.path, "field").end, decisions, context, engine.options));
  await privacyBudgets(engine.options, context, fields.map((f) => f.private));
  return { entity, fields };
}

function explainMember(entity: string, field: string, member: PolicyMember, decisions: DecisionTable, context: QpPolicyContext, options: QpPolicyOptions): ExplainResponse {
  const rules = decisions.rules.rulesFor(member);
  const guard = inferenceGuardOf(options, member, outputChainOf(member, decisions.decide(member, PolicyFeature.Select)));
  const results: ExplainDecision[] = singleFeatures.map((feature) => {
    let decision: Decision = decisions.decide(member, feature);
    // The sanitizer's own override (decisions/inference.ts): ordering a field shown transformed.
    if (feature === PolicyFeature.Order && guard && !guard.orderable && decision.effect !== PolicyEffect.Deny) {
      decision = { feature, effect: PolicyEffect.Deny, level: null, source: guard.source, overridden: [{ effect: decision.effect, level: decision.level ?? PolicyLevel.OverridableAttribute, specificity: 1, priority: 0, source: decision.source }] };
    }
    // And privacy's (guard/privacy-channels.ts): a private field is never filtered, ordered or grouped.
    const privacy = decisions.privacy(member);
    if (privacy && closedByPrivacy.includes(feature) && decision.effect !== PolicyEffect.Deny) {
      decision = { feature, effect: PolicyEffect.Deny, level: privacy.level, source: privacy.source, overridden: [{ effect: decision.effect, level: decision.level ?? PolicyLevel.OverridableAttribute, specificity: 1, priority: 0, source: decision.source }] };
    }
    const ignored = rules.filter(({ rule }) => (rule.features & feature) !== 0).flatMap(({ rule, skipped }) =>
      skipped ? [{ source: `rule ${rule.id}`, reason: skipped }]
      : appliesTo(rule, context) ? []
      : [{ source: `rule ${rule.id}`, reason: `applies to ${rule.subjectKind}${rule.subject ? ` ${rule.subject}` : ""}, not to this caller` }]);
    const sealedIgnored = decision.level === 1 ? decision.overridden.filter((s) => s.source.startsWith("rule ")).map((s) => ({ source: s.source, reason: "the field is sealed by an attribute" })) : [];
    return {
      feature: PolicyFeature[feature], effect: decision.effect, level: decision.level, source: decision.source,
      overrode: decision.overridden.map((s) => s.source), ignored: [...ignored, ...sealedIgnored],
    };
  });
  const select = decisions.decide(member, PolicyFeature.Select);
  const maskAttribute = member.policy?.attributes.find((a) => a.kind === "mask");
  return {
    entity, field, decisions: results, selectable: select.effect !== PolicyEffect.Deny, masked: select.effect === PolicyEffect.Mask,
    mask: select.effect !== PolicyEffect.Mask ? null : select.mask ?? (maskAttribute && maskAttribute.kind === "mask" ? maskAttribute.options : { transform: select.source }),
    private: schemaPrivacy(decisions, member, options),
  };
}

// ---- simulate -------------------------------------------------------------------------------

export interface SimulateResponse { clause: unknown; filter: Filter; sql: string; parameters: unknown[]; policy: PolicyTrace }

/**
 * The pipeline stopped at the plan, under the caller's guard: sanitized and compiled, executing
 * nothing, recording no audit event and charging no budget.
 */
export async function simulateOf(engine: GuardEngine, context: QpPolicyContext, entity: string, filter: unknown, dataSource: DataSource): Promise<SimulateResponse> {
  const root = entityClass(engine.options, entity);
  const shape = filter ?? {};
  const source = dataSource.getRepository(root).createQueryBuilder("root");
  const guard = new PolicyGuard(engine, context, "filter", shape, { reads: false });
  // Nothing runs, not even the dialect's schema learning (a first simulate on MariaDB would read information_schema).
  const request = { kind: "filter", shape, typed: true, getQueryString: false, learnSchema: false } as const;
  return runBuild(source, request, guard, ({ planned, decided: { sanitized }, parsed, statements }) => {
    const plan = planned.plan as FilterPlan;
    const statement = statements().data;
    // The sanitized clause as a request: the caller's group inside the forced conditions.
    const shown = sanitizedFilterOf(parsed as Filter, sanitized.placements, plan);
    const clause = forcedClause(shown.conditionGroup ?? null, sanitized.additions.forced);
    return { clause, filter: { ...shown, conditionGroup: clause }, sql: statement.sql, parameters: [...statement.parameters], policy: copyTrace(sanitized.trace) };
  });
}

/**
 * The caller's Filter as the policy leaves it, in real names (what Simulate shows; the query
 * itself is the plan): each field as placed, dropped orders gone, the plan's page and projection.
 */
function sanitizedFilterOf(parsed: Filter, placements: Placements, plan: FilterPlan): Filter {
  const group = (g: ConditionGroup, where: string): ConditionGroup => ({
    ...g,
    conditions: g.conditions.map((c, i) => ({ ...c, field: placements.canonical(`${where}.conditions[${i}].field`) ?? c.field })),
    subConditionGroups: g.subConditionGroups.map((sub, i) => group(sub, `${where}.subConditionGroups[${i}]`)),
  });
  const orders = parsed.orders?.flatMap((order, i) => {
    const field = placements.canonical(`orders[${i}].field`);
    return field === null ? [] : [{ ...order, field }];
  }) ?? null;
  const selects = plan.selects && plan.selects.map((path) => path.path);
  return { conditionGroup: parsed.conditionGroup ? group(parsed.conditionGroup, "conditionGroup") : null, orders, page: plan.page, selects };
}
