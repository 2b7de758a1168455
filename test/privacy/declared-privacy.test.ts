// Declared privacy on numeric fields (#45, step 2): QpPrivate is recorded like the other Qp*
// decorators and checked once, at startup (bad settings are a QpConfigurationError naming
// Entity.field); a Private rule makes a field private for its subjects, refused on write in the
// same words when its settings are bad, and survives the relational rule store; explain and the
// schema show the public bounds to the callers the field is private for, and offer no Where,
// Select, Order, Group or Segment on it.
import "reflect-metadata";
import { expect } from "chai";
import { Column, DataSource, Entity, ManyToOne, PrimaryColumn } from "typeorm";
import {
  PolicyEffect, QpConfigurationError, QpEntityCatalogue, QpInMemoryRuleStore, QpPolicyContext, QpPolicyEngine, QpPrivate, QpSubjectKind, QpTypeOrmRuleStore,
  RuleRejected, type ExplainResponse, applyPolicy, qpRegistry,
} from "../../lib/index.js";
import { type QpPolicyProblem, validatePolicy } from "../../lib/decisions/validate-policy.js";
import { expectLogicError } from "../rules/support.js";
import { PaAccount, privacyCatalogue, privacyData, scoreBounds } from "./domain.js";

@Entity("pd_target")
class PdTarget {
  @PrimaryColumn({ type: "int" }) id!: number;
}

@Entity("pd_bad")
class PdBad {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpPrivate({ lower: 10, upper: 10, granularity: 1 }) @Column({ type: "int" }) equalBounds!: number;
  @QpPrivate({ lower: 0, upper: Number.POSITIVE_INFINITY, granularity: 1 }) @Column({ type: "int" }) infinite!: number;
  @QpPrivate({ lower: 0, upper: 100, granularity: 0 }) @Column({ type: "int" }) zeroStep!: number;
  @QpPrivate({ lower: 0, upper: 100, granularity: 3 }) @Column({ type: "int" }) offStep!: number;
  @QpPrivate({ lower: 0, upper: 100, granularity: 1, epsilon: 0 }) @Column({ type: "int" }) zeroEpsilon!: number;
  @QpPrivate({ lower: 0, upper: 100, granularity: 1 }) @Column({ type: "varchar", length: 10 }) text!: string;
  @QpPrivate({ lower: 0, upper: 100, granularity: 1 }) @ManyToOne(() => PdTarget) target!: PdTarget;
}

@Entity("pd_good")
class PdGood {
  @PrimaryColumn({ type: "int" }) id!: number;
  /** Decimal steps: 0.3 / 0.1 is not a whole number in binary, and must still be accepted. */
  @QpPrivate({ lower: -0.3, upper: 999.9, granularity: 0.1, epsilon: 1 }) @Column({ type: "decimal", precision: 8, scale: 1 }) amount!: number;
}

const exposing = (entity: Function) => new QpEntityCatalogue().expose(entity, "x");

function startupError(entity: Function): QpConfigurationError & { problems: QpPolicyProblem[] } {
  try {
    new QpPolicyEngine({ entities: exposing(entity) });
  } catch (error) {
    expect(error).to.be.instanceOf(QpConfigurationError);
    return error as QpConfigurationError & { problems: QpPolicyProblem[] };
  }
  throw new Error("the engine was built");
}

const analyst = (e: QpPolicyEngine) => e.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, "analyst"));
const clerk = (e: QpPolicyEngine) => e.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, "clerk"));
const scoreRule = { subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "accounts", field: "score", effect: PolicyEffect.Private, private: scoreBounds } as const;

