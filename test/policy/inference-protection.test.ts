// Inference protection (QpPolicyOptions.inferenceProtection): each attack below is performed as a
// hostile analyst would, with as many requests as it takes. Against the spec's default (the
// option off) each one recovers a value the caller is only shown transformed; with the option on
// each one fails at its first request, with the code that says why, on every target. What stays
// allowed (equality, short In lists, ranges on a generalization's boundaries) is shown to reveal
// nothing finer than what the caller sees, and a field that accepts a risk on its decorator keeps
// that use, said so in the trace.
import assert from "node:assert/strict";
import { Column, Entity, PrimaryColumn, type DataSource } from "typeorm";
import {
  DatePart, GeneralizeMode, InferenceRisk, MaskStrategy, PolicyAction, PolicyEffect, PolicyErrorCode, PolicyException, PolicyFeature, QpDefault,
  QpEntityCatalogue, QpGeneralize, QpMask, QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTier, applyPolicy, type PolicyTrace, type QpPolicyOptionsInput,
} from "../../lib/index.js";
import { bindPolicySection } from "../../lib/decisions/options.js";
import { onBoundary } from "../../lib/decisions/inference.js";
import { DataType } from "../../lib/shapes/enums.js";
import { openIsolatedDatabase } from "../support/databases.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { expectPolicyError } from "./helpers.js";

@Entity("inf_customer")
class InfCustomer {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 20 }) segment!: string;
  /** Masked by a runtime rule for analysts. */
  @Column({ type: "varchar", length: 80 }) name!: string;
  @QpMask({ strategy: MaskStrategy.Email }) @Column({ type: "varchar", length: 120 }) email!: string;
  @QpMask({ strategy: MaskStrategy.Phone }) @Column({ type: "varchar", length: 30 }) phone!: string;
  @QpDefault("withheld") @Column({ type: "varchar", length: 120 }) address!: string;
  @QpGeneralize({ mode: GeneralizeMode.Bucket, step: 1000, allowAggregate: true })
  @Column({ type: "decimal", precision: 12, scale: 2 }) balance!: number;
  @QpGeneralize({ mode: GeneralizeMode.DatePart, part: DatePart.Year }) @Column({ type: "date" }) birthDate!: string;
  /** Its decorator accepts being ordered: the only field here that may be. */
  @QpMask({ strategy: MaskStrategy.Partial, keepStart: 1, acceptInferenceRisks: [InferenceRisk.Order] })
  @Column({ type: "varchar", length: 40 }) nickname!: string;
}

const first = ["Ada", "Ben", "Cleo", "Dan", "Eve", "Finn", "Gus", "Hana", "Ivo", "Jude"];
const last = ["Moss", "Reyes", "Lind", "Okafor"];
/** 40 customers; balances and birth dates are distinct, to the cent and to the day. */
const rows: InfCustomer[] = Array.from({ length: 40 }, (_, i) => Object.assign(new InfCustomer(), {
  id: i + 1,
  segment: "retail",
  name: `${first[i % 10]} ${last[Math.floor(i / 10)]}`,
  email: `${first[i % 10]!.toLowerCase()}.${last[Math.floor(i / 10)]!.toLowerCase()}@example.com`,
  phone: `+1 555 01${String(i).padStart(2, "0")}`,
  address: `${["Elm", "Oak", "Pine", "Birch"][i % 4]} Street ${10 + i}`,
  balance: 1000 + ((i * 7919) % 9000) + (i % 100) / 100 + 0.37,
  birthDate: `${1960 + ((i * 13) % 40)}-${String(1 + ((i * 5) % 12)).padStart(2, "0")}-${String(1 + ((i * 11) % 28)).padStart(2, "0")}`,
  nickname: `${first[(i * 3) % 10]}${i}`,
}));
const target = rows[6]!; // the customer the attacker is after (id 7)
const CUSTOMERS = "inf_customers";

function engineWith(options: QpPolicyOptionsInput): QpPolicyEngine {
  return new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(InfCustomer, CUSTOMERS), ...options });
}

