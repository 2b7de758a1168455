// The decorators and the configuration of the policy layer:
// - every one of the 18 decorators before #45 records into the one registry (the 19th, QpPrivate: test/privacy/declared-privacy.test.ts) (`overridable` false unless set),
//   subclasses inherit, QpEntity records requirePolicy;
// - every misuse throws QpDecoratorError at class definition, naming Class.property;
// - options and caps binding (defaults, minimums, unknown keys and caps, time spans, string
//   values from env-style configuration), addQpPolicies and configure-once;
// - two independent engines with different tiers in one process.
import assert from "node:assert/strict";
import {
  DatePart, GeneralizeMode, type IValueTransformer, MaskStrategy, Operator, PolicyErrorCode, PolicyFeature, QpAlias, QpAllowedValues,
  QpAudit, QpConfigurationError, QpCost, QpDecoratorError, QpDefault, QpDeny, QpDenied, QpDescribe, QpEntity, QpEntityCatalogue, QpForceWhere,
  QpFormat, QpGeneralize, QpMask, QpMutate, QpNoAggregate, QpNoGroup, QpNoOrder, QpNoSelect, QpNoWhere, QpOperators, QpPolicy,
  QpPolicyContext, QpPolicyEngine, QpRequireWhere, QpSubjectKind, QpTier, QpTruncate, StoreFailureMode, addQpPolicies, applyPolicy,
  capDefaults, qpRegistry,
} from "../../lib/index.js";
import { resetDefaultPolicyEngineForTests } from "../../lib/engine/engine.js";
import { Doctor, Patient, Visit } from "./domain.js";
import { expectPolicyError, patientDefaultKeys, t1, t2, tenantContext, whereShape, cond, type Guarded, assertTenant, idsOf } from "./helpers.js";
import { allPolicyData, forEachPolicyTarget } from "./policy-targets.js";

class Upper implements IValueTransformer {
  transform(value: unknown): unknown {
    return typeof value === "string" ? value.toUpperCase() : value;
  }
}

/** The one attribute of `kind` on Class.property. */
function attribute(target: Function, property: string, kind: string): Record<string, unknown> {
  const found = qpRegistry.fieldAttributes(target, property).filter((a) => a.kind === kind);
  assert.equal(found.length, 1, `${target.name}.${property} should carry one ${kind} attribute, has ${JSON.stringify(qpRegistry.fieldAttributes(target, property))}`);
  return found[0] as unknown as Record<string, unknown>;
}

/** Asserts defining a class throws QpDecoratorError naming Class.property and mentioning `about`. */
function expectMisuse(define: () => unknown, classAndProperty: string, about?: RegExp): void {
  assert.throws(define, (error: unknown) => {
    assert.ok(error instanceof QpDecoratorError, `expected QpDecoratorError, got ${String(error)}`);
    assert.equal(error.name, "QpDecoratorError");
    assert.ok(error.message.includes(classAndProperty), `message "${error.message}" should name ${classAndProperty}`);
    if (about) assert.match(error.message, about);
    return true;
  });
}

function expectConfigError(action: () => unknown, mentions: RegExp): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(error instanceof QpConfigurationError, `expected QpConfigurationError, got ${String(error)}`);
    assert.match(error.message, mentions);
    return true;
  });
}

// ---------------------------------------------------------------------------------------------

