// Inference protection counts guesses per request, not per list (#42). Before, MaxProtectedInValues
// (10) refused one In list of 11 but let one request Or 48 lists of 10 together (480 guesses), Or
// 48 Equal conditions on a generalized date, spread lists over Segment sets, or test a protected
// field in a Summary whose group floor the caller meets with padding rows of its own choosing.
// Each attack below recovers the hidden value with the new rule bypassed (the allowance raised
// far above any list, every list still within the old per-list cap of 10; for the Summaries,
// protection off, since the old rule let a list of 10 through there), then fails at its first
// request with the rule in force, on every target. What remains (a handful of guesses a request,
// a known value confirmed with one Equal) is shown to remain.
import assert from "node:assert/strict";
import { Column, Entity, PrimaryColumn, type DataSource } from "typeorm";
import {
  DatePart, GeneralizeMode, InferenceRisk, MaskStrategy, PolicyEffect, PolicyErrorCode, PolicyFeature,
  QpEntityCatalogue, QpGeneralize, QpMask, QpPolicyContext, QpPolicyEngine, QpSubjectKind, applyPolicy, type PolicyTrace, type QpPolicyOptionsInput,
} from "../../lib/index.js";
import { guessCountsOf, guessesOf } from "../../lib/decisions/inference.js";
import { Operator } from "../../lib/shapes/enums.js";
import { parseShape } from "../../lib/pipeline/stages.js";
import { modelOfClass } from "../../lib/model/entity-model.js";
import { sanitize } from "../../lib/guard/sanitize.js";
import { openIsolatedDatabase } from "../support/databases.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { expectPolicyError } from "./helpers.js";

@Entity("inf_guess_customer")
class GuessCustomer {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 20 }) segment!: string;
  /** Hashed by a runtime rule for analysts. */
  @Column({ type: "varchar", length: 80 }) name!: string;
  @QpMask({ strategy: MaskStrategy.Email }) @Column({ type: "varchar", length: 120 }) email!: string;
  @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 1000, allowAggregate: true })
  @Column({ type: "decimal", precision: 12, scale: 2 }) balance!: number;
  @QpGeneralize({ mode: GeneralizeMode.DatePart, part: DatePart.Year }) @Column({ type: "date" }) birthDate!: string;
}

const first = ["Ada", "Ben", "Cleo", "Dan", "Eve", "Finn", "Gus", "Hana", "Ivo", "Jude"];
const last = ["Moss", "Reyes", "Lind", "Okafor"];
/** 40 customers; balances (exact cents) and birth dates distinct. */
const rows: GuessCustomer[] = Array.from({ length: 40 }, (_, i) => Object.assign(new GuessCustomer(), {
  id: i + 1,
  segment: "retail",
  name: `${first[i % 10]} ${last[Math.floor(i / 10)]}`,
  email: `${first[i % 10]!.toLowerCase()}.${last[Math.floor(i / 10)]!.toLowerCase()}@example.com`,
  balance: (100_000 + ((i * 791_903) % 900_000)) / 100,
  birthDate: `${1960 + ((i * 13) % 40)}-${String(1 + ((i * 5) % 12)).padStart(2, "0")}-${String(1 + ((i * 11) % 28)).padStart(2, "0")}`,
}));
const target = rows[6]!; // id 7
const CUSTOMERS = "inf_guess_customers";
/** Two rows whose balances sit in higher buckets than the target's: the padding of the Having attack. */
const padding = rows.filter((r) => Math.floor(r.balance / 1000) > Math.floor(target.balance / 1000)).slice(0, 2);

type Shape = Record<string, unknown>;
type Result = { data: Record<string, unknown>[]; totalCount: number; policy: PolicyTrace };
const cond = (field: string, operator: string, values: unknown[], dataType = "Text", sort = 1) => ({ sort, field, operator, values, dataType });
const group = (connector: string, conditions: Shape[], subConditionGroups: Shape[] = [], sort = 1) => ({ sort, connector, conditions, subConditionGroups });
const chunks = <T>(values: T[], size: number) => Array.from({ length: Math.ceil(values.length / size) }, (_, i) => values.slice(i * size, i * size + size));
/** Or-ed In lists of ten (the old per-list cap) over the candidates. */
const orLists = (field: string, candidates: unknown[], dataType = "Text") => group("Or", chunks(candidates, 10).map((list, i) => cond(field, "In", list, dataType, i + 1)), [], 2);

