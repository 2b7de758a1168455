// The guard of the unguarded functions: an entity that requires a policy
// (QpEntity({ requirePolicy: true })) refuses them, read from the decorators' registry so it
// holds whether or not the policy layer was ever loaded; otherwise nothing is decided, and a
// Repository's requests are cached per entity model (unguardedPlans).
import type { EntityModel } from "../model/entity-model.js";
import { qpRegistry } from "../registry/qp-registry.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { PlanCache, digestOf } from "../cache/plan-cache.js";
import { ProjectionNode } from "../plan/projection.js";
import type { FilterResult } from "../shapes/results.js";
import type { ParseLimits, ShapeKind } from "../parse/parse-shapes.js";
import type { PlanLimits } from "../plan/subquery-budget.js";
import type { Planned, PlanStore, QueryGuard, ShapeResult } from "./driver.js";
import type { ShapePlan } from "../plan/nodes.js";
import { type CursorSecret, CursorKeyring } from "../cursor/cursor-codec.js";

let unguardedKeys: CursorKeyring | null = null;

/** The keyring of the unguarded functions' cursors: setCursorSecrets', or a random secret of this process. */
const unguardedCursorKeys = (): CursorKeyring => (unguardedKeys ??= CursorKeyring.random());

/**
 * The secrets that seal the unguarded functions' page cursors (a guarded engine has its own:
 * QpPolicyOptions.cursorSecrets). Without them a random secret of this process seals them, so
 * another process (a replica, a restart) refuses them as CursorIsInvalid.
 */
export function setCursorSecrets(secrets: CursorSecret | readonly CursorSecret[]): void {
  unguardedKeys = new CursorKeyring(typeof secrets === "string" || secrets instanceof Uint8Array ? [secrets] : secrets as readonly CursorSecret[]);
}

export function checkUnguarded(model: EntityModel): void {
  if (qpRegistry.entityOptions(model.target)?.requirePolicy === true) {
    policyError(PolicyErrorCode.PolicyRequired, `${model.name} requires a policy: query it through applyPolicy(source, context)`);
  }
}

/** Unguarded shapes on Repositories, per entity model (exported for tests and benchmarks). */
export const unguardedPlans = new PlanCache<Planned<null>>([ProjectionNode]);

const emptyResult = (): FilterResult<never> => ({ pageNumber: 0, pageSize: 0, pageCount: 0, totalCount: 0, data: [], queryString: null, policy: null });

/** No guard: one object serves every request (it keeps nothing per request). */
export const unguarded: QueryGuard<null> = {
  limits: undefined as (ParseLimits & PlanLimits) | undefined,
  untypedArray: (): ShapeResult<never> => emptyResult(),
  begin: checkUnguarded,
  planStore: (_model: EntityModel, kind: ShapeKind, request: string): PlanStore<null> | null => {
    const key = digestOf([kind, request]);
    return key === null ? null : { cache: unguardedPlans, key };
  },
  decide: () => null,
  lookup: () => undefined,
  transformPlan: (planned: ShapePlan) => planned,
  cursors: () => ({ scope: "", keyring: unguardedCursorKeys() }),
  reused: () => {},
  prepared: () => {},
  beforeRun: () => {},
  answered: () => null,
  transformResult: <R>(result: R) => result,
  transformBuilt: () => {},
  settle: () => {},
};