describe("Policy decorators: registry", () => {
  it("records the decorated test domain", () => {
    assert.deepEqual(qpRegistry.fieldAttributes(Patient, "ssn"), [{ decorator: "QpDenied", overridable: false, kind: "access", features: 63 }]);
    assert.deepEqual(attribute(Patient, "tenantId", "forceWhere"), { decorator: "QpForceWhere", overridable: false, kind: "forceWhere", operator: Operator.Equal, value: undefined, contextValue: "tenantId" });
    assert.deepEqual(attribute(Patient, "email", "alias"), { decorator: "QpAlias", overridable: false, kind: "alias", name: "mail" });
    assert.deepEqual(attribute(Patient, "email", "operators"), { decorator: "QpOperators", overridable: false, kind: "operators", allow: [Operator.Equal, Operator.In], deny: [] });
  });

  it("records both access attributes of Patient.ward with their own overridable flag", () => {
    const access = qpRegistry.fieldAttributes(Patient, "ward").filter((a) => a.kind === "access");
    assert.deepEqual(
      access.map((a) => ({ decorator: a.decorator, overridable: a.overridable, features: (a as { features: number }).features })).sort((a, b) => a.features - b.features),
      [{ decorator: "QpNoGroup", overridable: false, features: 8 }, { decorator: "QpNoAggregate", overridable: true, features: 16 }],
    );
    assert.deepEqual(attribute(Patient, "salary", "access"), { decorator: "QpDeny", overridable: false, kind: "access", features: PolicyFeature.Group | PolicyFeature.Aggregate });
    assert.deepEqual(attribute(Patient, "notes", "cost"), { decorator: "QpCost", overridable: false, kind: "cost", weight: 400 });
    assert.deepEqual(attribute(Visit, "patientId", "requireWhere"), { decorator: "QpRequireWhere", overridable: false, kind: "requireWhere", operators: null });
    assert.deepEqual(attribute(Doctor, "secretCode", "access"), { decorator: "QpDenied", overridable: false, kind: "access", features: 63 });
    assert.deepEqual(attribute(Patient, "doctor", "access"), { decorator: "QpDenied", overridable: false, kind: "access", features: 63 });
    assert.deepEqual(qpRegistry.entityOptions(Patient), { requirePolicy: true, overridable: false });
    assert.equal(qpRegistry.entityOptions(Visit), null);
    assert.deepEqual(qpRegistry.fieldAttributes(Patient, "name").map((a) => a.kind), ["describe"]);
    assert.deepEqual(qpRegistry.fieldAttributes(Patient, "id"), []);
  });

  it("records each access decorator with its features, sealed by default", () => {
    class Access {
      @QpDeny(PolicyFeature.Where | PolicyFeature.Order) a!: string;
      @QpDenied() b!: string;
      @QpNoWhere() c!: string;
      @QpNoSelect() d!: string;
      @QpNoOrder() e!: string;
      @QpNoGroup() f!: string;
      @QpNoAggregate() g!: string;
      @QpDeny(PolicyFeature.Segment) h!: string;
      @QpDeny(PolicyFeature.All | 64) i!: string;
    }
    const expected: [string, string, number][] = [
      ["a", "QpDeny", 5], ["b", "QpDenied", 63], ["c", "QpNoWhere", 1], ["d", "QpNoSelect", 2], ["e", "QpNoOrder", 4],
      ["f", "QpNoGroup", 8], ["g", "QpNoAggregate", 16], ["h", "QpDeny", 32], ["i", "QpDeny", 63],
    ];
    for (const [property, decorator, features] of expected) {
      assert.deepEqual(qpRegistry.fieldAttributes(Access, property), [{ decorator, overridable: false, kind: "access", features }], property);
    }
  });

  it("records overridable: true on every decorator that is given it", () => {
    const o = { overridable: true } as const;
    class Overridden {
      @QpDeny(PolicyFeature.Where, o) a!: string;
      @QpDenied(o) b!: string;
      @QpNoWhere(o) c!: string;
      @QpNoSelect(o) d!: string;
      @QpNoOrder(o) e!: string;
      @QpNoGroup(o) f!: string;
      @QpNoAggregate(o) g!: string;
      @QpOperators({ allow: [Operator.Equal], overridable: true }) h!: string;
      @QpAlias("pubI", o) i!: string;
      @QpForceWhere({ operator: Operator.Equal, value: "x", overridable: true }) j!: string;
      @QpRequireWhere({ overridable: true }) k!: string;
      @QpMask({ strategy: MaskStrategy.Full, overridable: true }) l!: string;
      @QpMutate(Upper, o) m!: string;
      @QpDefault("d", o) n!: string;
      @QpGeneralize({ mode: GeneralizeMode.Round, step: 10, overridable: true }) p!: number;
      @QpTruncate(3, o) q!: string;
      @QpFormat("{0}", o) r!: string;
      @QpDescribe({ label: "R", overridable: true }) s!: string;
      @QpAllowedValues(["a"], o) t!: string;
      @QpCost(2, o) u!: string;
      @QpAudit(PolicyFeature.Select, o) v!: string;
    }
    const properties = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "p", "q", "r", "s", "t", "u", "v"];
    for (const property of properties) {
      const attributes = qpRegistry.fieldAttributes(Overridden, property);
      assert.equal(attributes.length, 1, property);
      assert.equal(attributes[0]!.overridable, true, `${property} (${attributes[0]!.decorator})`);
    }
  });

  it("records the other decorators with their parameters, sealed by default", () => {
    class Others {
      @QpOperators({ allow: [Operator.Equal, Operator.In], deny: [Operator.In] }) a!: string;
      @QpOperators({ deny: [Operator.Contains] }) b!: string;
      @QpAlias("publicC") c!: string;
      @QpForceWhere({ operator: Operator.Equal, value: "v" }) d!: string;
      @QpForceWhere({ operator: Operator.In, contextValue: "ids" }) e!: string;
      @QpRequireWhere() f!: string;
      @QpRequireWhere({ operators: [Operator.GreaterThan] }) g!: number;
      @QpMask({ strategy: MaskStrategy.Partial, keepStart: 1, keepEnd: 2, maskChar: "#" }) h!: string;
      @QpMask({ strategy: MaskStrategy.Regex, pattern: "[0-9]", replacement: "x" }) i!: string;
      @QpMutate(Upper) j!: string;
      @QpDefault() k!: string;
      @QpDefault("n/a", { allowAggregate: true, minGroupSize: 3 }) l!: string;
      @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 5 }) m!: number;
      @QpGeneralize({ mode: GeneralizeMode.DatePart, part: DatePart.Year }) n!: Date;
      @QpTruncate(4) p!: string;
      @QpTruncate(4, { ellipsis: "…" }) q!: string;
      @QpFormat("{0:N2}") r!: number;
      @QpDescribe({ label: "L", description: "D", group: "G", order: 2 }) s!: string;
      @QpAllowedValues(["x", "y"]) t!: string;
      @QpCost(0) u!: string;
      @QpCost(7.5) v!: string;
      @QpAudit(PolicyFeature.Select | PolicyFeature.Where) w!: string;
    }
    const sealed = { overridable: false };
    assert.deepEqual(attribute(Others, "a", "operators"), { decorator: "QpOperators", ...sealed, kind: "operators", allow: [Operator.Equal, Operator.In], deny: [Operator.In] });
    assert.deepEqual(attribute(Others, "b", "operators"), { decorator: "QpOperators", ...sealed, kind: "operators", allow: null, deny: [Operator.Contains] });
    assert.deepEqual(attribute(Others, "c", "alias"), { decorator: "QpAlias", ...sealed, kind: "alias", name: "publicC" });
    assert.deepEqual(attribute(Others, "d", "forceWhere"), { decorator: "QpForceWhere", ...sealed, kind: "forceWhere", operator: Operator.Equal, value: "v", contextValue: undefined });
    assert.deepEqual(attribute(Others, "e", "forceWhere"), { decorator: "QpForceWhere", ...sealed, kind: "forceWhere", operator: Operator.In, value: undefined, contextValue: "ids" });
    assert.deepEqual(attribute(Others, "f", "requireWhere"), { decorator: "QpRequireWhere", ...sealed, kind: "requireWhere", operators: null });
    assert.deepEqual(attribute(Others, "g", "requireWhere"), { decorator: "QpRequireWhere", ...sealed, kind: "requireWhere", operators: [Operator.GreaterThan] });
    const h = attribute(Others, "h", "mask");
    assert.deepEqual([h.decorator, h.overridable], ["QpMask", false]);
    assert.deepEqual(h.options, { strategy: MaskStrategy.Partial, keepStart: 1, keepEnd: 2, maskChar: "#" });
    assert.deepEqual((attribute(Others, "i", "mask").options as Record<string, unknown>).pattern, "[0-9]");
    const j = attribute(Others, "j", "mutate");
    assert.equal(j.transformer, Upper);
    assert.equal(j.overridable, false);
    assert.equal(attribute(Others, "k", "default").value, undefined);
    const l = attribute(Others, "l", "default");
    assert.equal(l.value, "n/a");
    assert.deepEqual(l.options, { allowAggregate: true, minGroupSize: 3 });
    assert.deepEqual(attribute(Others, "m", "generalize").options, { mode: GeneralizeMode.Bucket, step: 5 });
    assert.deepEqual(attribute(Others, "n", "generalize").options, { mode: GeneralizeMode.DatePart, part: DatePart.Year });
    const p = attribute(Others, "p", "truncate");
    assert.deepEqual([p.decorator, p.length, p.ellipsis, p.overridable], ["QpTruncate", 4, "...", false], "the default ellipsis is ...");
    assert.equal(attribute(Others, "q", "truncate").ellipsis, "…");
    assert.equal(attribute(Others, "r", "format").format, "{0:N2}");
    assert.deepEqual(attribute(Others, "s", "describe"), { decorator: "QpDescribe", ...sealed, kind: "describe", label: "L", description: "D", group: "G", order: 2 });
    assert.deepEqual(attribute(Others, "t", "allowedValues"), { decorator: "QpAllowedValues", ...sealed, kind: "allowedValues", values: ["x", "y"] });
    assert.deepEqual(attribute(Others, "u", "cost"), { decorator: "QpCost", ...sealed, kind: "cost", weight: 0 });
    assert.equal(attribute(Others, "v", "cost").weight, 7.5);
    assert.deepEqual(attribute(Others, "w", "audit"), { decorator: "QpAudit", ...sealed, kind: "audit", features: 3 });
  });

  it("records QpEntity on the class, requirePolicy false unless set", () => {
    @QpEntity({ requirePolicy: true }) class Required {}
    @QpEntity() class NotRequired {}
    @QpEntity({ overridable: true }) class Overridable {}
    class Plain {}
    assert.deepEqual(qpRegistry.entityOptions(Required), { requirePolicy: true, overridable: false });
    assert.deepEqual(qpRegistry.entityOptions(NotRequired), { requirePolicy: false, overridable: false });
    assert.deepEqual(qpRegistry.entityOptions(Overridable), { requirePolicy: false, overridable: true });
    assert.equal(qpRegistry.entityOptions(Plain), null);
  });

  it("lets a subclass inherit its ancestors' attributes, its own first", () => {
    @QpEntity({ requirePolicy: true })
    class Base {
      @QpDenied() secret!: string;
      @QpAlias("publicName") name!: string;
    }
    class Derived extends Base {
      @QpCost(9) secret2!: string;
      @QpNoOrder() override name!: string;
    }
    assert.deepEqual(qpRegistry.fieldAttributes(Derived, "secret").map((a) => a.decorator), ["QpDenied"]);
    assert.deepEqual(qpRegistry.fieldAttributes(Derived, "name").map((a) => a.decorator), ["QpNoOrder", "QpAlias"]);
    assert.deepEqual(qpRegistry.fieldAttributes(Base, "name").map((a) => a.decorator), ["QpAlias"], "the base class is not changed by its subclass");
    assert.deepEqual([...qpRegistry.fields(Derived).keys()].sort(), ["name", "secret", "secret2"]);
    assert.equal(qpRegistry.entityOptions(Derived)?.requirePolicy, true);
  });

  it("bumps the registry's change count on every registration", () => {
    const before = qpRegistry.changeCount;
    class Counted {
      @QpNoWhere() a!: string;
      @QpNoSelect() @QpNoOrder() b!: string;
    }
    assert.ok(Counted);
    assert.equal(qpRegistry.changeCount, before + 3);
  });
});