/** Halves the candidates with a membership oracle: the target's value in log2(n) requests. */
async function halve<T>(holds: (candidates: T[]) => Promise<boolean>, dictionary: T[]): Promise<T> {
  let candidates = dictionary;
  while (candidates.length > 1) {
    const half = candidates.slice(0, Math.ceil(candidates.length / 2));
    candidates = (await holds(half)) ? half : candidates.slice(half.length);
  }
  return candidates[0]!;
}

/** Tests chunks of `size` until one holds, then halves it (for oracles that take at most `size` values a request). */
async function search<T>(holds: (candidates: T[]) => Promise<boolean>, dictionary: T[], size: number): Promise<T> {
  for (const chunk of chunks(dictionary, size)) if (await holds(chunk)) return halve(holds, chunk);
  throw new Error("not in the dictionary");
}

/** 480 candidates, the truth among them. */
const dictionary = (truth: string, decoy: (i: number) => string) => [...Array.from({ length: 479 }, (_, i) => decoy(i)), truth].sort();
/** Every day of the target's birth year (shown as the year): 365 candidates. */
const daysOfYear = (year: number) => Array.from({ length: 365 }, (_, d) => new Date(Date.UTC(year, 0, 1 + d)).toISOString().slice(0, 10));

describeOnTargets("Inference protection: guesses per request", targets, async (dialect) => {
  const dataSource = await openIsolatedDatabase(dialect, "querylib_inference_guesses", [GuessCustomer]);
  await dataSource.getRepository(GuessCustomer).clear();
  await dataSource.getRepository(GuessCustomer).insert(rows.map((r) => ({ ...r })) as never[]);
  return dataSource;
}, (targetName, dataSource) => {
  const source = () => (targetName === "memory" ? rows.map((r) => Object.assign(new GuessCustomer(), r)) : (dataSource() as DataSource).getRepository(GuessCustomer));

  async function caller(options: QpPolicyOptionsInput) {
    const engine = new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(GuessCustomer, CUSTOMERS), hashSalt: "inference-guesses-salt-0123", ...options });
    await engine.upsertRuleAsync({
      subjectKind: QpSubjectKind.Role, subject: "analyst", entity: CUSTOMERS, field: "name", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Hash },
    });
    const context = await engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, "analyst"));
    const run = (shape: Shape) => applyPolicy(source() as never, context).toListAsync(shape) as unknown as Promise<Result>;
    /** Does the target match this group? */
    const targetIn = async (inner: Shape) => (await run({ conditionGroup: group("And", [cond("id", "Equal", [target.id], "Number", 0)], [inner]) })).totalCount > 0;
    return { run, targetIn };
  }
  /** The old rule: each list within 10, nothing counted across them. */
  const bypassed = () => caller({ inferenceProtection: true, caps: { maxProtectedInValues: 100_000 } });
  const guarded = (options: QpPolicyOptionsInput = {}) => caller({ inferenceProtection: true, ...options });

  it("Or-ed In lists (48 lists of 10) recover a masked e-mail and a hashed name; counted per request, CapExceeded at the second list", async () => {
    const emails = dictionary(target.email, (i) => `decoy${i}@example.org`);
    const names = dictionary(target.name, (i) => `Decoy Name${i}`);
    const old = await bypassed();
    assert.equal(await halve((c) => old.targetIn(orLists("email", c)), emails), target.email);
    assert.equal(await halve((c) => old.targetIn(orLists("name", c)), names), target.name);
    const shown = (await old.run({ conditionGroup: group("And", [cond("id", "Equal", [target.id], "Number")]) })).data[0]!;
    assert.notEqual(shown.email, target.email);
    assert.match(String(shown.name), /^[0-9a-f]{32}$/, "the name is shown as a keyed hash");
    const now = await guarded();
    for (const [field, values] of [["email", emails], ["name", names]] as const) {
      const error = await expectPolicyError(() => halve((c) => now.targetIn(orLists(field, c)), values as string[]), PolicyErrorCode.CapExceeded, "MaxProtectedInValues is 10");
      assert.equal(error.path, "conditionGroup.subConditionGroups[0].conditions[1].values");
      assert.match(error.message, /20 values tested against/);
    }
    // Equal conditions count too, and sub-groups: 6 + 5 values Or-ed in two groups.
    const split = group("Or", [], [group("Or", names.slice(0, 6).map((n, i) => cond("name", "Equal", [n], "Text", i + 1)), [], 1), group("Or", [cond("name", "In", names.slice(6, 11))], [], 2)], 2);
    await expectPolicyError(() => now.targetIn(split), PolicyErrorCode.CapExceeded, "11 values tested against name");
    // Cached plans and shapes: ten Or-ed Equal run three times (the shape is reused), eleven are refused every time.
    const orEqual = (n: number) => group("Or", names.slice(0, n).map((v, i) => cond("name", "Equal", [v], "Text", i + 1)), [], 2);
    for (let i = 0; i < 3; i++) assert.equal(await now.targetIn(orEqual(10)), false);
    for (let i = 0; i < 2; i++) await expectPolicyError(() => now.targetIn(orEqual(11)), PolicyErrorCode.CapExceeded, "11 values tested against name");
    // The residual: ten guesses a request, and a known value confirmed in one.
    assert.equal(await now.targetIn(orLists("email", [...emails.slice(0, 9), target.email])), true);
    assert.equal(await now.targetIn(group("And", [cond("name", "Equal", [target.name])], [], 2)), true, "equality on a hashed name is one guess");
    // Each field has its own allowance: ten on the e-mail and ten on the name in one request.
    assert.equal(await now.targetIn(group("Or", [cond("email", "In", emails.slice(0, 10)), cond("name", "In", [...names.slice(0, 9), target.name], "Text", 2)], [], 2)), true);
  });

  it("Or-ed Equal on a generalized birth date (48 a request) recovers it to the day; counted per request, CapExceeded at the eleventh", async () => {
    const year = Number(target.birthDate.slice(0, 4));
    const orEqual = (dates: string[]) => group("Or", dates.map((d, i) => cond("birthDate", "Equal", [d], "Date", i + 1)), [], 2);
    const old = await bypassed();
    assert.equal((await old.run({ conditionGroup: group("And", [cond("id", "Equal", [target.id], "Number")]) })).data[0]!.birthDate, String(year), "shown as its year");
    assert.equal(await search((c) => old.targetIn(orEqual(c)), daysOfYear(year), 48), target.birthDate);
    const now = await guarded();
    const error = await expectPolicyError(() => search((c) => now.targetIn(orEqual(c)), daysOfYear(year), 48), PolicyErrorCode.CapExceeded, "11 values tested against birthDate");
    assert.equal(error.path, "conditionGroup.subConditionGroups[0].conditions[10].values");
    // Range bounds on its boundaries count as well: a Between (2) and nine Equal (9) are eleven.
    const mixed = group("Or", [cond("birthDate", "Between", [`${year}-01-01`, `${year + 1}-01-01`], "Date"), ...daysOfYear(year).slice(0, 9).map((d, i) => cond("birthDate", "Equal", [d], "Date", i + 2))], [], 2);
    await expectPolicyError(() => now.targetIn(mixed), PolicyErrorCode.CapExceeded, "11 values tested against birthDate");
  });

  it("Segment Intersect and Except over sets of one list each recover a masked e-mail; the sets share one allowance", async () => {
    const emails = dictionary(target.email, (i) => `decoy${i}@example.org`);
    const intersect = (c: string[]) => ({
      conditionSets: [
        ...chunks(c, 10).map((list, i) => ({ sort: i + 1, intersection: i === 0 ? null : "Union", conditionGroup: group("And", [cond("email", "In", list)]) })),
        { sort: 100, intersection: "Intersect", conditionGroup: group("And", [cond("id", "Equal", [target.id], "Number")]) },
      ],
    });
    const except = (c: string[]) => ({
      conditionSets: [
        { sort: 1, intersection: null, conditionGroup: group("And", [cond("id", "Equal", [target.id], "Number")]) },
        ...chunks(c, 10).map((list, i) => ({ sort: i + 2, intersection: "Except", conditionGroup: group("And", [cond("email", "In", list)]) })),
      ],
    });
    const old = await bypassed();
    assert.equal(await halve(async (c) => (await old.run(intersect(c))).totalCount > 0, emails), target.email);
    assert.equal(await halve(async (c) => (await old.run(except(c))).totalCount === 0, emails), target.email);
    const now = await guarded();
    const a = await expectPolicyError(() => halve(async (c) => (await now.run(intersect(c))).totalCount > 0, emails), PolicyErrorCode.CapExceeded, "MaxProtectedInValues is 10");
    assert.equal(a.path, "conditionSets[1].conditionGroup.conditions[0].values");
    const b = await expectPolicyError(() => halve(async (c) => (await now.run(except(c))).totalCount === 0, emails), PolicyErrorCode.CapExceeded, "MaxProtectedInValues is 10");
    assert.equal(b.path, "conditionSets[2].conditionGroup.conditions[0].values");
    assert.equal((await now.run(intersect([...emails.slice(0, 9), target.email]))).totalCount, 1, "one list of ten stays");
  });

  it("a Summary Count under the group floor, padded with two rows, recovers a birth date; protected, equality on it in a floored Summary is refused", async () => {
    const year = Number(target.birthDate.slice(0, 4));
    const padded = (dates: string[]) => ({
      conditionGroup: group("Or", [cond("id", "In", padding.map((r) => r.id), "Number")], [group("And", [cond("id", "Equal", [target.id], "Number")], [group("Or", dates.map((d, i) => cond("birthDate", "Equal", [d], "Date", i + 1)))])]),
      groupBy: { fields: ["segment"], aggregateBy: [{ alias: "n", aggregator: "Count" }] },
    });
    // The old rule let a list of ten through in a Summary: the floor (3) was the only defence.
    const old = await caller({ caps: { minGroupSize: 3 } });
    assert.deepEqual((await old.run(padded(["1900-01-01"]))).data, [], "two rows: below the floor");
    assert.equal(await search(async (c) => (await old.run(padded(c))).data.length > 0, daysOfYear(year), 10), target.birthDate);
    const now = await guarded({ caps: { minGroupSize: 3 } });
    const error = await expectPolicyError(() => now.run(padded(daysOfYear(year).slice(0, 10))), PolicyErrorCode.FieldDeniedForWhere, "group floor (3) can be met with rows the request chooses");
    assert.equal(error.path, "conditionGroup.subConditionGroups[0].subConditionGroups[0].conditions[0].operator");
    await expectPolicyError(() => now.run({ ...padded(["1900-01-01"]), conditionGroup: group("And", [cond("email", "Equal", [target.email])]) }), PolicyErrorCode.FieldDeniedForWhere);
    // Ranges on the year's boundaries stay: they reveal the year, which is shown.
    const byYear = { ...padded(["1900-01-01"]), conditionGroup: group("And", [cond("birthDate", "GreaterThanOrEqual", [`${year}-01-01`], "Date")]) };
    assert.ok((await now.run(byYear)).data.length <= 1);
  });

  it("Having on Minimum(balance) over a padded group, with Or-ed lists, recovers a generalized balance to the cent; protected, refused", async () => {
    const bucket = Math.floor(target.balance / 1000) * 1000;
    const cents = dictionary(target.balance.toFixed(2), (i) => (bucket + ((i * 211) % 99_900) / 100 + (i % 2 === 0 ? 0.01 : 0)).toFixed(2))
      .filter((v, i, all) => all.indexOf(v) === i && (v === target.balance.toFixed(2) || Number(v) !== target.balance)).map(Number);
    const having = (c: number[]) => ({
      conditionGroup: group("And", [cond("id", "In", [target.id, ...padding.map((r) => r.id)], "Number")]),
      groupBy: { fields: ["segment"], aggregateBy: [{ alias: "lo", aggregator: "Minimum", field: "balance" }] },
      having: group("Or", chunks(c, 10).map((list, i) => cond("lo", "In", list, "Number", i + 1))),
    });
    const old = await caller({ caps: { minGroupSize: 3 } });
    assert.match(String((await old.run(having(cents))).data[0]!.lo), /^\d+-\d+$/, "the minimum is shown as its bucket");
    assert.equal(await halve(async (c) => (await old.run(having(c))).data.length > 0, cents), target.balance);
    const now = await guarded({ caps: { minGroupSize: 3 } });
    await expectPolicyError(() => halve(async (c) => (await now.run(having(c))).data.length > 0, cents), PolicyErrorCode.CapExceeded, "MaxProtectedInValues is 10");
    const error = await expectPolicyError(() => now.run(having(cents.slice(0, 10))), PolicyErrorCode.FieldDeniedForAggregate, "group floor (3)");
    assert.equal(error.path, "having.conditions[0].operator");
    // A range on a bucket edge stays: it says the bucket, which is shown.
    const edge = { ...having([]), having: group("And", [cond("lo", "GreaterThanOrEqual", [bucket], "Number")]) };
    assert.equal((await now.run(edge)).data.length, 1);
  });
});

