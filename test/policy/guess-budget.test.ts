// The per-caller guess budget (QpPolicyOptions.guessBudget, issue #42 item 2). The attack: under
// inference protection a caller may still test a masked e-mail for equality, one short list a
// request, as many requests as it likes, so a dictionary of candidates finds it (shown below
// against the previous behaviour). With a budget of N guesses per field per day, the caller gets
// N answers and then GuessBudgetExhausted (24, HTTP 429) with no statement reaching the
// database, while another caller is unaffected; on every target. The counts are the sanitizer's
// own (guessCountsOf: the same values the per-request allowance counts).
import assert from "node:assert/strict";
import { Column, DataSource, Entity, PrimaryColumn } from "typeorm";
import {
  MaskStrategy, PolicyErrorCode, PolicyException, QpConfigurationError, QpEntityCatalogue, QpInMemoryBudgetLedger, QpLedgerUnavailable, QpMask, QpPolicyContext,
  QpPolicyEngine, QpSubjectKind, QpTypeOrmBudgetLedger, QpBudgetRecord, StoreFailureMode, applyPolicy, type IQpBudgetLedger, type QpGuessBudgetInput,
} from "../../lib/index.js";
import { bindPolicySection } from "../../lib/decisions/options.js";
import { httpErrorOf } from "../../nest-module/errors.js";
import { type Dialect, openIsolatedDatabase, openOnIsolatedDatabase } from "../support/databases.js";
import { RecordingLogger } from "../support/query-logging.js";
import { describeOnTargets, targets } from "../support/targets.js";

@Entity("gb_customer")
class GbCustomer {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 20 }) segment!: string;
  @QpMask({ strategy: MaskStrategy.Email }) @Column({ type: "varchar", length: 120 }) email!: string;
  @QpMask({ strategy: MaskStrategy.Phone }) @Column({ type: "varchar", length: 30 }) phone!: string;
}

const names = ["ada", "ben", "cleo", "dan", "eve", "finn", "gus", "hana", "ivo", "jude", "kai", "lea", "max", "nia", "otto", "pia", "quinn", "rosa", "sam", "tara"];
const rows: GbCustomer[] = names.slice(0, 12).map((name, i) => Object.assign(new GbCustomer(), {
  id: i + 1, segment: i % 2 ? "retail" : "business", email: `${name}@example.com`, phone: `+1 555 01${String(i).padStart(2, "0")}`,
}));
const target = rows[9]!; // jude: the 10th candidate of the dictionary
const dictionary = names.map((name) => `${name}@example.com`);
const CUSTOMERS = "gb_customers";

type Shape = Record<string, unknown>;
const cond = (field: string, operator: string, values: unknown[], dataType = "Text", sort = 1) => ({ sort, field, operator, values, dataType });
const where = (...conditions: Shape[]): Shape => ({ conditionGroup: { connector: "And", conditions: conditions.map((c, i) => ({ ...c, sort: i })) } });
const about = (...conditions: Shape[]): Shape => where(cond("id", "Equal", [target.id], "Number"), ...conditions);

async function codeOf(work: Promise<unknown>): Promise<PolicyErrorCode | "ok"> {
  try {
    await work;
    return "ok";
  } catch (error) {
    if (error instanceof PolicyException) return error.errorCode;
    throw error;
  }
}