// ---------------------------------------------------------------------------------------------

describe("Policy decorators: misuse at class definition", () => {
  it("QpForceWhere needs exactly one of value and contextValue", () => {
    expectMisuse(() => { class ForceNeither { @QpForceWhere({ operator: Operator.Equal }) tenant!: string; } return ForceNeither; }, "ForceNeither.tenant", /exactly one of value or contextValue/);
    expectMisuse(() => { class ForceBoth { @QpForceWhere({ operator: Operator.Equal, value: "a", contextValue: "b" }) tenant!: string; } return ForceBoth; }, "ForceBoth.tenant", /exactly one/);
    expectMisuse(() => { class ForceEmptyContext { @QpForceWhere({ operator: Operator.Equal, contextValue: "" }) tenant!: string; } return ForceEmptyContext; }, "ForceEmptyContext.tenant", /exactly one/);
    // An empty string value is a value (a forced "" is legitimate); with a context name as well it is two.
    expectMisuse(() => { class ForceEmptyBoth { @QpForceWhere({ operator: Operator.Equal, value: "", contextValue: "t" }) tenant!: string; } return ForceEmptyBoth; }, "ForceEmptyBoth.tenant");
  });

  it("QpForceWhere takes a known one-value operator", () => {
    expectMisuse(() => { class ForceUnknownOp { @QpForceWhere({ operator: "Like" as Operator, value: "a" }) tenant!: string; } return ForceUnknownOp; }, "ForceUnknownOp.tenant", /unknown operator "Like"/);
    for (const operator of [Operator.Between, Operator.NotBetween, Operator.IsNull, Operator.IsNotNull]) {
      expectMisuse(() => { class ForceArity { @QpForceWhere({ operator, value: "a" }) tenant!: string; } return ForceArity; }, "ForceArity.tenant", new RegExp(operator));
    }
  });

  it("QpOperators must allow at least one known operator", () => {
    expectMisuse(() => { class OpsNone { @QpOperators({ allow: [] }) email!: string; } return OpsNone; }, "OpsNone.email", /allows no operator/);
    expectMisuse(() => { class OpsCancel { @QpOperators({ allow: [Operator.Equal], deny: [Operator.Equal] }) email!: string; } return OpsCancel; }, "OpsCancel.email", /allows no operator/);
    expectMisuse(() => { class OpsAllDenied { @QpOperators({ deny: Object.values(Operator) }) email!: string; } return OpsAllDenied; }, "OpsAllDenied.email", /allows no operator/);
    expectMisuse(() => { class OpsUnknown { @QpOperators({ allow: ["Like" as Operator] }) email!: string; } return OpsUnknown; }, "OpsUnknown.email", /unknown operator "Like"/);
    expectMisuse(() => { class OpsUnknownDeny { @QpOperators({ deny: ["equal" as Operator] }) email!: string; } return OpsUnknownDeny; }, "OpsUnknownDeny.email", /unknown operator "equal"/);
  });

  it("QpAlias: one per property, unique per class (any case), an identifier", () => {
    expectMisuse(() => { class AliasTwice { @QpAlias("a") @QpAlias("b") email!: string; } return AliasTwice; }, "AliasTwice.email", /two QpAlias/);
    expectMisuse(() => { class AliasSameTwice { @QpAlias("a") @QpAlias("a") email!: string; } return AliasSameTwice; }, "AliasSameTwice.email", /two QpAlias/);
    expectMisuse(() => { class AliasDuplicate { @QpAlias("contact") email!: string; @QpAlias("Contact") phone!: string; } return AliasDuplicate; }, "AliasDuplicate.phone", /already the alias of AliasDuplicate\.email/);
    for (const bad of ["", " mail", "mail ", "1mail", "e-mail", "e.mail", "mail!", "a b", "$x"]) {
      expectMisuse(() => { class AliasInvalid { @QpAlias(bad) email!: string; } return AliasInvalid; }, "AliasInvalid.email", /must be an identifier/);
    }
    // Valid identifiers, including non-ASCII letters and underscores.
    class AliasValid {
      @QpAlias("_x") a!: string;
      @QpAlias("émile2") b!: string;
      @QpAlias("Z_9") c!: string;
    }
    assert.deepEqual(["a", "b", "c"].map((p) => attribute(AliasValid, p, "alias").name), ["_x", "émile2", "Z_9"]);
  });

  it("QpMask: Regex needs a pattern the linear-time engine runs; known strategy; one mask character; non-negative keeps", () => {
    expectMisuse(() => { class MaskNoPattern { @QpMask({ strategy: MaskStrategy.Regex }) ssn!: string; } return MaskNoPattern; }, "MaskNoPattern.ssn", /Regex needs a pattern/);
    expectMisuse(() => { class MaskEmptyPattern { @QpMask({ strategy: MaskStrategy.Regex, pattern: "" }) ssn!: string; } return MaskEmptyPattern; }, "MaskEmptyPattern.ssn", /Regex needs a pattern/);
    expectMisuse(() => { class MaskBadPattern { @QpMask({ strategy: MaskStrategy.Regex, pattern: "(" }) ssn!: string; } return MaskBadPattern; }, "MaskBadPattern.ssn", /does not compile/);
    expectMisuse(() => { class MaskLookahead { @QpMask({ strategy: MaskStrategy.Regex, pattern: "\\d(?=\\d{4})" }) ssn!: string; } return MaskLookahead; }, "MaskLookahead.ssn", /lookarounds .* not supported/);
    expectMisuse(() => { class MaskStrategyUnknown { @QpMask({ strategy: "Blur" as MaskStrategy }) ssn!: string; } return MaskStrategyUnknown; }, "MaskStrategyUnknown.ssn", /unknown strategy "Blur"/);
    expectMisuse(() => { class MaskCharTwo { @QpMask({ strategy: MaskStrategy.Partial, maskChar: "**" }) ssn!: string; } return MaskCharTwo; }, "MaskCharTwo.ssn", /maskChar/);
    expectMisuse(() => { class MaskCharEmpty { @QpMask({ strategy: MaskStrategy.Partial, maskChar: "" }) ssn!: string; } return MaskCharEmpty; }, "MaskCharEmpty.ssn", /maskChar/);
    expectMisuse(() => { class MaskKeepNegative { @QpMask({ strategy: MaskStrategy.Partial, keepStart: -1 }) ssn!: string; } return MaskKeepNegative; }, "MaskKeepNegative.ssn", /keepStart/);
    expectMisuse(() => { class MaskKeepFraction { @QpMask({ strategy: MaskStrategy.Partial, keepEnd: 1.5 }) ssn!: string; } return MaskKeepFraction; }, "MaskKeepFraction.ssn", /keepEnd/);
    expectMisuse(() => { class MaskGroupZero { @QpMask({ strategy: MaskStrategy.Full, minGroupSize: 0 }) ssn!: string; } return MaskGroupZero; }, "MaskGroupZero.ssn", /minGroupSize/);
    // A one-code-point mask character outside the BMP is one character.
    class MaskEmoji { @QpMask({ strategy: MaskStrategy.Partial, maskChar: "😀" }) ssn!: string; }
    assert.equal((attribute(MaskEmoji, "ssn", "mask").options as { maskChar: string }).maskChar, "😀");
  });

  it("QpTruncate needs an integer length of at least 1", () => {
    for (const length of [0, -1, 1.5, Number.NaN]) {
      expectMisuse(() => { class TruncateBad { @QpTruncate(length) note!: string; } return TruncateBad; }, "TruncateBad.note", /length must be an integer of at least 1/);
    }
    expectMisuse(() => { class TruncateGroup { @QpTruncate(3, { minGroupSize: 0.5 }) note!: string; } return TruncateGroup; }, "TruncateGroup.note", /minGroupSize/);
  });

  it("QpCost needs a finite weight of at least 0", () => {
    for (const weight of [-1, -0.001, Number.NaN, Number.POSITIVE_INFINITY]) {
      expectMisuse(() => { class CostBad { @QpCost(weight) notes!: string; } return CostBad; }, "CostBad.notes", /weight must be a number of at least 0/);
    }
  });

  it("QpGeneralize: Bucket needs a step, steps are positive, DatePart needs a part, decimals are non-negative integers, bounds are a Bucket's numbers or a date generalization's ISO dates", () => {
    expectMisuse(() => { class BucketNoStep { @QpGeneralize({ mode: GeneralizeMode.Bucket }) age!: number; } return BucketNoStep; }, "BucketNoStep.age", /Bucket needs a step/);
    expectMisuse(() => { class BucketZero { @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 0 }) age!: number; } return BucketZero; }, "BucketZero.age", /step must be greater than 0/);
    expectMisuse(() => { class RoundNegative { @QpGeneralize({ mode: GeneralizeMode.Round, step: -5 }) age!: number; } return RoundNegative; }, "RoundNegative.age", /step must be greater than 0/);
    expectMisuse(() => { class DatePartNone { @QpGeneralize({ mode: GeneralizeMode.DatePart }) born!: Date; } return DatePartNone; }, "DatePartNone.born", /DatePart needs a part/);
    expectMisuse(() => { class DecimalsBad { @QpGeneralize({ mode: GeneralizeMode.Round, decimals: -1 }) age!: number; } return DecimalsBad; }, "DecimalsBad.age", /decimals/);
    expectMisuse(() => { class ModeUnknown { @QpGeneralize({ mode: "Blur" as GeneralizeMode }) age!: number; } return ModeUnknown; }, "ModeUnknown.age", /unknown mode "Blur"/);
    // A Bucket's public range (#45): both bounds, finite, in order, on a Bucket only.
    expectMisuse(() => { class BoundAlone { @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 10, lower: 0 }) age!: number; } return BoundAlone; }, "BoundAlone.age", /lower and upper go together/);
    expectMisuse(() => { class BoundsReversed { @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 10, lower: 5, upper: 1 }) age!: number; } return BoundsReversed; }, "BoundsReversed.age", /lower at most upper/);
    expectMisuse(() => { class BoundsInfinite { @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 10, lower: 0, upper: Infinity }) age!: number; } return BoundsInfinite; }, "BoundsInfinite.age", /finite bounds of a Bucket/);
    expectMisuse(() => { class BoundsOnRound { @QpGeneralize({ mode: GeneralizeMode.Round, step: 10, lower: 0, upper: 100 }) age!: number; } return BoundsOnRound; }, "BoundsOnRound.age", /bounds of a Bucket/);
    expectMisuse(() => { class DatesOnBucket { @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 10, lower: "2024-01-01", upper: "2024-12-31" }) age!: number; } return DatesOnBucket; }, "DatesOnBucket.age", /finite bounds of a Bucket/);
    // A date generalization's public range: ISO dates (YYYY-MM-DD) that exist, both, in order.
    expectMisuse(() => { class DateAlone { @QpGeneralize({ mode: GeneralizeMode.DatePart, part: DatePart.Month, upper: "2024-12-31" }) born!: Date; } return DateAlone; }, "DateAlone.born", /lower and upper go together/);
    expectMisuse(() => { class DateNumbers { @QpGeneralize({ mode: GeneralizeMode.DatePart, part: DatePart.Year, lower: 2020, upper: 2024 }) born!: Date; } return DateNumbers; }, "DateNumbers.born", /are ISO dates \(YYYY-MM-DD\)/);
    expectMisuse(() => { class DateTimes { @QpGeneralize({ mode: GeneralizeMode.DatePart, part: DatePart.Year, lower: "2020-01-01T00:00:00Z", upper: "2024-01-01" }) born!: Date; } return DateTimes; }, "DateTimes.born", /are ISO dates/);
    expectMisuse(() => { class DateImpossible { @QpGeneralize({ mode: GeneralizeMode.Truncate, part: DatePart.Month, lower: "2023-02-30", upper: "2024-01-01" }) born!: Date; } return DateImpossible; }, "DateImpossible.born", /are ISO dates/);
    expectMisuse(() => { class DatesReversed { @QpGeneralize({ mode: GeneralizeMode.DatePart, part: DatePart.Month, lower: "2024-02-01", upper: "2024-01-31" }) born!: Date; } return DatesReversed; }, "DatesReversed.born", /lower at most upper/);
    class DatesFine {
      @QpGeneralize({ mode: GeneralizeMode.DatePart, part: DatePart.Month, lower: "2024-01-01", upper: "2024-12-31" }) born!: Date;
      @QpGeneralize({ mode: GeneralizeMode.Truncate, part: DatePart.Quarter, lower: "2024-01-01", upper: "2024-01-01" }) seen!: Date;
    }
    assert.ok(DatesFine);
  });

  it("the other decorators refuse their misuses", () => {
    expectMisuse(() => { class DenyNothing { @QpDeny(PolicyFeature.None) a!: string; } return DenyNothing; }, "DenyNothing.a", /names no feature/);
    expectMisuse(() => { class DenyOutside { @QpDeny(64 as PolicyFeature) a!: string; } return DenyOutside; }, "DenyOutside.a", /names no feature/);
    expectMisuse(() => { class AuditNothing { @QpAudit(PolicyFeature.None) a!: string; } return AuditNothing; }, "AuditNothing.a", /names no feature/);
    expectMisuse(() => { class RequireEmpty { @QpRequireWhere({ operators: [] }) a!: number; } return RequireEmpty; }, "RequireEmpty.a", /empty operator list/);
    expectMisuse(() => { class AllowedEmpty { @QpAllowedValues([]) a!: string; } return AllowedEmpty; }, "AllowedEmpty.a", /non-empty list of strings/);
    expectMisuse(() => { class AllowedNumbers { @QpAllowedValues([1, 2] as unknown as string[]) a!: string; } return AllowedNumbers; }, "AllowedNumbers.a", /non-empty list of strings/);
    expectMisuse(() => { class MutateNotTransformer { @QpMutate(class NoTransform {} as unknown as new () => IValueTransformer) a!: string; } return MutateNotTransformer; }, "MutateNotTransformer.a", /IValueTransformer/);
    expectMisuse(() => { class FormatEmpty { @QpFormat("") a!: string; } return FormatEmpty; }, "FormatEmpty.a", /format string/);
    expectMisuse(() => { class DefaultGroup { @QpDefault("x", { minGroupSize: -2 }) a!: string; } return DefaultGroup; }, "DefaultGroup.a", /minGroupSize/);
    expectMisuse(() => { class MutateGroup { @QpMutate(Upper, { minGroupSize: 0 }) a!: string; } return MutateGroup; }, "MutateGroup.a", /minGroupSize/);
    expectMisuse(() => { class FormatGroup { @QpFormat("{0}", { minGroupSize: 0 }) a!: string; } return FormatGroup; }, "FormatGroup.a", /minGroupSize/);
    expectMisuse(() => { class GeneralizeGroup { @QpGeneralize({ mode: GeneralizeMode.Round, minGroupSize: 0 }) a!: number; } return GeneralizeGroup; }, "GeneralizeGroup.a", /minGroupSize/);
  });

  it("a symbol-keyed property is refused, naming the class", () => {
    const key = Symbol("hidden");
    class SymbolHolder {}
    expectMisuse(() => QpDenied()(SymbolHolder.prototype, key), "SymbolHolder.Symbol(hidden)", /named property/);
  });
});

