// Inference protection on the conditions a request puts on fields the caller sees transformed
// (decisions/inference.ts): equality operators only, a short In list, ranges on a generalization's
// boundaries; the guesses each condition tests, counted per field and per stored column for the
// whole request (MaxProtectedInValues, and the guess budget's charge); and under a Summary's
// group floor, the guesses it refuses. A use that relies on a risk the field accepts is traced.
import { PolicyErrorCode } from "../errors/policy-exception.js";
import { operators as operatorTable } from "../shapes/operator-table.js";
import { InferenceRisk } from "../shapes/policy-enums.js";
import type { Condition } from "../shapes/shapes.js";
import type { PolicyMember } from "../decisions/references.js";
import { type InferenceGuard, equalityOperators, guessOperators, guessesOf, onBoundary, rangeOperators } from "../decisions/inference.js";
import { toToken } from "../resolve/coerce-values.js";
import type { Sanitizer } from "./sanitizer.js";

/**
 * A condition (or a Having condition on a transformed extreme) on a field the caller sees
 * transformed: equality operators only, a short In list, ranges on boundaries (decisions/inference.ts).
 * A use that relies on a risk the field accepts is traced as such.
 */
export function protectedCondition(s: Sanitizer, guard: InferenceGuard, field: string, condition: Condition, where: string, feature: string, member: PolicyMember): void {
  const decision = { level: null, source: guard.source };
  const { operator, values } = condition;
  if (guard.operators && !guard.operators.includes(operator)) {
    const why = `${operator} is not allowed on ${field}: it is shown transformed and inference protection allows ${guard.operators.join(", ")}`;
    s.refuse(PolicyErrorCode.OperatorNotAllowed, why, `${where}.operator`, field, feature, decision);
  } else if (!guard.operators) s.noteAccepted(field, feature, guard, InferenceRisk.Operators, !equalityOperators.includes(operator));
  if (operatorTable[operator].listValued) s.readValues = true; // the list's length counts
  countGuesses(s, guard, field, condition, where, feature, member);
  if (!rangeOperators.includes(operator)) return;
  if (guard.boundaries) {
    s.readValues = true; // the range's values
    values.forEach((value, i) => {
      if (onBoundary(toToken(value), condition.dataType, guard.boundaries!) !== false) return;
      const why = `${field} ${operator} ${toToken(value)}: ${field} is shown generalized, so a range on it must use its boundaries (${guard.boundaryText})`;
      s.refuse(PolicyErrorCode.RangeOffBoundary, why, `${where}.values[${i}]`, field, feature, decision);
    });
  } else s.noteAccepted(field, feature, guard, InferenceRisk.OffBoundaryRange, true);
}

/**
 * Inference protection counts guesses per request, not per list (#42): every value this
 * condition tests against the protected field (guessesOf) adds to one allowance per field for
 * the whole request, Or branches, sub-groups, Segment sets, Summary Where and Having included;
 * MaxProtectedInValues is that allowance. The condition that goes over it is CapExceeded.
 * Equal counts are fixed by the request's shape; an In list's length is not, and it already
 * marks the result readValues, so a shape reused from the cache never skips this count.
 */
function countGuesses(s: Sanitizer, guard: InferenceGuard, field: string, condition: Condition, where: string, feature: string, member: PolicyMember): void {
  const count = guessesOf(condition.operator, condition.values.length);
  if (count === 0) return;
  s.guesses.set(field, (s.guesses.get(field) ?? 0) + count);
  // The allowance is per stored column, whatever path reached it: two paths to one column (a
  // navigation there and back, such as orders.customer.contact.email beside contact.email) are
  // one allowance, not two.
  const entity = s.options.entities.nameOf(member.owner) ?? member.owner.name;
  const column = `${entity}.${member.publicName}`;
  const total = (s.guessedColumns.get(column)?.count ?? 0) + count;
  s.guessedColumns.set(column, { entity, field: member.publicName, count: total });
  s.guessingConditions.push({ field, where, feature, guard, operator: condition.operator });
  const allowance = guard.maxInValues;
  if (allowance !== null && total > allowance) {
    const why = `${total} values tested against ${field} (column ${column}, by any path) in one request (this ${condition.operator} brings ${count}); MaxProtectedInValues is ${allowance}, `
      + `an allowance per protected column and request (inference protection: ${field} is shown transformed)`;
    s.refuse(PolicyErrorCode.CapExceeded, why, `${where}.values`, field, feature, { level: null, source: guard.source });
  } else s.noteAccepted(field, feature, guard, InferenceRisk.LongInList, allowance === null && total > s.options.caps.maxProtectedInValues);
}

/**
 * A Summary under a group floor above 1 promises groups of at least `floor` rows, but a caller
 * who tests a protected field's values in its Where (or in a Having on its extreme) can meet the
 * floor with padding rows of its own choosing (Or id In (p1, p2)) and learn from whether the
 * group appears whether one row matched its guess (#42). Such tests are refused there unless the
 * field accepts InferenceRisk.SummaryGuess; ranges on a generalization's boundaries and
 * IsNull/IsNotNull stay (they reveal no finer than what is shown).
 */
export function refuseGuessesUnderFloor(s: Sanitizer, floor: number): void {
  for (const use of s.guessingConditions) {
    if (!guessOperators.includes(use.operator)) continue;
    if (use.guard.accepted.has(InferenceRisk.SummaryGuess)) {
      s.noteAccepted(use.field, use.feature, use.guard, InferenceRisk.SummaryGuess, true);
      continue;
    }
    const why = `${use.field} ${use.operator} in a Summary: ${use.field} is shown transformed and the group floor (${floor}) can be met with rows the request chooses, `
      + `so whether a group appears would confirm a guess (inference protection)`;
    const code = use.feature === "Where" ? PolicyErrorCode.FieldDeniedForWhere : PolicyErrorCode.FieldDeniedForAggregate;
    s.refuse(code, why, `${use.where}.operator`, use.field, use.feature, { level: null, source: use.guard.source });
  }
}