describeOnTargets("Guess budget", targets, async (dialect: Dialect) => {
  // The schema on a database of its own, then the DataSource the tests use: with a logger that counts statements.
  if (dialect === "sqlite") {
    const ds = await new DataSource({ type: "better-sqlite3", database: ":memory:", entities: [GbCustomer, QpBudgetRecord], synchronize: true, logger: loggers.sqlite, logging: true }).initialize();
    await ds.getRepository(GbCustomer).insert(rows);
    return ds;
  }
  const seeded = await openIsolatedDatabase(dialect, "querylib_guess_budget", [GbCustomer, QpBudgetRecord]);
  await seeded.getRepository(GbCustomer).insert(rows);
  await seeded.destroy();
  return openOnIsolatedDatabase(dialect, "querylib_guess_budget", [GbCustomer, QpBudgetRecord], { logger: loggers[dialect], logging: true });
}, (target_, dataSource) => {
  const isMemory = target_ === "memory";
  const logger = () => (isMemory ? null : loggers[target_ as Dialect]);
  let now = Date.parse("2026-11-29T10:00:00Z");
  const clock = () => now;
  beforeEach(() => {
    now = Date.parse("2026-11-29T10:00:00Z");
  });

  function engineWith(budget: Partial<QpGuessBudgetInput> | null, extra: Record<string, unknown> = {}): QpPolicyEngine {
    return new QpPolicyEngine({
      entities: new QpEntityCatalogue().expose(GbCustomer, CUSTOMERS), inferenceProtection: true, lint: "off",
      guessBudget: budget === null ? null : { ledger: new QpInMemoryBudgetLedger({ clock }), limit: 5, ...budget } as QpGuessBudgetInput, ...extra,
    });
  }
  const callerOf = (engine: QpPolicyEngine, user: string | null, tenant = "acme") => {
    let context = new QpPolicyContext().withSubject(QpSubjectKind.Tenant, tenant).withSubject(QpSubjectKind.Role, "analyst");
    if (user) context = context.withSubject(QpSubjectKind.User, user);
    return engine.prepareAsync(context);
  };
  const guard = (context: QpPolicyContext) => (isMemory ? applyPolicy(rows.map((r) => Object.assign(new GbCustomer(), r)), context) : applyPolicy(dataSource().getRepository(GbCustomer), context));
  const run = async (context: QpPolicyContext, shape: Shape) => (await guard(context).toListAsync(shape)) as unknown as { data: GbCustomer[] };
  /** Statements the test DataSource ran during `work` (memory: none). */
  async function statements<R>(work: () => Promise<R>): Promise<{ result: R | PolicyErrorCode | "ok"; count: number }> {
    const log = logger();
    const before = log?.queries.length ?? 0;
    const result = await codeOf(work());
    return { result, count: (log?.queries.length ?? 0) - before };
  }

  /** The attack: one Equal guess per request over the dictionary until the target's row answers. */
  async function searchDictionary(context: QpPolicyContext): Promise<{ found: string | null; answered: number; refusal: PolicyException | null }> {
    let answered = 0;
    for (const candidate of dictionary) {
      try {
        const { data } = await run(context, about(cond("email", "Equal", [candidate])));
        answered++;
        if (data.length === 1) return { found: candidate, answered, refusal: null };
      } catch (error) {
        if (error instanceof PolicyException) return { found: null, answered, refusal: error };
        throw error;
      }
    }
    return { found: null, answered, refusal: null };
  }

  it("the attack, against the previous behaviour (no budget): one Equal a request finds the masked e-mail in the dictionary", async () => {
    const result = await searchDictionary(await callerOf(engineWith(null), "mallory"));
    assert.equal(result.found, target.email);
    assert.equal(result.answered, 10);
  });

  it("with 5 guesses per field per day: 5 answers, then GuessBudgetExhausted (HTTP 429) with no statement reaching the database; another user is unaffected", async () => {
    const engine = engineWith({ limit: 5 });
    const mallory = await callerOf(engine, "mallory");
    const result = await searchDictionary(mallory);
    assert.equal(result.found, null);
    assert.equal(result.answered, 5);
    assert.equal(result.refusal?.errorCode, PolicyErrorCode.GuessBudgetExhausted);
    assert.equal(result.refusal?.code, "GuessBudgetExhausted");
    assert.match(result.refusal!.message, /1 guess on \w+\.email, and 0 of this user's 5 are left until 2026-11-30T00:00:00\.000Z/);
    const http = httpErrorOf(result.refusal);
    assert.deepEqual([http.status, http.body.code, http.body.errorCode], [429, "GuessBudgetExhausted", 24]);
    const refused = await statements(() => run(mallory, about(cond("email", "Equal", [target.email]))));
    assert.deepEqual(refused, { result: PolicyErrorCode.GuessBudgetExhausted, count: 0 });
    // The same request again (a cached plan) is charged again, and refused again.
    assert.equal(await codeOf(run(mallory, about(cond("email", "Equal", [target.email])))), PolicyErrorCode.GuessBudgetExhausted);
    // Another user (same tenant, same role) has a budget of its own; a request without guesses on a protected field is never charged.
    const alice = await callerOf(engine, "alice");
    const answered = await statements(() => run(alice, about(cond("email", "Equal", [target.email]))));
    assert.equal(answered.result, "ok");
    if (!isMemory) assert.ok(answered.count > 0, "the statement counter sees a request that runs");
    for (let i = 0; i < 8; i++) assert.equal((await run(mallory, where(cond("segment", "Equal", ["retail"])))).data.length, 6);
    // Another protected field has a budget of its own: a lookup by phone still works for mallory.
    assert.equal((await run(mallory, about(cond("phone", "Equal", [target.phone])))).data.length, 1);
  });

  it("an In list costs one guess per element; a refused request charges nothing for the field it was refused on", async () => {
    const engine = engineWith({ limit: 5 });
    const caller = await callerOf(engine, "mallory");
    assert.equal(await codeOf(run(caller, about(cond("email", "In", dictionary.slice(0, 3))))), "ok");
    assert.equal(await codeOf(run(caller, about(cond("email", "In", dictionary.slice(3, 6))))), PolicyErrorCode.GuessBudgetExhausted);
    assert.equal(await codeOf(run(caller, about(cond("email", "In", dictionary.slice(3, 5))))), "ok"); // the 2 left
    assert.equal(await codeOf(run(caller, about(cond("email", "Equal", [dictionary[5]])))), PolicyErrorCode.GuessBudgetExhausted);
  });

  it("Or-ed conditions and Segment sets count together; fields are charged in path order and an earlier field's charge stays when a later one is refused (no refunds)", async () => {
    const engine = engineWith({ limit: 5 });
    const caller = await callerOf(engine, "mallory");
    const ored = { conditionGroup: { connector: "Or", conditions: [cond("email", "Equal", [dictionary[0]], "Text", 0), cond("email", "In", dictionary.slice(1, 4), "Text", 1)], subConditionGroups: [
      { sort: 0, connector: "And", conditions: [cond("email", "Equal", [dictionary[4]], "Text", 0)] },
    ] } };
    assert.equal(await codeOf(run(caller, ored)), "ok"); // 5 guesses on email
    assert.equal(await codeOf(run(caller, about(cond("email", "Equal", [dictionary[5]])))), PolicyErrorCode.GuessBudgetExhausted);
    const other = await callerOf(engine, "oscar");
    const segment = { conditionSets: [
      { sort: 0, intersection: null, conditionGroup: { connector: "And", conditions: [cond("email", "In", dictionary.slice(0, 2), "Text", 0)] } },
      { sort: 1, intersection: "Union", conditionGroup: { connector: "And", conditions: [cond("email", "In", dictionary.slice(2, 5), "Text", 0)] } },
    ] };
    assert.equal(await codeOf(run(other, segment)), "ok"); // 2 + 3 guesses
    assert.equal(await codeOf(run(other, about(cond("email", "Equal", [dictionary[5]])))), PolicyErrorCode.GuessBudgetExhausted);
    // email (2 guesses, fits) is charged before phone (6, does not): the request is refused and email's 2 stay spent.
    const third = await callerOf(engine, "trent");
    const both = about(cond("email", "In", dictionary.slice(0, 2)), cond("phone", "In", ["1", "2", "3", "4", "5", "6"]));
    assert.equal(await codeOf(run(third, both)), PolicyErrorCode.GuessBudgetExhausted);
    assert.equal(await codeOf(run(third, about(cond("email", "In", dictionary.slice(2, 6))))), PolicyErrorCode.GuessBudgetExhausted); // 4 > the 3 left
    assert.equal(await codeOf(run(third, about(cond("email", "In", dictionary.slice(2, 5))))), "ok");
    assert.equal(await codeOf(run(third, about(cond("phone", "In", ["1", "2", "3", "4", "5"])))), "ok"); // phone was never charged
  });

  it("the window rolls over at UTC midnight; scope Tenant makes one allowance for all the tenant's users", async () => {
    const engine = engineWith({ limit: 2, scope: "tenant" });
    const [ann, bob, globex] = [await callerOf(engine, "ann"), await callerOf(engine, "bob"), await callerOf(engine, "gil", "globex")];
    assert.equal(await codeOf(run(ann, about(cond("email", "Equal", [dictionary[0]])))), "ok");
    assert.equal(await codeOf(run(bob, about(cond("email", "Equal", [dictionary[1]])))), "ok");
    assert.equal(await codeOf(run(ann, about(cond("email", "Equal", [dictionary[2]])))), PolicyErrorCode.GuessBudgetExhausted);
    assert.equal(await codeOf(run(globex, about(cond("email", "Equal", [dictionary[2]])))), "ok");
    now = Date.parse("2026-11-29T23:59:59.999Z");
    assert.equal(await codeOf(run(bob, about(cond("email", "Equal", [dictionary[2]])))), PolicyErrorCode.GuessBudgetExhausted);
    now = Date.parse("2026-11-30T00:00:00Z");
    assert.equal(await codeOf(run(bob, about(cond("email", "Equal", [dictionary[2]])))), "ok");
  });

  it("a ledger that cannot answer refuses (StoreUnavailable, 503), whatever storeFailure says, with no statement run", async () => {
    const failing: IQpBudgetLedger = { charge: async () => { throw new QpLedgerUnavailable("the budget ledger's database failed: connection refused"); } };
    for (const storeFailure of [StoreFailureMode.LastKnownGood, StoreFailureMode.StaticOnly, StoreFailureMode.FailClosed]) {
      const engine = engineWith({ ledger: failing }, { storeFailure });
      const caller = await callerOf(engine, "mallory");
      const refused = await statements(() => run(caller, about(cond("email", "Equal", [target.email]))));
      assert.deepEqual(refused, { result: PolicyErrorCode.StoreUnavailable, count: 0 }, storeFailure);
      // A request with no guess on a protected field does not need the ledger.
      assert.equal((await run(caller, where(cond("segment", "Equal", ["retail"])))).data.length, 6);
    }
    let thrown: unknown;
    try {
      await run(await callerOf(engineWith({ ledger: failing }), "m"), about(cond("email", "Equal", [target.email])));
    } catch (error) {
      thrown = error;
    }
    assert.equal(httpErrorOf(thrown).status, 503);
  });

  it("a caller without a subject of the budget's scope is refused when it guesses (MissingContextValue), not charged to a shared key", async () => {
    const engine = engineWith({ limit: 5 });
    const anonymous = await callerOf(engine, null);
    assert.equal(await codeOf(run(anonymous, about(cond("email", "Equal", [target.email])))), PolicyErrorCode.MissingContextValue);
    assert.equal((await run(anonymous, where(cond("segment", "Equal", ["retail"])))).data.length, 6);
  });

  if (!isMemory) {
    it("with the relational ledger in the same database: the budget holds across two engines (two replicas), and a refused request runs only the ledger's statements", async () => {
      const ledger = new QpTypeOrmBudgetLedger(dataSource(), { clock });
      const budget = { ledger, limit: 3 };
      const [one, two] = [engineWith(budget), engineWith(budget)];
      const user = `replica-${Date.now()}`;
      const codes = [];
      for (let i = 0; i < 6; i++) codes.push(await codeOf(run(await callerOf(i % 2 ? one : two, user), about(cond("email", "Equal", [dictionary[i]])))));
      assert.deepEqual(codes, ["ok", "ok", "ok", PolicyErrorCode.GuessBudgetExhausted, PolicyErrorCode.GuessBudgetExhausted, PolicyErrorCode.GuessBudgetExhausted]);
      const log = logger()!;
      const start = log.queries.length;
      assert.equal(await codeOf(run(await callerOf(one, user), about(cond("email", "Equal", [target.email])))), PolicyErrorCode.GuessBudgetExhausted);
      const ran = log.queries.slice(start).map((q) => q.sql);
      assert.ok(ran.length > 0 && ran.every((sql) => /querylib_budget/.test(sql)), ran.join("\n"));
    });
  }

  if (!isMemory) it("builders are charged when built (their host runs them later): the second one over the budget is refused", async () => {
    const engine = engineWith({ limit: 1 });
    const caller = await callerOf(engine, "mallory");
    assert.equal(await codeOf(applyPolicy(dataSource().getRepository(GbCustomer), caller).filter({ ...about(cond("email", "Equal", [dictionary[0]])), selects: ["id"] } as never)), "ok");
    assert.equal(await codeOf(applyPolicy(dataSource().getRepository(GbCustomer), caller).filter({ ...about(cond("email", "Equal", [dictionary[1]])), selects: ["id"] } as never)), PolicyErrorCode.GuessBudgetExhausted);
  });
});

const loggers: Record<Dialect, RecordingLogger> = { sqlite: new RecordingLogger(), postgres: new RecordingLogger(), mariadb: new RecordingLogger() };

describe("Guess budget: configuration, validated at startup", () => {
  const entities = () => new QpEntityCatalogue().expose(GbCustomer, CUSTOMERS);
  const ledger = new QpInMemoryBudgetLedger();
  const fails = (options: Record<string, unknown>, pattern: RegExp) => assert.throws(() => new QpPolicyEngine({ entities: entities(), lint: "off", ...options }), (error: unknown) => {
    assert.ok(error instanceof QpConfigurationError, String(error));
    assert.match(error.message, pattern);
    return true;
  });

  it("defaults: scope User, window Daily; enums read in any case; off by default", () => {
    const engine = new QpPolicyEngine({ entities: entities(), lint: "off", inferenceProtection: true, guessBudget: { ledger, limit: 20, scope: "role", window: "weekly" } });
    assert.deepEqual({ ...engine.options.guessBudget!, ledger: null }, { ledger: null, limit: 20, scope: "Role", window: "Weekly" });
    const defaults = new QpPolicyEngine({ entities: entities(), lint: "off", inferenceProtection: true, guessBudget: { ledger, limit: 20 } });
    assert.deepEqual([defaults.options.guessBudget!.scope, defaults.options.guessBudget!.window], ["User", "Daily"]);
    assert.equal(new QpPolicyEngine({ entities: entities(), lint: "off" }).options.guessBudget, null);
  });

  it("refuses a budget without inference protection, a missing ledger, a bad limit, scope or window, an unknown member", () => {
    fails({ guessBudget: { ledger, limit: 5 } }, /turn inferenceProtection on/);
    fails({ inferenceProtection: true, guessBudget: { limit: 5 } }, /guessBudget\.ledger/);
    for (const limit of [0, -1, 1.5, "ten", Number.NaN]) fails({ inferenceProtection: true, guessBudget: { ledger, limit } }, /guessBudget\.limit/);
    fails({ inferenceProtection: true, guessBudget: { ledger, limit: 5, scope: "Group" } }, /guessBudget\.scope/);
    fails({ inferenceProtection: true, guessBudget: { ledger, limit: 5, window: "Hourly" } }, /guessBudget\.window/);
    fails({ inferenceProtection: true, guessBudget: { ledger, limit: 5, perField: {} } }, /guessBudget\.perField: unknown member/);
  });

  it("set by the configure callback of bindPolicySection: checked and given its defaults when the engine is built", () => {
    const options = bindPolicySection({ InferenceProtection: "true", Lint: "off" }, (o) => {
      o.entities.expose(GbCustomer, CUSTOMERS);
      (o as { guessBudget: unknown }).guessBudget = { ledger, limit: 7 };
    });
    assert.deepEqual([new QpPolicyEngine(options).options.guessBudget!.limit, new QpPolicyEngine(options).options.guessBudget!.scope], [7, "User"]);
    const bad = bindPolicySection({ Lint: "off" }, (o) => {
      (o as { guessBudget: unknown }).guessBudget = { ledger, limit: 7 };
    });
    assert.throws(() => new QpPolicyEngine(bad), /GuessBudgetWithoutProtection|turn inferenceProtection on/);
  });
});