// ---------------------------------------------------------------------------------------------

describe("Policy options and caps", () => {
  const spec = {
    maxPageSize: 1000, maxConditions: 50, maxOrderFields: 10, maxNavigationDepth: 4, maxQueryCost: 1000, defaultFieldCost: 1,
    maxAuditEvents: 10000, minGroupSize: 5, schemaDepth: 2, schemaCycleLimit: 2, maxSchemaFields: 2000,
    // 3.0's request bounds (docs/POLICY.md "Options and caps").
    maxGroupDepth: 32, maxConditionSets: 100, maxRequestConditions: 250, maxConditionGroups: 100, maxValuesPerList: 100000,
    maxValueLength: 10000, maxFieldsPerList: 200, maxPathSegments: 10, maxSubqueries: 16,
    // Inference protection's In cap (docs/POLICY.md "Inference protection").
    maxProtectedInValues: 10,
    // A required filter must narrow (#42): the In that satisfies QpRequireWhere (docs/POLICY.md "Blocked actions").
    maxRequiredInValues: 10,
    // A page cursor's length (#44): a row's sort keys, encrypted (docs/SHAPES.md "Cursor pages and counts").
    maxCursorLength: 16_384,
    // count "estimated" counts exactly up to this many rows (#44).
    maxExactEstimate: 10_000,
    // Rows of one export (#44).
    maxExportRows: 1_000_000,
  };
  const pascal = (cap: string) => cap.charAt(0).toUpperCase() + cap.slice(1);

  it("every cap has the spec's default", () => {
    assert.deepEqual({ ...new QpPolicyEngine().options.caps }, spec);
    assert.deepEqual({ ...capDefaults }, spec);
    const options = new QpPolicyEngine().options;
    assert.equal(options.tier, QpTier.Convenience);
    assert.equal(options.dryRun, false);
    assert.equal(options.hashSalt, undefined);
    assert.equal(options.inferenceProtection, false, "off by default: the spec's behaviour");
    assert.ok(options.entities instanceof QpEntityCatalogue);
  });

  it("caps and options are frozen at startup", () => {
    const engine = new QpPolicyEngine({ caps: { maxPageSize: 7 } });
    assert.throws(() => { (engine.options.caps as { maxPageSize: number }).maxPageSize = 9999; }, TypeError);
    assert.throws(() => { (engine.options as { tier: QpTier }).tier = QpTier.Strict; }, TypeError);
    assert.equal(engine.options.caps.maxPageSize, 7);
    assert.equal(engine.options.tier, QpTier.Convenience);
  });

  it("every cap accepts its minimum and refuses one below (code options and configuration section)", () => {
    for (const cap of Object.keys(spec) as (keyof typeof spec)[]) {
      const minimum = cap === "defaultFieldCost" ? 0 : 1;
      assert.equal(new QpPolicyEngine({ caps: { [cap]: minimum } }).options.caps[cap], minimum, cap);
      expectConfigError(() => new QpPolicyEngine({ caps: { [cap]: minimum - 1 } }), new RegExp(`${cap}.*below the minimum of ${minimum}`));
      assert.equal(addQpPoliciesDry({ Caps: { [pascal(cap)]: String(minimum) } }).caps[cap], minimum, `${cap} from a string`);
      expectConfigError(() => addQpPoliciesDry({ Caps: { [pascal(cap)]: minimum - 1 } }), new RegExp(`QueryLib\\.Policies\\.caps\\.${pascal(cap)}.*below the minimum`));
    }
  });

  it("maxGroupDepth has a maximum (every stage recurses once per level): above it fails startup", () => {
    assert.equal(new QpPolicyEngine({ caps: { maxGroupDepth: 256 } }).options.caps.maxGroupDepth, 256);
    expectConfigError(() => new QpPolicyEngine({ caps: { maxGroupDepth: 257 } }), /maxGroupDepth: 257 is above the maximum of 256/);
    expectConfigError(() => addQpPoliciesDry({ Caps: { MaxGroupDepth: "100000" } }), /QueryLib\.Policies\.caps\.MaxGroupDepth.*above the maximum of 256/);
  });

  it("caps must be integers", () => {
    for (const bad of [2.5, "2.5", "abc", "", true, null, "1e3", "0x10"]) {
      expectConfigError(() => new QpPolicyEngine({ caps: { maxPageSize: bad as number } }), /maxPageSize/);
    }
    assert.equal(new QpPolicyEngine({ caps: { maxPageSize: " 25 " as unknown as number } }).options.caps.maxPageSize, 25);
  });

  it("an unknown cap or option fails startup, naming it", () => {
    expectConfigError(() => new QpPolicyEngine({ caps: { maxPageSzie: 10 } as never }), /maxPageSzie: unknown cap/);
    expectConfigError(() => addQpPoliciesDry({ Caps: { MaxRows: 10 } }), /caps\.MaxRows: unknown cap/);
    expectConfigError(() => new QpPolicyEngine({ maxPageSize: 10 } as never), /maxPageSize: unknown option/);
    expectConfigError(() => addQpPoliciesDry({ Tiers: "Strict" }), /QueryLib\.Policies\.Tiers: unknown key/);
    expectConfigError(() => addQpPoliciesDry({ HashSalt: "0123456789abcdef0123" }), /HashSalt: unknown key/);
    expectConfigError(() => addQpPoliciesDry({ Entities: {} }), /Entities: unknown key/);
    expectConfigError(() => addQpPoliciesDry({ Caps: 10 }), /Caps must be an object/);
    expectConfigError(() => addQpPoliciesDry({ Caps: null }), /Caps must be an object/);
  });

  it("binds time spans hh:mm:ss (and milliseconds), refusing anything else", () => {
    const bound = addQpPoliciesDry({ MaxSnapshotAge: "01:30:00", RefreshInterval: "00:00:02.5" });
    assert.equal(bound.maxSnapshotAge, 5_400_000);
    assert.equal(bound.refreshInterval, 2_500);
    assert.equal(addQpPoliciesDry({ MaxSnapshotAge: "100:00:00" }).maxSnapshotAge, 360_000_000, "hours may exceed 23");
    assert.equal(addQpPoliciesDry({ MaxSnapshotAge: " 00:00:01 " }).maxSnapshotAge, 1_000);
    assert.equal(new QpPolicyEngine({ maxSnapshotAge: 1234 }).options.maxSnapshotAge, 1234);
    for (const bad of ["5 minutes", "00:60:00", "00:00:60", "00:05", "-00:00:01", "", "1.00:00:00", "aa:bb:cc"]) {
      expectConfigError(() => addQpPoliciesDry({ MaxSnapshotAge: bad }), /MaxSnapshotAge|maxSnapshotAge/);
      expectConfigError(() => addQpPoliciesDry({ RefreshInterval: bad }), /RefreshInterval|refreshInterval/);
    }
    expectConfigError(() => new QpPolicyEngine({ refreshInterval: -5 }), /refreshInterval/);
  });

  it("binds string values from env-style configuration, keys in any case", () => {
    const options = addQpPoliciesDry({
      TIER: " strict ", dryrun: "TRUE", storeFailure: "failclosed", MaxSnapshotAge: "00:10:00", refreshinterval: "00:00:05",
      caps: { MAXPAGESIZE: "25", defaultfieldcost: "0", MaxQueryCost: "50" },
    });
    assert.equal(options.tier, QpTier.Strict);
    assert.equal(options.dryRun, true);
    assert.equal(options.storeFailure, StoreFailureMode.FailClosed);
    assert.equal(options.maxSnapshotAge, 600_000);
    assert.equal(options.refreshInterval, 5_000);
    assert.deepEqual({ ...options.caps }, { ...spec, maxPageSize: 25, defaultFieldCost: 0, maxQueryCost: 50 });
    assert.equal(addQpPoliciesDry({ DryRun: "false" }).dryRun, false);
    assert.equal(addQpPoliciesDry({ DryRun: false }).dryRun, false);
    assert.equal(addQpPoliciesDry({ Tier: "Convenience" }).tier, QpTier.Convenience);
    expectConfigError(() => addQpPoliciesDry({ Tier: "Paranoid" }), /tier: "Paranoid" is not one of Convenience, Strict/);
    expectConfigError(() => addQpPoliciesDry({ DryRun: "yes" }), /dryRun/);
    expectConfigError(() => addQpPoliciesDry({ DryRun: 1 }), /dryRun/);
    expectConfigError(() => addQpPoliciesDry({ StoreFailure: "Retry" }), /storeFailure/);
  });

  describe("addQpPolicies and configure-once", () => {
    before(() => resetDefaultPolicyEngineForTests());
    afterEach(() => resetDefaultPolicyEngineForTests());

    it("binds the section, runs the callback with the bound options and configures QpPolicy", () => {
      let seen: unknown;
      const engine = addQpPolicies({ Tier: "Strict", Caps: { MaxPageSize: "3" } }, (options) => {
        seen = options.tier;
        options.hashSalt = "0123456789abcdef-salt";
        options.entities.expose(Patient, "patients");
      });
      assert.equal(seen, QpTier.Strict, "the callback sees the bound section");
      assert.equal(QpPolicy.engine, engine);
      assert.equal(engine.options.tier, QpTier.Strict);
      assert.equal(engine.options.caps.maxPageSize, 3);
      assert.equal(engine.options.hashSalt, "0123456789abcdef-salt");
      assert.equal(engine.options.entities.find("PATIENTS"), Patient);
      assert.equal(engine.options.entities.nameOf(Patient), "patients");
    });

    it("QpPolicy.prepareAsync before any configuration says so, and names the ways out under QueryLibModule", () => {
      let caught: unknown;
      try {
        void QpPolicy.prepareAsync(new QpPolicyContext());
      } catch (error) {
        caught = error;
      }
      assert.ok(caught instanceof QpConfigurationError, String(caught));
      assert.equal(caught.code, "PolicyNotConfigured");
      for (const part of ["QpPolicy.configure (or addQpPolicies) must run at startup first", "runs an engine of its own", "QueryLibService.prepareAsync(context)", "useDefaultEngine: true"]) {
        assert.ok(caught.message.includes(part), `"${caught.message}" should mention ${part}`);
      }
    });

    it("refuses a second configuration, by either call", () => {
      addQpPolicies({});
      expectConfigError(() => addQpPolicies({}), /already/);
      expectConfigError(() => QpPolicy.configure({}), /already/);
      resetDefaultPolicyEngineForTests();
      QpPolicy.configure({ tier: QpTier.Strict });
      expectConfigError(() => QpPolicy.configure({}), /already/);
      expectConfigError(() => addQpPolicies({ Tier: "Convenience" }), /already/);
      assert.equal(QpPolicy.engine?.options.tier, QpTier.Strict, "the first configuration stays");
    });

    it("a failed configuration configures nothing", () => {
      expectConfigError(() => addQpPolicies({ Caps: { MaxPageSize: 0 } }), /MaxPageSize/);
      assert.equal(QpPolicy.engine, null);
      expectConfigError(() => addQpPolicies({ Unknown: 1 }), /Unknown/);
      assert.equal(QpPolicy.engine, null);
      const engine = addQpPolicies({ Caps: { MaxPageSize: 10 } });
      assert.equal(QpPolicy.engine, engine);
    });

    it("QpPolicy.prepareAsync needs a configured engine", async () => {
      await assert.rejects(async () => QpPolicy.prepareAsync(new QpPolicyContext()), QpConfigurationError);
    });

    it("QpPolicy.prepareAsync prepares contexts for the configured engine and its providers", async () => {
      addQpPolicies({ Caps: { MaxPageSize: "4" } }, undefined, { resolveValues: (context) => ({ tenantId: context.subjectsOf(QpSubjectKind.Tenant)[0] }) });
      const context = await QpPolicy.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Tenant, "t-2"));
      assert.equal(context.isPrepared, true);
      assert.equal(context.values.get("tenantId"), "t-2", "the provider resolved the tenant value");
      const result = (await applyPolicy(policyPatients(), context).toList({})) as unknown as Guarded;
      assert.deepEqual(idsOf(result.data as { id: number }[]), idsOf(t2).slice(0, 4), "page 1 of MaxPageSize 4, tenant t-2 only");
      assert.equal(result.totalCount, t2.length);
      assert.equal(result.pageSize, 4);
    });
  });

  it("preparation returns a new prepared context and leaves the input unprepared", async () => {
    const engine = new QpPolicyEngine({}, { resolveSubjects: () => [{ kind: QpSubjectKind.Role, value: "nurse" }], resolveValues: async () => ({ ward: "A" }) });
    const raw = new QpPolicyContext().withSubject(QpSubjectKind.Tenant, "t-1").withValue("tenantId", "t-1");
    const prepared = await engine.prepareAsync(raw);
    assert.notEqual(prepared, raw);
    assert.equal(raw.isPrepared, false);
    assert.equal(prepared.isPrepared, true);
    assert.deepEqual(prepared.subjectsOf(QpSubjectKind.Role), ["nurse"]);
    assert.deepEqual(prepared.subjectsOf(QpSubjectKind.Tenant), ["t-1"]);
    assert.equal(prepared.values.get("ward"), "A");
    assert.equal(prepared.values.get("tenantId"), "t-1");
    assert.ok(Object.isFrozen(prepared));
    assert.equal(prepared.withValue("x", 1).isPrepared, false, "a changed context is unprepared again");
    assert.equal(prepared.withSubject(QpSubjectKind.User, "u").isPrepared, false);
  });
});