async function analystOf(engine: QpPolicyEngine, mask: { strategy: MaskStrategy; keepStart?: number } = { strategy: MaskStrategy.Partial, keepStart: 1 }): Promise<QpPolicyContext> {
  await engine.upsertRuleAsync({
    subjectKind: QpSubjectKind.Role, subject: "analyst", entity: CUSTOMERS, field: "name", features: PolicyFeature.Select, effect: PolicyEffect.Mask, mask,
  });
  return engine.prepareAsync(new QpPolicyContext().withSubject(QpSubjectKind.Role, "analyst"));
}

type Shape = Record<string, unknown>;
type Result = { data: Record<string, unknown>[]; totalCount: number; policy: PolicyTrace };
const cond = (field: string, operator: string, values: unknown[], dataType = "Text", sort = 1) => ({ sort, field, operator, values, dataType });
const about = (...conditions: Shape[]) => ({ conditionGroup: { connector: "And", conditions: [cond("id", "Equal", [target.id], "Number", 0), ...conditions] } });

/** Does the target match these conditions? One request: the attacker's oracle. */
type Oracle = (...conditions: Shape[]) => Promise<boolean>;

// ---- the attacks, written once, run against both configurations ------------------------------

/** Halves a dictionary with In lists: the candidate the target holds, in log2(n) requests. */
async function halveDictionary(matches: Oracle, field: string, dictionary: string[]): Promise<string> {
  let candidates = dictionary;
  while (candidates.length > 1) {
    const half = candidates.slice(0, Math.ceil(candidates.length / 2));
    candidates = (await matches(cond(field, "In", half))) ? half : candidates.slice(half.length);
  }
  return candidates[0]!;
}

const letters = ".,@+-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
/**
 * Reads a text letter by letter with StartsWith. Values are trimmed (2.1.5's tokens), so a space
 * cannot be asked for: a position where no other letter matches is taken for one.
 */
async function readByPrefix(matches: Oracle, field: string, length: number): Promise<string> {
  let known = "";
  for (let i = 0; i < length; i++) {
    let found = false;
    for (const letter of letters) {
      if (await matches(cond(field, "StartsWith", [known + letter]))) {
        known += letter;
        found = true;
        break;
      }
    }
    if (!found) known += " ";
  }
  return known;
}

/** Finds a number to the cent by bisection with GreaterThan. */
async function bisectNumber(matches: Oracle, field: string): Promise<number> {
  let [lo, hi] = [0, 100_000_00]; // cents: the value is in (lo, hi]
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (await matches(cond(field, "GreaterThan", [(mid / 100).toFixed(2)], "Number"))) lo = mid;
    else hi = mid;
  }
  return hi / 100;
}

/** Finds a date to the day by bisection with LessThan. */
async function bisectDate(matches: Oracle, field: string): Promise<string> {
  const day = 86_400_000;
  let [lo, hi] = [Date.UTC(1900, 0, 1) / day, Date.UTC(2030, 0, 1) / day]; // the date is in [lo, hi)
  const iso = (d: number) => new Date(d * day).toISOString().slice(0, 10);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (await matches(cond(field, "LessThan", [iso(mid)], "Date"))) hi = mid;
    else lo = mid;
  }
  return iso(lo);
}

