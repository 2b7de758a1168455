// The linter's privacy findings (#45, item 5), and the Exact grant they name:
// - DifferencingHole: a number a subject may aggregate but not select, and that is not private
//   for it (two Summaries over groups that differ by one row give that row's value);
// - ExactLiftsPrivacy: an Exact rule, which lifts an overridable privacy for its subjects.
// An Exact rule lifts an overridable QpPrivate (explain shows the field not private for its
// subjects, private for the others) and is refused on write against a sealed one.
import "reflect-metadata";
import { expect } from "chai";
import { Column, Entity, PrimaryColumn } from "typeorm";
import {
  type ExplainResponse, PolicyEffect, QpEntityCatalogue, QpInMemoryRuleStore, QpNoSelect, QpPolicyContext, QpPolicyEngine, QpPrivate, QpSubjectKind, RuleRejected,
} from "../../lib/index.js";
import { expectLogicError } from "../rules/support.js";
import { privacyCatalogue } from "./domain.js";

@Entity("lp_payroll")
class LpPayroll {
  @PrimaryColumn({ type: "int" }) id!: number;
  /** Private for everyone, overridable: an Exact rule may lift it. */
  @QpNoSelect() @QpPrivate({ lower: 0, upper: 500_000, granularity: 100, overridable: true }) @Column({ type: "int" }) salary!: number;
  /** Not selectable, aggregatable, not private: the differencing hole. */
  @QpNoSelect() @Column({ type: "int" }) bonus!: number;
}

const catalogue = () => new QpEntityCatalogue().expose(LpPayroll, "payroll");
const role = (name: string) => new QpPolicyContext().withSubject(QpSubjectKind.Role, name);

describe("Private aggregates: the linter and the Exact grant", () => {
  it("DifferencingHole names a number aggregatable, not selectable and not private; not a private one", async () => {
    const e = new QpPolicyEngine({ entities: catalogue(), lint: "off" }, { ruleStore: new QpInMemoryRuleStore() });
    const findings = await e.lintAsync();
    const holes = findings.filter((f) => f.code === "DifferencingHole");
    expect(holes.map((f) => [f.field, f.subject, f.severity, f.feature])).to.deep.equal([["bonus", "everyone", "warning", "Aggregate"]]);
    expect(holes[0]!.fix).to.match(/QpPrivate/);
    // Made private by a rule for one role: still a hole for everyone else, not for that role.
    await e.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "analyst", entity: "payroll", field: "bonus", effect: PolicyEffect.Private, private: { lower: 0, upper: 10_000, granularity: 1 } });
    const after = (await e.lintAsync()).filter((f) => f.code === "DifferencingHole");
    expect(after.map((f) => f.subject)).to.deep.equal(["everyone"]);
    // The privacy domain: balance is private for everyone (QpPrivate): no hole on it.
    const domain = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off" }, { ruleStore: new QpInMemoryRuleStore() });
    expect((await domain.lintAsync()).filter((f) => f.code === "DifferencingHole" && f.field === "balance")).to.deep.equal([]);
  });

  it("an Exact rule lifts an overridable QpPrivate for its subjects; the linter names it, and the hole it opens", async () => {
    const e = new QpPolicyEngine({ entities: catalogue(), lint: "off" }, { ruleStore: new QpInMemoryRuleStore() });
    expect((await e.lintAsync()).filter((f) => f.field === "salary")).to.deep.equal([]);
    const rule = await e.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "auditor", entity: "payroll", field: "salary", effect: PolicyEffect.Exact });
    const explain = async (name: string) => ((await e.explainAsync("payroll", { field: "salary" }, await e.prepareAsync(role(name)))) as ExplainResponse).private;
    expect(await explain("auditor")).to.equal(null);
    expect((await explain("clerk"))!.source).to.equal("QpPrivate on LpPayroll.salary");
    const findings = (await e.lintAsync()).filter((f) => f.field === "salary");
    const exact = findings.find((f) => f.code === "ExactLiftsPrivacy")!;
    expect([exact.subject, exact.source, exact.severity]).to.deep.equal(["Role:auditor", `rule ${rule.id}`, "warning"]);
    expect(findings.filter((f) => f.code === "DifferencingHole").map((f) => f.subject)).to.deep.equal(["Role:auditor"]);
  });

  it("an Exact rule is refused on a sealed QpPrivate, on a wildcard and on a non-numeric field", async () => {
    const domain = new QpPolicyEngine({ entities: privacyCatalogue(), lint: "off" }, { ruleStore: new QpInMemoryRuleStore() });
    const exact = { subjectKind: QpSubjectKind.Role, subject: "auditor", entity: "accounts", effect: PolicyEffect.Exact } as const;
    await expectLogicError(() => domain.upsertRuleAsync({ ...exact, field: "balance" }), RuleRejected, "sealed: no runtime rule can lift it");
    await expectLogicError(() => domain.upsertRuleAsync({ ...exact, field: "*" }), RuleRejected, "not a wildcard");
    await expectLogicError(() => domain.upsertRuleAsync({ ...exact, field: "segment" }), RuleRejected, "not a numeric column");
  });
});
