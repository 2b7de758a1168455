// The policy enumerations (docs/POLICY.md). PolicyFeature and PolicyLevel are numeric (flags and
// levels); the others are string enums with the exact member names.

export enum PolicyFeature { None = 0, Where = 1, Select = 2, Order = 4, Group = 8, Aggregate = 16, Segment = 32, All = 63 }
export enum MaskStrategy { Full = "Full", Partial = "Partial", Email = "Email", Phone = "Phone", Regex = "Regex", Fixed = "Fixed", Hash = "Hash", Null = "Null", Tokenize = "Tokenize" }
export enum GeneralizeMode { Round = "Round", Bucket = "Bucket", DatePart = "DatePart", Truncate = "Truncate" }
export enum DatePart { Year = "Year", Quarter = "Quarter", Month = "Month", Day = "Day" }
/**
 * What inference protection restricts on a field a caller sees transformed, each of which a
 * transform decorator may accept for its field (acceptInferenceRisks): being ordered, filtered
 * with operators beyond equality, with more guesses a request than MaxProtectedInValues
 * (LongInList, a per-request allowance since #42), (generalized fields) with ranges
 * off the generalization's boundaries, and summed or averaged (a sum is returned as computed, so
 * two overlapping Summaries give one row's value).
 */
export enum InferenceRisk {
  Order = "Order", Operators = "Operators", LongInList = "LongInList", OffBoundaryRange = "OffBoundaryRange", Aggregate = "Aggregate",
  /** Equality (Equal, IEqual, In, IIn) on the field in the Where of a Summary under a group floor, or in a Having on its extreme (#42). */
  SummaryGuess = "SummaryGuess",
}
export enum QpTier { Convenience = "Convenience", Strict = "Strict" }
export enum QpSubjectKind { Global = "Global", Tenant = "Tenant", Role = "Role", User = "User", Custom = "Custom" }
/**
 * What a rule does. Private (#45) is no feature decision: it makes a numeric field private for the
 * rule's subjects, with the rule's `private` settings (decisions/privacy.ts), on top of whatever
 * the features decide.
 * Exact (#45) lifts an overridable privacy (an overridable QpPrivate, a Private rule of a lower
 * rank) for the rule's subjects: they aggregate the field exactly again. A sealed QpPrivate wins
 * over it; the linter names every Exact rule.
 */
export enum PolicyEffect { Allow = "Allow", Mask = "Mask", Deny = "Deny", Private = "Private", Exact = "Exact" }
export enum PolicyAction {
  Allowed = "Allowed", Denied = "Denied", Dropped = "Dropped", Masked = "Masked",
  Injected = "Injected", Mutated = "Mutated", Defaulted = "Defaulted", Generalized = "Generalized",
  // #45 private aggregates: released with noise, groups released by declared keys or a noisy count, ε charged, a sticky answer reused.
  Noised = "Noised", Suppressed = "Suppressed", Charged = "Charged", Cached = "Cached",
}
export enum PolicyLevel { SealedAttribute = 1, DynamicUser = 2, DynamicRole = 3, DynamicTenant = 4, DynamicGlobal = 5, OverridableAttribute = 6 }
export enum StoreFailureMode { LastKnownGood = "LastKnownGood", FailClosed = "FailClosed", StaticOnly = "StaticOnly" }

/** The six features one by one, in flag order. */
export const singleFeatures = [PolicyFeature.Where, PolicyFeature.Select, PolicyFeature.Order, PolicyFeature.Group, PolicyFeature.Aggregate, PolicyFeature.Segment] as const;