@Entity("inf_guess_accepting")
class AcceptingCustomer {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 20 }) segment!: string;
  @QpMask({ strategy: MaskStrategy.Email, acceptInferenceRisks: [InferenceRisk.SummaryGuess] }) @Column({ type: "varchar", length: 120 }) email!: string;
}

describe("Inference protection: guess counts", () => {
  it("a field that accepts SummaryGuess keeps equality in a floored Summary, traced as such, and still counts toward the allowance", async () => {
    const engine = new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(AcceptingCustomer, "accepting"), inferenceProtection: true, lint: "off", caps: { minGroupSize: 3 } });
    const context = await engine.prepareAsync(new QpPolicyContext());
    const data = rows.map((r) => Object.assign(new AcceptingCustomer(), { id: r.id, segment: r.segment, email: r.email }));
    const summary = (emails: string[]) => ({
      conditionGroup: group("Or", [cond("id", "In", padding.map((r) => r.id), "Number"), cond("email", "In", emails, "Text", 2)]),
      groupBy: { fields: ["segment"], aggregateBy: [{ alias: "n", aggregator: "Count" }] },
    });
    const result = await applyPolicy(data, context).toListAsync(summary([target.email])) as unknown as Result;
    assert.equal(Number(result.data[0]!.n), 3);
    assert.ok(result.policy.entries.some((e) => e.field === "email" && /inference risk accepted: SummaryGuess/.test(e.reason ?? "")));
    await expectPolicyError(() => applyPolicy(data, context).toListAsync(summary(rows.slice(0, 11).map((r) => r.email))), PolicyErrorCode.CapExceeded, "MaxProtectedInValues is 10");
  });

  it("guessesOf counts each tested value and no value for IsNull; guessCountsOf reads a request's counts per field", async () => {
    assert.deepEqual([guessesOf(Operator.Equal, 1), guessesOf(Operator.In, 7), guessesOf(Operator.Between, 2), guessesOf(Operator.IsNull, 0), guessesOf(Operator.IsNotNull, 0)], [1, 7, 2, 0, 0]);
    const engine = new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(GuessCustomer, CUSTOMERS), hashSalt: "inference-guesses-salt-0123", inferenceProtection: true });
    const context = await engine.prepareAsync(new QpPolicyContext());
    const shape = {
      conditionGroup: group("Or", [cond("email", "In", ["a@x.org", "b@x.org", "c@x.org"]), cond("email", "Equal", ["d@x.org"], "Text", 2), cond("segment", "In", ["retail", "x"], "Text", 3), cond("balance", "IsNull", [], "Number", 4)],
        [group("And", [cond("birthDate", "Between", ["1970-01-01", "1971-01-01"], "Date")])]),
    };
    const sanitized = sanitize(engine, context, modelOfClass(GuessCustomer), "filter", parseShape("filter", shape, engine.options.caps), false, await engine.decisionsAsync(context));
    assert.deepEqual([...guessCountsOf(sanitized)].sort(), [["birthDate", 2], ["email", 4]]);
  });
});
