// A shape planned and compiled for its source: statements with values bound, ready to run (and to cache).
import type { PreparedFilter } from "./run-filter.js";
import type { PreparedSummary } from "./run-summary.js";

export type PreparedShape = { readonly kind: "filter" | "segment"; readonly rows: PreparedFilter } | { readonly kind: "summary"; readonly summary: PreparedSummary };
