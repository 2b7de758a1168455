// PolicyException derives from LogicException, so existing handlers keep catching it; it adds
// the spec's integer error code.
import { LogicException } from "./logic-exception.js";

export enum PolicyErrorCode {
  FieldDeniedForWhere = 1, FieldDeniedForSelect = 2, FieldDeniedForOrder = 3, FieldDeniedForGroup = 4,
  FieldDeniedForAggregate = 5, FieldDeniedForSegment = 6, AllSelectsDenied = 7, OperatorNotAllowed = 8,
  CapExceeded = 9, PolicyRequired = 10, RequiredFilterMissing = 11, MissingContextValue = 12,
  AmbiguousFieldName = 13, QueryStringDenied = 14, AmbiguousGroupKey = 15, TransformRequiresMaterialization = 16,
  StoreUnavailable = 17, PolicyContextNotPrepared = 18, QueryCostExceeded = 19, GroupTooSmall = 20,
  MissingHashSalt = 21, MissingTokenVault = 22,
  /** Inference protection: a range on a generalized field that does not fall on its boundaries. */
  RangeOffBoundary = 23,
  /** The caller's guess budget (QpPolicyOptions.guessBudget) for a field it sees transformed is spent for the window: HTTP 429. */
  GuessBudgetExhausted = 24,
  /**
   * The admin API confined to the caller's tenant (admin option tenantConfined): a rule for
   * another tenant, a Global rule, or a Role/User/Custom rule, which reaches every tenant.
   */
  RuleOutsideTenant = 25,
  // #45 private aggregates
  /** A field private for the caller (QpPrivate, a Private rule) in a condition: a Where, or a Segment's condition set. */
  PrivateFieldDeniedForWhere = 26,
  /** A Having on an aggregate of a private field. */
  PrivateFieldDeniedForHaving = 27,
  /** A private field as a group key. */
  PrivateFieldDeniedForGroup = 28,
  /** An order on a private field, or on an aggregate of one. */
  PrivateFieldDeniedForOrder = 29,
  /** Minimum, Maximum, FirstOrDefault or LastOrDefault of a private field: each is one of its values. */
  PrivateFieldDeniedForAggregate = 30,
  /** An aggregate of a private field reached through a navigation: one owner's value would count once per row that reaches it. */
  PrivateAggregateAcrossNavigation = 31,
  /** The caller's privacy budget (QpPolicyOptions.privacyBudget) cannot pay for the request's private aggregates in this window: HTTP 429. */
  PrivacyBudgetExhausted = 32,
}

export class PolicyException extends LogicException {
  readonly errorCode: PolicyErrorCode;

  constructor(errorCode: PolicyErrorCode, message: string, path?: string) {
    super(PolicyErrorCode[errorCode], `${PolicyErrorCode[errorCode]} (${errorCode}): ${message}${path ? ` (at ${path})` : ""}`, path);
    this.name = "PolicyException";
    this.errorCode = errorCode;
  }
}

export function policyError(errorCode: PolicyErrorCode, message: string, path?: string): never {
  throw new PolicyException(errorCode, message, path);
}