describeOnTargets("Inference protection", targets, async (dialect) => {
  const dataSource = await openIsolatedDatabase(dialect, "querylib_inference", [InfCustomer]);
  await dataSource.getRepository(InfCustomer).clear();
  await dataSource.getRepository(InfCustomer).insert(rows.map((r) => ({ ...r })) as never[]);
  return dataSource;
}, (targetName, dataSource) => {
  const source = () => (targetName === "memory" ? rows.map((r) => Object.assign(new InfCustomer(), r)) : (dataSource() as DataSource).getRepository(InfCustomer));

  async function caller(options: QpPolicyOptionsInput, mask?: { strategy: MaskStrategy }) {
    const context = await analystOf(engineWith({ hashSalt: "inference-test-salt-0123", ...options }), mask);
    const run = (shape: Shape) => applyPolicy(source() as never, context).toListAsync(shape) as unknown as Promise<Result>;
    const matches: Oracle = async (...conditions) => (await run(about(...conditions))).totalCount > 0;
    let requests = 0;
    const counted: Oracle = async (...conditions) => {
      requests++;
      return matches(...conditions);
    };
    return { context, run, matches: counted, requests: () => requests };
  }
  const unprotected = () => caller({});
  const protectedCaller = (options: QpPolicyOptionsInput = {}) => caller({ inferenceProtection: true, ...options });

  const dictionary = (values: string[]) => [...values.filter((v) => v !== values[6]), values[6]!, ...Array.from({ length: 23 }, (_, i) => `decoy${i}@example.org`)].sort();

  it("a masked e-mail and phone: halving a dictionary with In recovers them; protected, a list above MaxProtectedInValues is CapExceeded", async () => {
    const open = await unprotected();
    assert.equal(await halveDictionary(open.matches, "email", dictionary(rows.map((r) => r.email))), target.email);
    assert.equal(await halveDictionary(open.matches, "phone", dictionary(rows.map((r) => r.phone))), target.phone);
    assert.ok(open.requests() <= 14, `${open.requests()} requests`);
    const guarded = await protectedCaller();
    for (const field of ["email", "phone"]) {
      const error = await expectPolicyError(() => halveDictionary(guarded.matches, field, dictionary(rows.map((r) => r[field as "email"]))), PolicyErrorCode.CapExceeded, "MaxProtectedInValues is 10");
      assert.equal(error.path, "conditionGroup.conditions[1].values");
    }
    // A shape seen before (a short list, twice) does not let a long list of the same shape through.
    const short = rows.slice(0, 10).map((r) => r.email);
    for (let i = 0; i < 2; i++) await guarded.matches(cond("email", "In", short));
    await expectPolicyError(() => guarded.matches(cond("email", "In", dictionary(rows.map((r) => r.email)))), PolicyErrorCode.CapExceeded);
    // A decision that reads no value (Equal) is still reused by requests of its shape; one that does (an In list) never is.
    const shapes = QpPolicyEngine.of(guarded.context).caches.shapes;
    for (let i = 0; i < 2; i++) await guarded.matches(cond("email", "Equal", [rows[0]!.email]));
    const before = shapes.stats.hits;
    await guarded.matches(cond("email", "Equal", [rows[1]!.email]));
    assert.equal(shapes.stats.hits - before, targetName === "memory" ? 0 : 1, "the Equal shape was reused");
    for (let i = 0; i < 2; i++) await guarded.matches(cond("email", "In", rows.slice(2, 5).map((r) => r.email)));
    const listHits = shapes.stats.hits;
    await guarded.matches(cond("email", "In", rows.slice(5, 8).map((r) => r.email)));
    assert.equal(shapes.stats.hits, listHits, "an In list's shape is never reused");
    // What remains is a brute force: ten guesses a request.
    assert.equal(await guarded.matches(cond("email", "In", rows.slice(0, 10).map((r) => r.email))), true);
    assert.equal(await guarded.matches(cond("email", "Equal", [target.email])), true);
  });

  it("a name masked by a runtime rule and a QpDefault-withheld address: StartsWith reads them letter by letter; protected, OperatorNotAllowed", async () => {
    const open = await unprotected();
    assert.equal(await readByPrefix(open.matches, "name", target.name.length), target.name);
    assert.equal(await readByPrefix(open.matches, "address", target.address.length), target.address);
    const shown = (await open.run(about())).data[0]!;
    assert.notEqual(shown.name, target.name, "the rule masks the name");
    assert.equal(shown.address, "withheld");
    const guarded = await protectedCaller();
    for (const field of ["name", "address"]) {
      const error = await expectPolicyError(() => readByPrefix(guarded.matches, field, 3), PolicyErrorCode.OperatorNotAllowed, "inference protection allows Equal, IEqual, In, IIn, IsNull, IsNotNull");
      assert.equal(error.path, "conditionGroup.conditions[1].operator");
    }
    for (const operator of ["Contains", "IStartsWith", "EndsWith", "NotEqual", "GreaterThan", "NotIn"]) {
      await expectPolicyError(() => guarded.matches(cond("name", operator, operator === "NotIn" ? ["x"] : ["A"])), PolicyErrorCode.OperatorNotAllowed);
    }
  });

  it("a generalized balance and birth date: bisecting with ranges finds them to the cent and the day; protected, RangeOffBoundary", async () => {
    const open = await unprotected();
    assert.equal(await bisectNumber(open.matches, "balance"), Number(target.balance.toFixed(2)));
    assert.equal(await bisectDate(open.matches, "birthDate"), target.birthDate);
    const shown = (await open.run(about())).data[0]!;
    assert.match(String(shown.balance), /^\d+-\d+$/, "shown as a bucket");
    assert.equal(shown.birthDate, target.birthDate.slice(0, 4), "shown as a year");
    const guarded = await protectedCaller();
    // Boundaries first, twice (a known shape), then off one: the shape's reuse does not skip the check.
    for (let i = 0; i < 2; i++) await guarded.matches(cond("balance", "GreaterThan", ["2000"], "Number"));
    const balance = await expectPolicyError(() => bisectNumber(guarded.matches, "balance"), PolicyErrorCode.RangeOffBoundary, "multiples of 1000");
    assert.equal(balance.path, "conditionGroup.conditions[1].values[0]");
    await expectPolicyError(() => bisectDate(guarded.matches, "birthDate"), PolicyErrorCode.RangeOffBoundary, "starts of a year");
    // On boundaries the ranges answer exactly what the caller is shown: the bucket and the year.
    const bucket = Math.floor(target.balance / 1000) * 1000;
    assert.equal(await guarded.matches(cond("balance", "GreaterThanOrEqual", [bucket], "Number"), cond("balance", "LessThan", [bucket + 1000], "Number", 2)), true);
    const year = Number(target.birthDate.slice(0, 4));
    assert.equal(await guarded.matches(cond("birthDate", "Between", [`${year}-01-01`, `${year + 1}-01-01`], "Date")), true);
    await expectPolicyError(() => guarded.matches(cond("birthDate", "GreaterThanOrEqual", [`${year}-07-01`], "Date")), PolicyErrorCode.RangeOffBoundary);
  });

  it("a name hashed by a runtime rule: StartsWith still reads it letter by letter; protected, OperatorNotAllowed", async () => {
    const open = await caller({}, { strategy: MaskStrategy.Hash });
    assert.match(String((await open.run(about())).data[0]!.name), /^[0-9a-f]{32}$/, "shown as a keyed hash");
    assert.equal(await readByPrefix(open.matches, "name", target.name.length), target.name);
    const guarded = await caller({ inferenceProtection: true }, { strategy: MaskStrategy.Hash });
    await expectPolicyError(() => readByPrefix(guarded.matches, "name", 3), PolicyErrorCode.OperatorNotAllowed);
    assert.equal(await guarded.matches(cond("name", "Equal", [target.name])), true, "an equality is one guess");
  });

  it("ranking by ORDER BY: the true order of masked and generalized fields; protected, dropped (Convenience) or refused (Strict)", async () => {
    const page = { pageNumber: 1, pageSize: 40 };
    const order = (field: string) => ({ orders: [{ sort: 1, field, direction: "Ascending" }], page });
    const open = await unprotected();
    const guarded = await protectedCaller();
    const strict = await protectedCaller({ tier: QpTier.Strict });
    for (const field of ["name", "email", "balance", "birthDate", "address"]) {
      const truth = [...rows].sort((a, b) => (Number(a[field as "balance"]) - Number(b[field as "balance"])) || String(a[field as "name"]).localeCompare(String(b[field as "name"]), "en") || a.id - b.id);
      const ranked = (await open.run(order(field))).data.map((r) => r.id);
      if (field === "balance" || field === "birthDate") assert.deepEqual(ranked, truth.map((r) => r.id), `${field} ranked exactly`);
      else assert.notDeepEqual(ranked, rows.map((r) => r.id), `${field} reorders the rows`);
      const dropped = await guarded.run(order(field));
      assert.deepEqual(dropped.data.map((r) => r.id), rows.map((r) => r.id), `${field}: primary-key order, no rank`);
      const entry = dropped.policy.entries.find((e) => e.field === field && e.feature === "Order")!;
      assert.equal(entry.action, PolicyAction.Dropped);
      assert.match(entry.source, /^inference protection \(/);
      await expectPolicyError(() => strict.run(order(field)), PolicyErrorCode.FieldDeniedForOrder, "inference protection");
    }
  });

  it("differencing two Summaries over groups of 20 and 19 reads one balance, and bisecting a Having on its maximum reads the largest; protected, the Sumation and the off-boundary Having are refused", async () => {
    const sum = (maxId: number) => ({
      conditionGroup: { connector: "And", conditions: [cond("id", "LessThanOrEqual", [maxId], "Number")] },
      groupBy: { fields: ["segment"], aggregateBy: [{ alias: "total", aggregator: "Sumation", field: "balance" }, { alias: "n", aggregator: "Count" }] },
    });
    const open = await unprotected();
    const [a, b] = [(await open.run(sum(20))).data[0]!, (await open.run(sum(19))).data[0]!];
    assert.deepEqual([a.n, b.n].map(Number), [20, 19], "both groups above the floor");
    assert.equal(Math.round((Number(a.total) - Number(b.total)) * 100) / 100, Number(rows[19]!.balance.toFixed(2)));
    const guarded = await protectedCaller();
    const error = await expectPolicyError(() => guarded.run(sum(20)), PolicyErrorCode.FieldDeniedForAggregate, "two Summaries over groups that differ by one row");
    assert.equal(error.path, "groupBy.aggregateBy[0].field");
    // Counts and the transformed extremes stay: a maximum is shown generalized like the field.
    const max = await guarded.run({ groupBy: { fields: ["segment"], aggregateBy: [{ alias: "top", aggregator: "Maximum", field: "balance" }] } });
    assert.match(String(max.data[0]!.top), /^\d+-\d+$/);
    // Having on that maximum is a range on the field. Unprotected, bisecting it reads the largest
    // balance to the cent although the maximum is shown as a bucket; protected, boundaries only.
    const having = (value: number | string) => ({ groupBy: { fields: ["segment"], aggregateBy: [{ alias: "top", aggregator: "Maximum", field: "balance" }] }, having: { connector: "And", conditions: [cond("top", "GreaterThan", [value], "Number")] } });
    const largest = Math.max(...rows.map((r) => Number(r.balance.toFixed(2))));
    const openMatches: Oracle = async (condition) => (await open.run(having(String((condition as { values: unknown[] }).values[0])))).data.length > 0;
    assert.equal(await bisectNumber(openMatches, "top"), largest);
    await expectPolicyError(() => bisectNumber(async (condition) => (await guarded.run(having(String((condition as { values: unknown[] }).values[0])))).data.length > 0, "top"), PolicyErrorCode.RangeOffBoundary);
    await expectPolicyError(() => guarded.run(having(9123.45)), PolicyErrorCode.RangeOffBoundary);
    assert.equal((await guarded.run(having(9000))).data.length, 1);
  });

  it("a group floor of 1: one Summary grouped by id reads every generalized balance exactly (the linter's GroupFloorOne); at the default floor, no group comes back", async () => {
    const byId = { groupBy: { fields: ["id"], aggregateBy: [{ alias: "total", aggregator: "Sumation", field: "balance" }] }, orders: [{ sort: 1, field: "id", direction: "Ascending" }], page: { pageNumber: 1, pageSize: 40 } };
    const open = await caller({ caps: { minGroupSize: 1 } });
    const read = (await open.run(byId)).data.map((r) => Math.round(Number(r.total) * 100) / 100);
    assert.deepEqual(read, rows.map((r) => Number(r.balance.toFixed(2))));
    const findings = await engineWith({ lint: "off", caps: { minGroupSize: 1 } }).lintAsync();
    assert.ok(findings.some((f) => f.code === "GroupFloorOne" && f.field === "balance" && f.severity === "error"));
    const fixed = await caller({});
    assert.deepEqual((await fixed.run(byId)).data, [], "every group of one row is below the floor");
    assert.ok(!(await engineWith({ lint: "off" }).lintAsync()).some((f) => f.code === "GroupFloorOne"));
  });

  it("a field that accepts a risk on its decorator keeps that use, and the trace says so", async () => {
    const guarded = await protectedCaller();
    const result = await guarded.run({ orders: [{ sort: 1, field: "nickname", direction: "Descending" }], page: { pageNumber: 1, pageSize: 40 } });
    assert.deepEqual(result.data.map((r) => r.id), [...rows].sort((a, b) => (a.nickname < b.nickname ? 1 : a.nickname > b.nickname ? -1 : 0)).map((r) => r.id));
    const entry = result.policy.entries.find((e) => e.field === "nickname" && e.feature === "Order")!;
    assert.equal(entry.action, PolicyAction.Allowed);
    assert.match(entry.reason ?? "", /inference risk accepted: Order/);
    // Its other restrictions still hold.
    await expectPolicyError(() => guarded.matches(cond("nickname", "StartsWith", ["A"])), PolicyErrorCode.OperatorNotAllowed);
  });

  it("a field the caller sees as stored is not restricted; off by default, the spec's behaviour is unchanged", async () => {
    const guarded = await protectedCaller();
    assert.equal(await guarded.matches(cond("segment", "StartsWith", ["ret"])), true);
    const ordered = await guarded.run({ orders: [{ sort: 1, field: "segment", direction: "Ascending" }, { sort: 2, field: "id", direction: "Descending" }], page: { pageNumber: 1, pageSize: 3 } });
    assert.deepEqual(ordered.data.map((r) => r.id), [40, 39, 38]);
    // A caller without the analyst role sees the name as stored: the name is not protected for them.
    const plain = await engineWith({ inferenceProtection: true }).prepareAsync(new QpPolicyContext());
    const result = await applyPolicy(source() as never, plain).toListAsync(about(cond("name", "StartsWith", [target.name.slice(0, 3)]))) as unknown as Result;
    assert.equal(result.totalCount, 1);
  });
});

describe("Inference protection: configuration, dry run and boundaries", () => {
  it("is off by default and bound from the configuration section (InferenceProtection)", () => {
    assert.equal(new QpPolicyEngine({}).options.inferenceProtection, false);
    assert.equal(bindPolicySection({ InferenceProtection: "true" }).inferenceProtection, true);
    assert.throws(() => bindPolicySection({ InferenceProtection: "maybe" }), /InferenceProtection|inferenceProtection/);
    assert.equal(new QpPolicyEngine({ caps: { maxProtectedInValues: 3 } }).options.caps.maxProtectedInValues, 3);
  });

  it("a decorator accepting an unknown risk is refused when the class is defined", () => {
    assert.throws(() => {
      class Bad {
        @QpMask({ strategy: MaskStrategy.Full, acceptInferenceRisks: ["Everything" as InferenceRisk] }) secret!: string;
      }
      return Bad;
    }, /acceptInferenceRisks/);
  });

  it("boundaries: bucket edges, rounding midpoints, period starts; a token that is no number or date is left to the plan", () => {
    const bucket = { mode: GeneralizeMode.Bucket, step: 1000 };
    assert.deepEqual(["3000", "3000.00", "-2000", "3e3", "3000.01", "2999.99"].map((t) => onBoundary(t, DataType.Number, bucket)), [true, true, true, true, false, false]);
    assert.equal(onBoundary("0.3", DataType.Number, { mode: GeneralizeMode.Bucket, step: 0.1 }), true, "exact decimals, no binary rounding");
    const round = { mode: GeneralizeMode.Round, step: 10 };
    assert.deepEqual(["15", "25", "-5", "10", "14.99"].map((t) => onBoundary(t, DataType.Number, round)), [true, true, true, false, false]);
    const year = { mode: GeneralizeMode.DatePart, part: DatePart.Year };
    assert.deepEqual(["1996-01-01", "1996-01-01T00:00:00Z", "1996-01-02", "1996-01-01T00:00:01Z"].map((t) => onBoundary(t, DataType.Date, year)), [true, true, false, false]);
    const quarter = { mode: GeneralizeMode.Truncate, part: DatePart.Quarter };
    assert.deepEqual(["2020-04-01", "2020-05-01"].map((t) => onBoundary(t, DataType.DateTime, quarter)), [true, false]);
    assert.equal(onBoundary("abc", DataType.Number, bucket), null);
    assert.equal(onBoundary("not a date", DataType.Date, year), null);
  });

  it("the schema and explain advertise exactly what remains: no Order, equality operators, the In cap and the boundaries", async () => {
    const engine = engineWith({ inferenceProtection: true });
    const context = await analystOf(engine);
    const fields = new Map((await engine.schemaAsync(CUSTOMERS, {}, context)).fields.map((f) => [f.path, f]));
    const equality = ["Equal", "IEqual", "In", "IIn", "IsNull", "IsNotNull"];
    for (const path of ["name", "email", "phone", "address"]) {
      const field = fields.get(path)!;
      assert.ok(!field.features.includes("Order"), `${path} offers Order`);
      assert.deepEqual(field.operators.filter((op) => !equality.includes(op)), [], `${path}: ${field.operators.join(", ")}`);
      assert.deepEqual(field.inference, { maxInValues: 10, rangeBoundaries: null, summable: false, acceptedRisks: [] });
    }
    const balance = fields.get("balance")!;
    const balanceOps: string[] = balance.operators;
    assert.ok(balanceOps.includes("GreaterThanOrEqual") && !balanceOps.includes("StartsWith") && !balanceOps.includes("NotEqual"));
    assert.equal(balance.inference?.rangeBoundaries, "multiples of 1000");
    assert.ok(fields.get("nickname")!.features.includes("Order"), "nickname accepts the Order risk");
    assert.deepEqual(fields.get("nickname")!.inference?.acceptedRisks, ["Order"]);
    assert.equal(fields.get("segment")!.inference, null);
    assert.ok(fields.get("segment")!.features.includes("Order"));
    const explained = await engine.explainAsync(CUSTOMERS, { field: "email" }, context) as { decisions: { feature: string; effect: string; source: string }[] };
    const order = explained.decisions.find((d) => d.feature === "Order")!;
    assert.equal(order.effect, PolicyEffect.Deny);
    assert.match(order.source, /^inference protection/);
    // Without the option, the schema offers what the spec's default allows.
    const open = engineWith({});
    const plainFields = new Map((await open.schemaAsync(CUSTOMERS, {}, await analystOf(open))).fields.map((f) => [f.path, f]));
    assert.ok(plainFields.get("email")!.features.includes("Order") && (plainFields.get("email")!.operators as string[]).includes("StartsWith"));
    assert.equal(plainFields.get("email")!.inference, null);
  });

  it("the linter predicts every attack above (error-level, on each attacked field and subject) and reports none of them once protection is on", async () => {
    const findingsOf = async (options: QpPolicyOptionsInput) => {
      const engine = engineWith({ lint: "off", ...options });
      await analystOf(engine);
      return (await engine.lintAsync()).filter((f) => f.severity === "error").map((f) => `${f.code} ${f.field} ${f.subject}`);
    };
    const open = await findingsOf({});
    for (const [field, subject] of [["email", "everyone"], ["phone", "everyone"], ["address", "everyone"], ["balance", "everyone"], ["birthDate", "everyone"], ["name", "Role:analyst"]]) {
      assert.ok(open.includes(`OrderableWhileHidden ${field} ${subject}`), `${field}: ${open.join("; ")}`);
      assert.ok(open.includes(`ProbeableWhileHidden ${field} ${subject}`), `${field}: ${open.join("; ")}`);
    }
    assert.deepEqual(await findingsOf({ inferenceProtection: true }), []);
  });

  it("a dry run traces what it would refuse and refuses nothing", async () => {
    const engine = engineWith({ inferenceProtection: true, dryRun: true });
    const context = await analystOf(engine);
    const result = await applyPolicy(rows.map((r) => Object.assign(new InfCustomer(), r)), context).toList(about(cond("name", "StartsWith", ["A"]))) as unknown as Result;
    const entry = result.policy.entries.find((e) => e.field === "name" && e.action === PolicyAction.Denied)!;
    assert.equal(entry.enforced, false);
    assert.match(entry.source, /^inference protection/);
    assert.ok(!(result instanceof PolicyException));
  });
});
