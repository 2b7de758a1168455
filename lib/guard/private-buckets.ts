// Generalization buckets as declared keys of a private Summary (#45, docs/POLICY.md "Private
// aggregates"). A group key shown through a QpGeneralize Bucket with public bounds (its own
// lower/upper, or the field's QpPrivate bounds) has a public, finite set of keys: every bucket
// from lower's to upper's. Such a key is released like allowed values, every bucket, empty ones
// too. The database groups by the stored values; the row pass merges those groups by bucket
// (each bucket stands for its lower end, which the key's transform then shows as the bucket's
// text), so only aggregates that merge exactly are allowed for it.
// A date generalization (DatePart, or Truncate to a part) with ISO-date bounds likewise: every
// Year, Quarter, Month or Day from lower's to upper's, each bucket standing for its first day
// ("2024-03-01"), which DatePart shows as "2024-03" and Truncate as "2024-03-01". Its stored
// values are read as the transform reads them (asDate: UTC), so a value's bucket and its shown
// text agree on every target.
import { Aggregator } from "../shapes/enums.js";
import { DatePart, GeneralizeMode } from "../shapes/policy-enums.js";
import { asDate } from "../transform/strategies.js";
import type { GeneralizeOptions } from "../registry/qp-registry.js";
import type { TransformChain } from "../transform/field-transforms.js";
import { type Decimal, decimalText, multipleOf, toDecimal } from "../transform/decimal.js";
import { PolicyErrorCode, policyError } from "../errors/policy-exception.js";
import { compareNullable } from "../memory/values.js";

/** A number for a decimal: the same text gives the same number, so a bucket is found by its lower end. */
const numberOfDecimal = (d: Decimal) => Number(decimalText(d, d.scale));

/** A date generalization's part: DatePart's own, Truncate's (Day by default). */
const partOf = (g: GeneralizeOptions): DatePart => g.part ?? DatePart.Day;
const isDateMode = (g: GeneralizeOptions) => g.mode === GeneralizeMode.DatePart || g.mode === GeneralizeMode.Truncate;

/** A date's bucket as a count of parts since year 0 (months for Year, Quarter and Month; days for Day), UTC. */
function dateIndex(date: Date, part: DatePart): number {
  const y = date.getUTCFullYear();
  switch (part) {
    case DatePart.Year: return y * 12;
    case DatePart.Quarter: return y * 12 + Math.floor(date.getUTCMonth() / 3) * 3;
    case DatePart.Month: return y * 12 + date.getUTCMonth();
    case DatePart.Day: return Math.floor(Date.UTC(y, date.getUTCMonth(), date.getUTCDate()) / 86_400_000);
  }
}
/** Months or days between two buckets of a part. */
const dateStep = (part: DatePart) => (part === DatePart.Year ? 12 : part === DatePart.Quarter ? 3 : 1);
/** A bucket's first day as ISO text ("2024-03-01"). */
function dateOfIndex(index: number, part: DatePart): string {
  const at = part === DatePart.Day ? new Date(index * 86_400_000) : new Date(Date.UTC(Math.floor(index / 12), index % 12, 1));
  return at.toISOString().slice(0, 10);
}

/** The lower end of the bucket holding `value` (a date bucket's first day), or null (not a number, not a date). */
export function bucketOf(value: unknown, g: GeneralizeOptions): number | string | null {
  if (isDateMode(g)) {
    const date = asDate(value);
    return date && !Number.isNaN(date.getTime()) ? dateOfIndex(dateIndex(date, partOf(g)), partOf(g)) : null;
  }
  const d = value === null || value === undefined ? null : toDecimal(value);
  return d ? numberOfDecimal(multipleOf(d, toDecimal(g.step!)!, "floor").lo) : null;
}

/** Aggregates whose value over a bucket follows from its groups' values. */
const mergeable: readonly Aggregator[] = [Aggregator.Count, Aggregator.Sumation, Aggregator.Minimum, Aggregator.Maximum, Aggregator.FirstOrDefault, Aggregator.LastOrDefault];

/**
 * The key's buckets (their lower ends, ascending; a date bucket's first day as ISO text) when
 * they are declared: the key is shown through a Bucket generalization alone (no mutator before
 * it, no mask or default), with public bounds, or through a DatePart or date Truncate alone with
 * its own ISO-date bounds, and every aggregate merges (Count, Sumation, extremes, a private Average: weighted by
 * its group's row count). Null otherwise (the key is free-form). More than `max` buckets:
 * CapExceeded at groupBy.
 */