/** Binds a section into options the way addQpPolicies does, without configuring QpPolicy. */
function addQpPoliciesDry(section: Record<string, unknown>) {
  resetDefaultPolicyEngineForTests();
  try {
    return addQpPolicies(section).options;
  } finally {
    resetDefaultPolicyEngineForTests();
  }
}

function policyPatients() {
  return allPolicyData().patients;
}

// ---------------------------------------------------------------------------------------------

forEachPolicyTarget("Two independent engines", (ctx) => {
  const convenienceEngine = new QpPolicyEngine({ tier: QpTier.Convenience, caps: { maxPageSize: 100 } });
  const strictEngine = new QpPolicyEngine({ tier: "Strict" as QpTier, caps: { maxPageSize: 100 } });
  const request = { selects: ["id", "name", "ssn"], orders: [{ sort: 1, field: "diagnosis", direction: "Descending" }] };

  it("give different results on the same request: Convenience drops, Strict refuses", async () => {
    const contextA = await tenantContext(convenienceEngine);
    const contextB = await tenantContext(strictEngine);
    const a = (await ctx.guard(Patient, contextA).toListAsync(request)) as unknown as Guarded<Record<string, unknown>>;
    assert.equal(a.policy.tier, QpTier.Convenience);
    assert.deepEqual(a.data.map((row) => Object.keys(row).sort()), t1.map(() => ["id", "name"]));
    assert.deepEqual(a.data.map((row) => row.id), idsOf(t1), "the dropped order leaves primary-key order");
    assert.equal(a.totalCount, t1.length);
    await expectPolicyError(() => ctx.guard(Patient, contextB).toListAsync(request), PolicyErrorCode.FieldDeniedForOrder, "diagnosis");
    await expectPolicyError(() => ctx.guard(Patient, contextB).toListAsync({ selects: ["id", "ssn"] }), PolicyErrorCode.FieldDeniedForSelect, "ssn");
  });

  it("each context runs under the engine that prepared it, whatever QpPolicy is", async () => {
    resetDefaultPolicyEngineForTests();
    try {
      QpPolicy.configure({ tier: QpTier.Strict });
      const fromDefault = await QpPolicy.prepareAsync(new QpPolicyContext().withValue("tenantId", "t-2"));
      const fromIndependent = await convenienceEngine.prepareAsync(new QpPolicyContext().withValue("tenantId", "t-2"));
      await expectPolicyError(() => ctx.guard(Patient, fromDefault).toListAsync({ selects: ["id", "ssn"] }), PolicyErrorCode.FieldDeniedForSelect);
      const result = (await ctx.guard(Patient, fromIndependent).toListAsync({ selects: ["id", "ssn"] })) as unknown as Guarded<{ id: number }>;
      assert.deepEqual(result.data.map((row) => row.id), idsOf(t2));
      assertTenant(result.data as never, "t-2");
      assert.equal(result.pageSize, 100, "the independent engine's own cap");
    } finally {
      resetDefaultPolicyEngineForTests();
    }
  });

  it("caps of one engine do not leak into another", async () => {
    const small = new QpPolicyEngine({ caps: { maxPageSize: 2, maxConditions: 1 } });
    const smallContext = await tenantContext(small);
    const largeContext = await tenantContext(convenienceEngine);
    const shape = { ...whereShape(cond("id", "GreaterThan", [0], 1), cond("id", "LessThan", [100], 2)), page: { pageNumber: 1, pageSize: 3 } };
    await expectPolicyError(() => ctx.guard(Patient, smallContext).toListAsync(shape), PolicyErrorCode.CapExceeded);
    const result = (await ctx.guard(Patient, largeContext).toListAsync(shape)) as unknown as Guarded<{ id: number }>;
    assert.deepEqual(result.data.map((row) => row.id), idsOf(t1).slice(0, 3));
    assert.deepEqual(Object.keys(result.data[0]!).sort(), [...patientDefaultKeys].sort());
  });
});
