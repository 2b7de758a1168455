// Inference protection (QpPolicyOptions.inferenceProtection, off by default). A transformation
// (mask, generalization, hash, token, truncation, default, format, mutation) applies to values
// after the query ran, so every filter, order and Having on a transformed field still compares
// its stored value: a StartsWith recovers a masked name letter by letter, an ORDER BY ranks it
// exactly, an In list halved over a dictionary finds an e-mail, a range finds a generalized
// balance to the cent. With the option on, a field the caller sees transformed (by its
// decorators or by a runtime Mask rule for that caller) is guarded here:
// - it cannot be ordered (dropped or refused per tier, as QpNoOrder);
// - it is filtered only with Equal, IEqual, In, IIn, IsNull and IsNotNull, and one request tests
//   at most MaxProtectedInValues values against it, counted over the whole request (every Equal,
//   every In element, range bound, across Or branches, sub-groups, Segment sets, Summary Where
//   and Having: guessesOf), so a dictionary search costs what a brute force costs;
// - in a Summary under a group floor, equality on it (Where, or Having on its extreme) is refused:
//   padding rows of the caller's choosing would meet the floor and turn the group into an oracle;
// - a generalized field (and nothing that hides more after it) also takes range operators, but
//   only on its boundaries (bucket edges, rounding midpoints, the start of a year, quarter,
//   month or day), so a filter reveals nothing finer than the caller is shown;
// - Having on its minimum, maximum, first or last (which are shown transformed) follows the same rules;
// - it cannot be summed or averaged: a sum is returned as computed from stored values, and the
//   difference of two Summaries over groups that differ by one row is that row's value.
// Each restriction can be accepted for a field on its transform decorator (acceptInferenceRisks);
// the trace says so on each use that relies on it. The sanitizer and the schema read this one guard.
import { DataType, Operator } from "../shapes/enums.js";
import { operators, operatorsWhere } from "../shapes/operator-table.js";
import { DatePart, GeneralizeMode, InferenceRisk } from "../shapes/policy-enums.js";
import type { GeneralizeOptions } from "../registry/qp-registry.js";
import type { TransformChain } from "../transform/field-transforms.js";
import { isTransformAttribute } from "../transform/field-transforms.js";
import { type Decimal, atScale, toDecimal } from "../transform/decimal.js";
import { parseInstant } from "../resolve/coerce-values.js";
import type { QpPolicyOptions } from "./options.js";
import type { PolicyMember } from "./references.js";

// The lists below are the operator table's columns (inference, pinsValue), in declaration order.
/** What a caller may still use on a field it sees transformed without learning more than it is shown. */
export const equalityOperators: readonly Operator[] = operatorsWhere((m) => m.inference === "equality");

/** Range operators: on a generalized field, accepted on its boundaries only. */
export const rangeOperators: readonly Operator[] = operatorsWhere((m) => m.inference === "range");

export interface InferenceGuard {
  /** Why, for traces and refusals: "inference protection (QpMask on Patient.mail)". */
  readonly source: string;
  /** The restrictions the field's decorators accept (acceptInferenceRisks). */
  readonly accepted: ReadonlySet<InferenceRisk>;
  readonly orderable: boolean;
  /** May a Sumation or Average read it (their result is not transformed)? */
  readonly summable: boolean;
  /** The operators a condition on it may use; null: any the field otherwise allows. */
  readonly operators: readonly Operator[] | null;
  /** The most values one request may test against the field (MaxProtectedInValues, per request since #42); null: no cap beyond the request's own. */
  readonly maxInValues: number | null;
  /** A range condition's values must be boundaries of this generalization; null: any value. */
  readonly boundaries: GeneralizeOptions | null;
  /** "multiples of 1000", "starts of a year": what a boundary is, for the schema and messages. */
  readonly boundaryText: string | null;
}

/** Operators whose values are guesses of the stored value (they pin it): a floored Summary refuses them on a protected field. */
export const guessOperators: readonly Operator[] = operatorsWhere((m) => m.pinsValue);

/**
 * How many guesses a condition with `operator` and `valueCount` values makes against a protected
 * field: each value it tests (each Equal or IEqual value, each In or IIn element, each range
 * bound, each value of an operator a field accepts beyond equality); IsNull and IsNotNull test
 * no value (0). Depends on the operator and the number of values only, never on the values.
 */
export function guessesOf(operator: Operator, valueCount: number): number {
  return operators[operator].noValue ? 0 : valueCount;
}

/**
 * The guesses a sanitized request makes, per protected field: field (its public path from the
 * query's root, as the caller names it; a Having on an extreme counts against the field it
 * aggregates) -> the number of values the request tests against it (guessesOf), summed over the
 * whole request. Only fields the caller sees transformed under inference protection appear;
 * the map is empty when protection is off. Pure: it reads the result, which holds the counts
 * of the very request it was sanitized for (a result reused for another request of the same
 * shape holds the same counts, since a shape cached by its values' absence has no In list and
 * an Equal counts 1). This is what a per-caller guess budget charges before execution.
 */
export function guessCountsOf(sanitized: { readonly guesses: ReadonlyMap<string, number> }): ReadonlyMap<string, number> {
  return new Map(sanitized.guesses);
}