describe("Private aggregates: declared privacy (QpPrivate and Private rules)", () => {
  it("QpPrivate records its settings in the registry, sealed unless overridable", () => {
    expect(qpRegistry.fieldAttributes(PaAccount, "balance").find((a) => a.kind === "private")).to.deep.equal({
      decorator: "QpPrivate", overridable: false, kind: "private", options: { lower: 0, upper: 10000, granularity: 1 },
    });
  });

  it("bad settings stop the engine at startup, each problem naming Entity.field", () => {
    const error = startupError(PdBad);
    expect(error.problems.map((p) => `${p.code} ${p.where}`)).to.have.members([
      "InvalidPrivateSettings PdBad.equalBounds",
      "InvalidPrivateSettings PdBad.infinite",
      "InvalidPrivateSettings PdBad.zeroStep",
      "InvalidPrivateSettings PdBad.offStep",
      "InvalidPrivateSettings PdBad.zeroEpsilon",
      "PrivateFieldNotNumeric PdBad.text",
      "PrivateFieldNotNumeric PdBad.target",
    ]);
    const message = (where: string) => error.problems.find((p) => p.where === where)!.message;
    expect(message("PdBad.equalBounds")).to.equal("QpPrivate on PdBad.equalBounds: private lower (10) must be below upper (10)");
    expect(message("PdBad.infinite")).to.match(/finite/);
    expect(message("PdBad.zeroStep")).to.match(/granularity must be a finite number above 0/);
    expect(message("PdBad.offStep")).to.match(/whole multiples of granularity \(3\)/);
    expect(message("PdBad.zeroEpsilon")).to.match(/epsilon must be a finite number above 0/);
    expect(message("PdBad.text")).to.match(/text field; only numeric columns can be private/);
  });

  it("good settings (decimal steps included) start an engine", () => {
    expect(validatePolicy({ entities: exposing(PdGood), hashSalt: undefined, tokenVault: undefined })).to.deep.equal([]);
    expect(validatePolicy({ entities: privacyCatalogue(), hashSalt: undefined, tokenVault: undefined })).to.deep.equal([]);
  });

  it("a Private rule with bad settings, on a non-numeric field, on a wildcard, or without settings is refused on write", async () => {
    const e = new QpPolicyEngine({ entities: privacyCatalogue() }, { ruleStore: new QpInMemoryRuleStore() });
    await expectLogicError(() => e.upsertRuleAsync({ ...scoreRule, private: { lower: 5, upper: 1, granularity: 1 } }), RuleRejected, "private lower (5) must be below upper (1)");
    await expectLogicError(() => e.upsertRuleAsync({ ...scoreRule, private: { lower: 0, upper: 10, granularity: 1, epsilon: -1 } }), RuleRejected, "epsilon");
    await expectLogicError(() => e.upsertRuleAsync({ ...scoreRule, private: { lower: 0, upper: 10, granularity: 1, extra: 1 } as never }), RuleRejected, "unknown key");
    await expectLogicError(() => e.upsertRuleAsync({ ...scoreRule, field: "segment" }), RuleRejected, "not a numeric column");
    await expectLogicError(() => e.upsertRuleAsync({ ...scoreRule, field: "*" }), RuleRejected, "not a wildcard");
    await expectLogicError(() => e.upsertRuleAsync({ ...scoreRule, private: null }), RuleRejected, "needs private settings");
    await expectLogicError(() => e.upsertRuleAsync({ ...scoreRule, effect: PolicyEffect.Deny }), RuleRejected, "only a Private rule carries private settings");
    expect((await e.listRulesAsync()).length).to.equal(0);
  });

  it("explain and the schema show the public bounds to the callers the field is private for, and offer no Where, Select, Order, Group or Segment on it", async () => {
    const e = new QpPolicyEngine({ entities: privacyCatalogue() }, { ruleStore: new QpInMemoryRuleStore() });
    const rule = await e.upsertRuleAsync(scoreRule);
    const closed = ["Where", "Select", "Order", "Group", "Segment"];
    for (const context of [await analyst(e), await clerk(e)]) {
      const balance = (await e.explainAsync("accounts", { field: "balance" }, context)) as ExplainResponse;
      expect(balance.private).to.deep.equal({
        lower: 0, upper: 10000, granularity: 1, epsilon: 0.5, aggregators: ["Count", "CountDistinct", "Sumation", "Average"], source: "QpPrivate on PaAccount.balance",
        costs: { Count: 0.5, CountDistinct: 0.5, Sumation: 0.5, Average: 0.5 },
        // No User subject: what is left cannot be read.
        budget: { limit: 20, remaining: null, resetsAt: null, scope: "User", window: "Daily" },
      });
      for (const d of balance.decisions) expect(d.effect, d.feature).to.equal(closed.includes(d.feature) ? PolicyEffect.Deny : PolicyEffect.Allow);
    }
    const forAnalyst = (await e.explainAsync("accounts", { field: "score" }, await analyst(e))) as ExplainResponse;
    expect(forAnalyst.private).to.deep.include({ ...scoreBounds, aggregators: ["Count", "CountDistinct", "Sumation", "Average"], source: `rule ${rule.id}` });
    expect(forAnalyst.private!.costs).to.deep.equal({ Count: 0.25, CountDistinct: 0.25, Sumation: 0.25, Average: 0.25 });
    expect(forAnalyst.decisions.filter((d) => d.effect === PolicyEffect.Deny).map((d) => d.feature)).to.have.members(closed);
    const forClerk = (await e.explainAsync("accounts", { field: "score" }, await clerk(e))) as ExplainResponse;
    expect(forClerk.private).to.equal(null);
    expect(forClerk.decisions.every((d) => d.effect === PolicyEffect.Allow)).to.equal(true);

    const fieldOf = async (context: QpPolicyContext, path: string) => (await e.schemaAsync("accounts", {}, context)).fields.find((f) => f.path === path)!;
    const score = await fieldOf(await analyst(e), "score");
    expect(score.private).to.deep.include({ lower: 300, upper: 850, granularity: 1, epsilon: 0.25 });
    expect(score.features).to.deep.equal(["Aggregate"]);
    expect(score.operators).to.deep.equal([]);
    const clerkScore = await fieldOf(await clerk(e), "score");
    expect(clerkScore.private).to.equal(null);
    expect(clerkScore.features).to.deep.equal(["Where", "Select", "Order", "Group", "Aggregate", "Segment"]);
    expect((await fieldOf(await clerk(e), "balance")).features).to.deep.equal(["Aggregate"]);
  });

  it("explain and the schema show what each aggregate costs and the caller's budget left in the window, read at no cost", async () => {
    const e = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off", caps: { minGroupSize: 1 }, privacyBudget: { limit: 3 } }, { ruleStore: new QpInMemoryRuleStore() });
    const ann = await e.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.User, "ann"));
    const budgetOf = async () => ((await e.explainAsync("accounts", { field: "balance" }, ann)) as ExplainResponse).private!.budget;
    const before = await budgetOf();
    expect([before.limit, before.remaining, before.scope, before.window]).to.deep.equal([3, 3, "User", "Daily"]);
    expect(Date.parse(before.resetsAt!)).to.be.greaterThan(Date.now());
    // Reading it twice costs nothing; a Summary of two private aggregates (declared keys) costs 1.
    expect((await budgetOf()).remaining).to.equal(3);
    await applyPolicy(privacyData().accounts as never[], ann).toListAsync({ groupBy: { fields: ["segment"], aggregateBy: [{ field: "balance", alias: "s", aggregator: "Sumation" }, { field: "balance", alias: "a", aggregator: "Average" }] } } as never);
    expect((await budgetOf()).remaining).to.equal(2);
    const fromSchema = (await e.schemaAsync("accounts", {}, ann)).fields.find((f) => f.path === "balance")!.private!;
    expect([fromSchema.budget.remaining, fromSchema.costs.Sumation]).to.deep.equal([2, 0.5]);
  });

  it("the linter reports no hole on a field private for the subject, and keeps reporting it for the others", async () => {
    const e = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off" }, { ruleStore: new QpInMemoryRuleStore() });
    expect((await e.lintAsync()).filter((f) => f.field === "balance"), "balance is private for everyone: no Order, Where or floor finding").to.deep.equal([]);
    // score hidden from analysts and clerks alike; private for analysts only.
    for (const subject of ["analyst", "clerk"]) {
      await e.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject, entity: "accounts", field: "score", effect: PolicyEffect.Deny, features: 2 });
    }
    await e.upsertRuleAsync(scoreRule);
    const score = (await e.lintAsync()).filter((f) => f.field === "score");
    expect(score.map((f) => f.code), "the clerk's holes are reported").to.include.members(["OrderableWhileHidden", "ProbeableWhileHidden"]);
    expect([...new Set(score.map((f) => f.subject))]).to.deep.equal(["Role:clerk"]);
  });

  it("a Private rule keeps its settings through the relational rule store (held in the effect-settings column)", async () => {
    const dataSource = await new DataSource({ type: "better-sqlite3", database: ":memory:", entities: QpTypeOrmRuleStore.entities, synchronize: true, logging: false }).initialize();
    try {
      const store = new QpTypeOrmRuleStore(dataSource);
      const e = new QpPolicyEngine({ entities: privacyCatalogue() }, { ruleStore: store });
      const written = await e.upsertRuleAsync(scoreRule);
      const [read] = (await store.loadAsync()).rules;
      expect(read!.effect).to.equal(PolicyEffect.Private);
      expect(read!.private).to.deep.equal(scoreBounds);
      expect(read!.mask).to.equal(null);
      expect(read!.id).to.equal(written.id);
      const fresh = new QpPolicyEngine({ entities: privacyCatalogue() }, { ruleStore: new QpTypeOrmRuleStore(dataSource) });
      expect(((await fresh.explainAsync("accounts", { field: "score" }, await analyst(fresh))) as ExplainResponse).private).to.deep.include(scoreBounds);
    } finally {
      await dataSource.destroy();
    }
  });
});
