// The policy's configuration is validated once, when an engine is built, and every problem is
// collected (Cedar's split; issue #19): an alias that reads as another member's name, a Hash mask
// without a salt, a Tokenize mask without a vault, a text mask on a number, a transformation on a
// navigation, over every exposed entity and every entity a navigation reaches. Before, only the
// transformations were checked at startup, one problem at a time; the alias, the salt and the
// vault were found by some caller's first query.
import "reflect-metadata";
import { expect } from "chai";
import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from "typeorm";
import {
  MaskStrategy, Operator, PolicyErrorCode, PolicyException, QpAlias, QpConfigurationError, QpEntityCatalogue, QpForceWhere, QpInMemoryTokenVault, QpMask, QpPolicyEngine, QpTruncate,
} from "../../lib/index.js";
import { type QpPolicyProblem, validatePolicy } from "../../lib/decisions/validate-policy.js";
import { PolicyEffect, QpSubjectKind, RuleRejected } from "../../lib/index.js";
import { expectLogicError } from "../rules/support.js";

@Entity("vo_reached")
class VoReached {
  @PrimaryColumn({ type: "int" }) id!: number;
  /** A text mask on a number: rule 2 (MaskNeedsTextMember), found through the navigation below. */
  @QpMask({ strategy: MaskStrategy.Full }) @Column({ type: "int" }) amount!: number;
}

@Entity("vo_many_problems")
class VoManyProblems {
  @PrimaryColumn({ type: "int" }) id!: number;
  /** Public name "code", which is also the name of the member below (AmbiguousFieldName). */
  @QpAlias("code") @Column({ type: "varchar", length: 20 }) secret!: string;
  @Column({ type: "varchar", length: 20 }) code!: string;
  @QpMask({ strategy: MaskStrategy.Hash }) @Column({ type: "varchar", length: 40 }) ref!: string;
  @QpMask({ strategy: MaskStrategy.Tokenize }) @Column({ type: "varchar", length: 40 }) card!: string;
  @Column({ type: "int" }) reachedId!: number;
  /** A transformation on a navigation (TransformOnObjectMember). */
  @QpTruncate(3) @ManyToOne(() => VoReached) @JoinColumn({ name: "reachedId" }) reached!: VoReached;
}

@Entity("vo_one_problem")
class VoOneProblem {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Hash }) @Column({ type: "varchar", length: 40 }) ref!: string;
}

@Entity("vo_token_problem")
class VoTokenProblem {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Tokenize }) @Column({ type: "varchar", length: 40 }) card!: string;
}

@Entity("vo_mixed_problems")
class VoMixedProblems {
  @PrimaryColumn({ type: "int" }) id!: number;
  /** A configuration code (found first in member order)… */
  @QpMask({ strategy: MaskStrategy.Full }) @Column({ type: "int" }) amount!: number;
  /** …and a policy code: the error is still a PolicyException with errorCode 22. */
  @QpMask({ strategy: MaskStrategy.Tokenize }) @Column({ type: "varchar", length: 40 }) card!: string;
}

class VoPlace {
  /** Never applied: forced predicates are read from the entity's own columns only. */
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenantId" }) @Column({ type: "varchar", length: 20 }) tenant!: string;
}

@Entity("vo_forced")
class VoForced {
  @PrimaryColumn({ type: "int" }) id!: number;
  /** Fine: the tenant column. */
  @QpForceWhere({ operator: Operator.Equal, contextValue: "tenantId" }) @Column({ type: "varchar", length: 20 }) tenantId!: string;
  /** StartsWith on a number: no query could apply it. */
  @QpForceWhere({ operator: Operator.StartsWith, value: "1" }) @Column({ type: "int" }) level!: number;
  @Column(() => VoPlace) place!: VoPlace;
}

const SALT = "validate-once-salt-0001";
const exposing = (entity: Function) => new QpEntityCatalogue().expose(entity, "x");

function refusal(action: () => unknown): QpConfigurationError & { problems: QpPolicyProblem[] } {
  try {
    action();
  } catch (error) {
    expect(error).to.be.instanceOf(QpConfigurationError);
    return error as QpConfigurationError & { problems: QpPolicyProblem[] };
  }
  throw new Error("the engine was built");
}

