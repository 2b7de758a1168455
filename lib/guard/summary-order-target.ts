// What a Summary order names, read the one way the sanitizer decides it and the refused-request
// audit replays it: a public group key (dotted, dot-stripped or output name), the field an
// aggregate alias aggregates (a Count has none), or nothing the caller may name.
import { Aggregator } from "../shapes/enums.js";
import type { AggregateBy, OrderBy } from "../shapes/shapes.js";
import { namesGroupKey } from "../plan/build-summary.js";

export type SummaryOrderTarget =
  | { readonly kind: "empty" }
  | { readonly kind: "key"; readonly index: number }
  | { readonly kind: "aggregate"; readonly field: string | null }
  | { readonly kind: "unknown" };

export function summaryOrderTarget(order: OrderBy, publicKeys: readonly string[], aggregates: readonly AggregateBy[]): SummaryOrderTarget {
  const wanted = (order.field ?? "").trim().toLowerCase();
  if (wanted === "") return { kind: "empty" };
  const index = publicKeys.findIndex((p) => namesGroupKey(p, wanted));
  if (index >= 0) return { kind: "key", index };
  const aggregate = aggregates.find((a) => (a.alias ?? "").trim().toLowerCase() === wanted);
  if (!aggregate) return { kind: "unknown" };
  const field = aggregate.aggregator === Aggregator.Count ? "" : (aggregate.field ?? "").trim();
  return { kind: "aggregate", field: field === "" ? null : field };
}
