// What sanitize hands on (Sanitizer.finish): the placements the plan is built through, the trace,
// renames and transforms for the row pass, what the policy adds to the plan, and inference
// protection's guesses for the guess budget.
import type { Placements } from "./placements.js";
import type { PolicyTrace } from "../shapes/policy-trace.js";
import type { RenameTree } from "./renames.js";
import type { TransformTree } from "../transform/apply.js";
import type { PlanAdditions } from "./plan-pass.js";
import type { Aggregator } from "../shapes/enums.js";
import type { PrivateSettings } from "../privacy/private-options.js";

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
   * many values this request tests against it (guessCountsOf in decisions/inference.ts says what counts).
   * Empty when protection is off or no condition tests a protected field.
   */
  readonly guesses: ReadonlyMap<string, number>;
  /**
   * The same guesses per stored column ("Entity.member", public names of the member's owning
   * entity and the member), whatever path reached it: what a guess budget charges, so a column
   * reached from two roots or by two paths is one allowance across requests.
   */
  readonly guessedColumns: ReadonlyMap<string, GuessedColumn>;
  /**
   * A Summary's aggregates of fields private for the caller (#45), by alias: noised in the row
   * pass and charged to the privacy budget before the request runs. Empty for every other request.
   */
  readonly privateAggregates: ReadonlyMap<string, PrivateAggregate>;
}

/** One private aggregate of a request (SanitizeResult.privateAggregates). */
export interface PrivateAggregate {
  readonly aggregator: Aggregator;
  readonly settings: PrivateSettings;
  /** The stored column, as the budget's key: public names of its owning entity and member. */
  readonly entity: string;
  readonly field: string;
}

/** A stored column a request tests values of, and how many (SanitizeResult.guessedColumns). */
export interface GuessedColumn {
  readonly entity: string;
  readonly field: string;
  readonly count: number;
}