describe("The policy validated once, at startup (issue #19)", () => {
  it("an engine over an entity with five problems refuses to start and names all five, each with its code and place", () => {
    const error = refusal(() => new QpPolicyEngine({ entities: exposing(VoManyProblems) }));
    expect(error.problems.map((p) => `${p.code} ${p.where}`)).to.have.members([
      "AmbiguousFieldName VoManyProblems",
      "MissingHashSalt VoManyProblems.ref",
      "MissingTokenVault VoManyProblems.card",
      "TransformOnObjectMember VoManyProblems.reached",
      "MaskNeedsTextMember VoReached.amount",
    ]);
    expect(error.message).to.match(/^the policy has 5 configuration problems:/);
    for (const problem of error.problems) expect(error.message).to.include(problem.message);
    expect(error.code).to.equal(error.problems[0]!.code);
  });

  it("a salt and a vault remove their problems and nothing else", () => {
    const error = refusal(() => new QpPolicyEngine({ entities: exposing(VoManyProblems), hashSalt: SALT, tokenVault: new QpInMemoryTokenVault() }));
    expect(error.problems.map((p) => p.code)).to.have.members(["AmbiguousFieldName", "TransformOnObjectMember", "MaskNeedsTextMember"]);
  });

  it("a salt shorter than 16 characters is a missing salt", () => {
    expect(validatePolicy({ entities: exposing(VoOneProblem), hashSalt: "x".repeat(15), tokenVault: undefined }).map((p) => p.code)).to.deep.equal(["MissingHashSalt"]);
    expect(validatePolicy({ entities: exposing(VoOneProblem), hashSalt: "x".repeat(16), tokenVault: undefined })).to.deep.equal([]);
  });

  it("one problem reads as itself: its message and its code", () => {
    const error = refusal(() => new QpPolicyEngine({ entities: exposing(VoOneProblem) }));
    expect(error.code).to.equal("MissingHashSalt");
    expect(error.message).to.equal("QpMask on VoOneProblem.ref hashes values; set hashSalt (at least 16 characters)");
  });

  // Issue #41: TYPESCRIPT-API.md gives every policy code 1-22 to PolicyException with a numeric
  // errorCode; a handler that catches PolicyException by errorCode must meet 21 and 22 raised at startup.
  const catchByErrorCode = (action: () => unknown): number | "not a PolicyException" => {
    try {
      action();
    } catch (error) {
      if (error instanceof PolicyException) return error.errorCode;
      return "not a PolicyException";
    }
    throw new Error("the engine was built");
  };

  it("MissingHashSalt at startup is a PolicyException with errorCode 21 (and still a QpConfigurationError, same message)", () => {
    expect(catchByErrorCode(() => new QpPolicyEngine({ entities: exposing(VoOneProblem) }))).to.equal(PolicyErrorCode.MissingHashSalt);
    const error = refusal(() => new QpPolicyEngine({ entities: exposing(VoOneProblem) }));
    expect(error).to.be.instanceOf(PolicyException);
    expect((error as unknown as PolicyException).errorCode).to.equal(21);
    expect(error.code).to.equal("MissingHashSalt");
    expect(error.name).to.equal("QpConfigurationError");
    expect(error.message).to.equal("QpMask on VoOneProblem.ref hashes values; set hashSalt (at least 16 characters)");
  });

  it("MissingTokenVault at startup is a PolicyException with errorCode 22", () => {
    expect(catchByErrorCode(() => new QpPolicyEngine({ entities: exposing(VoTokenProblem), hashSalt: SALT }))).to.equal(PolicyErrorCode.MissingTokenVault);
    const error = refusal(() => new QpPolicyEngine({ entities: exposing(VoTokenProblem), hashSalt: SALT }));
    expect(error.code).to.equal("MissingTokenVault");
    expect(error.message).to.equal("QpMask on VoTokenProblem.card tokenizes values; set tokenVault");
  });

  it("among several problems, those with a policy code come first: the error is a PolicyException with the first one's errorCode", () => {
    expect(catchByErrorCode(() => new QpPolicyEngine({ entities: exposing(VoMixedProblems), hashSalt: SALT }))).to.equal(PolicyErrorCode.MissingTokenVault);
    const error = refusal(() => new QpPolicyEngine({ entities: exposing(VoMixedProblems), hashSalt: SALT }));
    expect(error.problems.map((p) => p.code)).to.deep.equal(["MissingTokenVault", "MaskNeedsTextMember"]);
    expect(error.code).to.equal("MissingTokenVault");
  });

  it("a problem without a policy code stays a plain QpConfigurationError, not a PolicyException", () => {
    const error = refusal(() => new QpPolicyEngine({ entities: exposing(VoReached) }));
    expect(error.code).to.equal("MaskNeedsTextMember");
    expect(error).to.not.be.instanceOf(PolicyException);
  });

  it("an engine with nothing exposed starts; its entities are checked at their first guarded use, as before", () => {
    expect(() => new QpPolicyEngine({})).to.not.throw();
  });

  it("a forced predicate no query could apply: inside an embedded object, or with an operator its column does not take", () => {
    const problems = validatePolicy({ entities: exposing(VoForced), hashSalt: SALT, tokenVault: undefined });
    expect(problems.map((p) => `${p.code} ${p.where}`)).to.have.members([
      "UnsupportedCombination VoForced.level",
      "ForcedPredicateNeverApplied VoPlace.tenant",
    ]);
  });

  describe("validated again when rules change", () => {
    @Entity("vo_plain")
    class VoPlain {
      @PrimaryColumn({ type: "int" }) id!: number;
      @Column({ type: "varchar", length: 40 }) name!: string;
    }
    const maskRule = (strategy: MaskStrategy) => ({ subjectKind: QpSubjectKind.Global, entity: "x", field: "name", effect: PolicyEffect.Mask, mask: { strategy } });

    it("a Hash Mask rule is refused when the engine has no salt, a Tokenize one when it has no vault; accepted once they are set", async () => {
      const bare = new QpPolicyEngine({ entities: exposing(VoPlain) });
      await expectLogicError(() => bare.upsertRuleAsync(maskRule(MaskStrategy.Hash), "admin"), RuleRejected, /hashSalt/);
      await expectLogicError(() => bare.upsertRuleAsync({ ...maskRule(MaskStrategy.Tokenize), field: "*" }, "admin"), RuleRejected, /tokenVault/);
      expect(await bare.listRulesAsync()).to.deep.equal([]);
      const equipped = new QpPolicyEngine({ entities: exposing(VoPlain), hashSalt: SALT, tokenVault: new QpInMemoryTokenVault() });
      await equipped.upsertRuleAsync(maskRule(MaskStrategy.Hash), "admin");
      await equipped.upsertRuleAsync({ ...maskRule(MaskStrategy.Tokenize), field: "*" }, "admin");
      expect((await equipped.listRulesAsync()).map((r) => r.mask?.strategy)).to.have.members([MaskStrategy.Hash, MaskStrategy.Tokenize]);
    });
  });
});