export function declaredBuckets(chain: TransformChain | null, privateBounds: { lower: number; upper: number } | null,
  aggregates: readonly { aggregator: Aggregator; alias: string; private: boolean }[], max: number): { bucket: GeneralizeOptions; declared: (number | string)[] } | null {
  const g = chain?.generalize;
  if (!chain || !g || chain.mutate || chain.mask || chain.defaultValue) return null;
  if (!aggregates.every((a) => mergeable.includes(a.aggregator) || (a.aggregator === Aggregator.Average && a.private))) return null;
  if (isDateMode(g)) {
    // Date bounds are the generalization's own ISO dates (QpPrivate's are numbers: not for dates).
    if (typeof g.lower !== "string" || typeof g.upper !== "string") return null;
    const part = partOf(g);
    const first = dateIndex(asDate(g.lower)!, part);
    const last = dateIndex(asDate(g.upper)!, part);
    const count = Math.floor((last - first) / dateStep(part)) + 1;
    if (count > max) policyError(PolicyErrorCode.CapExceeded, `a private Summary releases at most ${max} groups; the buckets of ${chain.source} between ${g.lower} and ${g.upper} are ${count}`, "groupBy");
    const declared: string[] = [];
    for (let i = first; i <= last; i += dateStep(part)) declared.push(dateOfIndex(i, part));
    return { bucket: g, declared };
  }
  if (g.mode !== GeneralizeMode.Bucket || !g.step) return null;
  const bounds = typeof g.lower === "number" && typeof g.upper === "number" ? { lower: g.lower, upper: g.upper } : privateBounds;
  if (!bounds) return null;
  const step = toDecimal(g.step)!;
  const first = multipleOf(toDecimal(bounds.lower)!, step, "floor").lo;
  const last = multipleOf(toDecimal(bounds.upper)!, step, "floor").lo;
  const scale = Math.max(first.scale, last.scale, step.scale);
  const at = (d: Decimal) => d.units * 10n ** BigInt(scale - d.scale);
  const s = at(step);
  const count = (at(last) - at(first)) / s + 1n;
  if (count > BigInt(max)) policyError(PolicyErrorCode.CapExceeded, `a private Summary releases at most ${max} groups; the buckets of ${chain.source} between ${bounds.lower} and ${bounds.upper} are ${count}`, "groupBy");
  const declared: number[] = [];
  for (let u = at(first); u <= at(last); u += s) declared.push(numberOfDecimal({ units: u, scale }));
  return { bucket: g, declared };
}

const numberOf = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

/**
 * The groups of stored values merged by bucket (keys with `bucket`; others as they are): each
 * bucket key becomes its lower end; Count, Sumation and `countAlias` add, extremes keep the
 * least or greatest, an Average is weighted by its group's `countAlias` rows. A stored value that
 * is no number (NULL) keeps a null key, which no declared bucket matches.
 */
export function mergeBuckets(rows: readonly Record<string, unknown>[], keys: readonly { name: string; bucket?: GeneralizeOptions }[],
  aggregates: readonly { alias: string; aggregator: Aggregator }[], countAlias: string): Record<string, unknown>[] {
  const merged = new Map<string, Record<string, unknown>>();
  for (const row of rows) {
    const keyed: Record<string, unknown> = { ...row };
    for (const k of keys) if (k.bucket) keyed[k.name] = bucketOf(row[k.name], k.bucket);
    const id = JSON.stringify(keys.map((k) => (keyed[k.name] === null || keyed[k.name] === undefined ? null : String(keyed[k.name]))));
    const into = merged.get(id);
    if (!into) {
      merged.set(id, keyed);
      continue;
    }
    const before = numberOf(into[countAlias]);
    const added = numberOf(row[countAlias]);
    for (const a of aggregates) {
      const x = into[a.alias] ?? null;
      const y = row[a.alias] ?? null;
      switch (a.aggregator) {
        case Aggregator.Count:
          into[a.alias] = numberOf(x) + numberOf(y);
          break;
        case Aggregator.Sumation:
          into[a.alias] = x === null && y === null ? null : numberOf(x) + numberOf(y);
          break;
        case Aggregator.Average:
          into[a.alias] = before + added === 0 ? null : (numberOf(x) * before + numberOf(y) * added) / (before + added);
          break;
        case Aggregator.Minimum:
        case Aggregator.FirstOrDefault:
          into[a.alias] = x === null ? y : y === null ? x : compareNullable(x, y, false) <= 0 ? x : y;
          break;
        default:
          into[a.alias] = x === null ? y : y === null ? x : compareNullable(x, y, false) >= 0 ? x : y;
      }
    }
    if (countAlias in into || countAlias in row) into[countAlias] = before + added;
  }
  return [...merged.values()];
}
