// The hostile size knobs the test suite's deterministic slice (fuzz.test.ts) runs at. The request
// bounds of issue #18 have landed, so depth, sets, lists, text length and U+0000 are drawn past
// their caps: each must come back as a LogicException. Only the list knob stays below the full
// hostility (100,000), to keep the slice's time: past every cap it guards, it adds nothing.
import type { HostileSizes } from "./arbitraries.js";

export const suiteHostility: HostileSizes = {
  // Past maxGroupDepth (32): CapExceeded at parse, before any stage recurses (5,000 levels
  // overflowed the stack on every target before the bound).
  maxDepth: 5_000,
  // Past maxConditionSets (100): 999 sets overflowed SQLite's expression depth before the bound.
  maxSets: 2_000,
  // Past maxRequestConditions (250) and maxFieldsPerList (200): the list knob also sizes ORed
  // conditions and orders. Their cost to the database is bounded since ORed conditions on one
  // collection share an EXISTS, collection orders are per-collection lookups and maxSubqueries
  // (16) caps the rest (100 ORed collection conditions took 7.5 s on PostgreSQL before). Long In
  // lists themselves are covered by test/engine/long-lists.test.ts (100,000 values).
  maxListLength: 400,
  // U+0000 in text: ValueHasInvalidCharacter on every target (PostgreSQL refused the parameter before).
  nul: true,
  // Past maxValueLength (10,000): CapExceeded (SQLite refused LIKE patterns over 50,000 characters).
  maxTextLength: 100_000,
  // Any number of collections on an order path (one across two collections, customer.orders.items.orderId,
  // was ~12 s on PostgreSQL as one MIN over a join; now a lookup per collection).
  maxOrderCollections: Infinity,
};