/** The risks a member's transform decorators accept. */
function acceptedRisks(member: PolicyMember): Set<InferenceRisk> {
  const accepted = new Set<InferenceRisk>();
  for (const attribute of member.policy?.attributes ?? []) {
    if (!isTransformAttribute(attribute)) continue;
    const options = "options" in attribute ? attribute.options as { acceptInferenceRisks?: readonly InferenceRisk[] } : {};
    for (const risk of options.acceptInferenceRisks ?? []) accepted.add(risk);
  }
  return accepted;
}

/** A chain whose only hiding step is its generalization: what the caller is shown is the bucket. */
const generalizesOnly = (chain: TransformChain) =>
  chain.generalize !== undefined && !chain.mask && !chain.defaultValue && !chain.truncate && !chain.mutate;

/** What a member shown generalized may take: equality and ranges (built once, not per field reference). */
const generalizedOperators: readonly Operator[] = [...equalityOperators, ...rangeOperators];

/**
 * The guard of a member the caller sees through `chain` (its output chain for this caller: the
 * decorators', or a rule's mask), or null when nothing restricts it (protection off, or the
 * member is shown as stored).
 */
export function inferenceGuardOf(options: QpPolicyOptions, member: PolicyMember, chain: TransformChain | null): InferenceGuard | null {
  if (!options.inferenceProtection || chain === null) return null;
  const accepted = acceptedRisks(member);
  const generalized = generalizesOnly(chain) ? chain.generalize! : null;
  const ranges = generalized !== null && !accepted.has(InferenceRisk.OffBoundaryRange);
  return {
    source: `inference protection (${chain.source})`,
    accepted,
    orderable: accepted.has(InferenceRisk.Order),
    summable: accepted.has(InferenceRisk.Aggregate),
    operators: accepted.has(InferenceRisk.Operators) ? null : generalized ? generalizedOperators : equalityOperators,
    maxInValues: accepted.has(InferenceRisk.LongInList) ? null : options.caps.maxProtectedInValues,
    boundaries: ranges ? generalized : null,
    boundaryText: ranges ? boundaryText(generalized!) : null,
  };
}

function boundaryText(g: GeneralizeOptions): string {
  switch (g.mode) {
    case GeneralizeMode.Bucket: return `multiples of ${g.step}`;
    case GeneralizeMode.Round: return `midpoints between multiples of ${g.step ?? 10 ** -(g.decimals ?? 0)}`;
    case GeneralizeMode.DatePart: return `starts of a ${(g.part ?? DatePart.Day).toLowerCase()}`;
    case GeneralizeMode.Truncate: return `starts of a ${(g.part ?? DatePart.Day).toLowerCase()}, or multiples of ${10 ** -(g.decimals ?? 0)}`;
  }
}

// ---- boundaries -----------------------------------------------------------------------------

/** `value` is k × step for an integer k (exact decimals, no binary rounding). */
function isMultiple(value: Decimal, step: Decimal): boolean {
  const scale = Math.max(value.scale, step.scale);
  const s = atScale(step, scale);
  return s !== 0n && atScale(value, scale) % s === 0n;
}

/** `value` is (k + ½) × step: where rounding to the nearest multiple changes (halves round up). */
function isMidpoint(value: Decimal, step: Decimal): boolean {
  const scale = Math.max(value.scale, step.scale);
  const twice = 2n * atScale(value, scale);
  const s = atScale(step, scale);
  return s !== 0n && twice % s === 0n && (twice / s) % 2n !== 0n;
}

/** The first instant of its year, quarter, month or day (UTC, as the generalization reads dates). */
function isPeriodStart(instant: Date, part: DatePart): boolean {
  const [month, day] = [instant.getUTCMonth(), instant.getUTCDate()];
  const midnight = instant.getUTCHours() === 0 && instant.getUTCMinutes() === 0 && instant.getUTCSeconds() === 0 && instant.getUTCMilliseconds() === 0;
  switch (part) {
    case DatePart.Year: return midnight && day === 1 && month === 0;
    case DatePart.Quarter: return midnight && day === 1 && month % 3 === 0;
    case DatePart.Month: return midnight && day === 1;
    case DatePart.Day: return midnight;
  }
}

const stepOf = (g: GeneralizeOptions): Decimal => toDecimal(g.step ?? 10 ** -(g.decimals ?? 0))!;

/**
 * Whether a condition's value (its request token) is a boundary of the generalization; null when
 * the token is no number or date: its format error is the plan's to report, after the policy.
 */
export function onBoundary(token: string, dataType: DataType, g: GeneralizeOptions): boolean | null {
  const dated = dataType === DataType.Date || dataType === DataType.DateTime;
  if (g.mode === GeneralizeMode.DatePart || (g.mode === GeneralizeMode.Truncate && dated)) {
    const instant = parseInstant(token.trim());
    return instant ? isPeriodStart(instant, g.part ?? DatePart.Day) : null;
  }
  const value = toDecimal(token.trim());
  if (!value) return null;
  if (g.mode === GeneralizeMode.Round) return isMidpoint(value, stepOf(g));
  // Bucket: its edges. Truncate (numbers): toward zero at `decimals` places, so its edges are multiples too.
  return isMultiple(value, g.mode === GeneralizeMode.Bucket ? toDecimal(g.step!)! : stepOf(g));
}
