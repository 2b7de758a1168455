// Output transforms under a guard, on every target (memory, SQLite, PostgreSQL, MariaDB): the chain
// order and QpDefault, masks wherever a member appears in output (typed results, dynamic rows,
// navigation, segments, summary keys and extremes), the trace, rule 2, salt and vault
// requirements, tokenization (scopes, concurrency, one vault call per page and scope), detached
// results (a stored row never changes), vault failures, and group floors. Every expectation is
// computed here from memberData()/moreTransformData() by oracles written in this file.
import "reflect-metadata";
import { expect } from "chai";
import { createHmac } from "node:crypto";
import { Column, Entity, JoinColumn, ManyToOne, OneToOne, PrimaryColumn, type DataSource, type ObjectLiteral } from "typeorm";
import {
  GeneralizeMode, MaskStrategy, PolicyErrorCode, PolicyException, QpConfigurationError, QpDefault, QpEntityCatalogue, QpGeneralize, QpInMemoryTokenVault, QpMask, QpTruncate,
  QpPolicyContext, QpPolicyEngine, applyPolicy, type IQpTokenVault, type PolicyTrace, type QpPolicyOptionsInput,
} from "../../lib/index.js";
import { type Dialect, openIsolatedDatabase } from "../support/databases.js";
import { type Target, describeOnTargets, targets } from "../support/targets.js";
import { Member, memberData } from "./domain.js";
import {
  CountingMutator, TrAddress, TrBadNumberMask, TrBranch, TrCard, TrHolder, TrMaskedEmbedded, TrMaskedNavigation, branchCities, moreTransformData, moreTransformEntities, regionOf,
} from "./more-domain.js";

const SALT = "0123456789abcdef-salt";
const hex32 = /^[0-9a-f]{32}$/;

// ---- targets --------------------------------------------------------------------------------

type Row = Record<string, unknown>;
type Shape = Record<string, unknown>;

interface Result {
  pageNumber: number;
  pageSize: number;
  pageCount: number;
  totalCount: number;
  data: Row[];
  policy: PolicyTrace;
}

const columnsOnly = (row: object, relations: readonly string[]) => Object.fromEntries(Object.entries(row).filter(([key]) => !relations.includes(key)));

const opened = new Map<Dialect, Promise<DataSource>>();

async function openAndSeed(dialect: Dialect): Promise<DataSource> {
  const dataSource = await openIsolatedDatabase(dialect, "querylib_transform", [Member, ...moreTransformEntities]);
  await dataSource.getRepository(Member).insert(memberData());
  const more = moreTransformData();
  await dataSource.getRepository(TrBranch).insert(more.branches.map((b) => columnsOnly(b, ["holders"])) as never[]);
  await dataSource.getRepository(TrHolder).insert(more.holders.map((h) => columnsOnly(h, ["branch", "cards"])) as never[]);
  await dataSource.getRepository(TrCard).insert(more.cards.map((c) => columnsOnly(c, ["holder"])) as never[]);
  await dataSource.getRepository(TrBadNumberMask).insert(more.bad);
  await dataSource.getRepository(TrMaskedNavigation).insert(more.maskedNavigations.map((m) => columnsOnly(m, ["branch"])) as never[]);
  await dataSource.getRepository(TrMaskedEmbedded).insert(more.maskedEmbeddeds);
  return dataSource;
}

/** One seeded DataSource per dialect per process (a failure is cached too). */
function transformDatabase(dialect: Dialect): Promise<DataSource> {
  let pending = opened.get(dialect);
  if (!pending) opened.set(dialect, (pending = openAndSeed(dialect)));
  return pending;
}

/** Fresh in-memory rows of an entity (new objects every call). */
function memoryRows(entity: Function): object[] {
  if (entity === Member) return memberData();
  const more = moreTransformData();
  if (entity === TrHolder) return more.holders;
  if (entity === TrBranch) return more.branches;
  if (entity === TrCard) return more.cards;
  if (entity === TrBadNumberMask) return more.bad;
  if (entity === TrMaskedNavigation) return more.maskedNavigations;
  if (entity === TrMaskedEmbedded) return more.maskedEmbeddeds;
  throw new Error(`no rows for ${entity.name}`);
}

interface Ctx {
  target: Target;
  dataSource(): DataSource;
  /** A guarded typed query (toList on fresh arrays / toListAsync on the repository). */
  run(entity: Function, context: QpPolicyContext, shape: Shape, rows?: object[]): Promise<Result>;
  /** The dynamic form (toListDynamic / toListAsyncDynamic). */
  dynamic(entity: Function, context: QpPolicyContext, filter: Shape, rows?: object[]): Promise<Result>;
}

function forEachTransformTarget(title: string, body: (ctx: Ctx) => void): void {
  describeOnTargets(title, targets, transformDatabase, (target, dataSource) => {
    const repository = (entity: Function) => dataSource().getRepository(entity as new () => ObjectLiteral);
    body({
      target,
      dataSource,
      async run(entity, context, shape, rows) {
        if (target === "memory") return (await applyPolicy(rows ?? memoryRows(entity), context).toList(shape)) as unknown as Result;
        return (await applyPolicy(repository(entity), context).toListAsync(shape)) as unknown as Result;
      },
      async dynamic(entity, context, filter, rows) {
        if (target === "memory") return (await applyPolicy(rows ?? memoryRows(entity), context).toListDynamic(filter)) as unknown as Result;
        return (await applyPolicy(repository(entity), context).toListAsyncDynamic(filter)) as unknown as Result;
      },
    });
  });
}

// ---- engines, shapes, errors ------------------------------------------------------------------

function engineWith(options: QpPolicyOptionsInput = {}): QpPolicyEngine {
  return new QpPolicyEngine({ hashSalt: SALT, tokenVault: new QpInMemoryTokenVault(), ...options });
}

const contextOf = (engine: QpPolicyEngine) => engine.prepareAsync(new QpPolicyContext());

const cond = (field: string, operator: string, values: unknown[], sort = 1) => ({
  sort, field, operator, values, ...(values.length > 0 && values.every((v) => typeof v === "number") ? { dataType: "Number" } : {}),
});
const where = (...conditions: Shape[]) => ({ connector: "And", conditions });
const byId = [{ field: "id", sort: 1 }];

async function expectPolicyError(action: () => Promise<unknown>, code: PolicyErrorCode, message?: RegExp): Promise<PolicyException> {
  let result: unknown;
  let caught: unknown;
  try {
    result = await action();
  } catch (error) {
    caught = error;
  }
  expect(result, `expected PolicyException ${PolicyErrorCode[code]}; got a result`).to.equal(undefined);
  expect(caught, String(caught)).to.be.instanceOf(PolicyException);
  const error = caught as PolicyException;
  expect(error.errorCode, error.message).to.equal(code);
  expect(error.code).to.equal(PolicyErrorCode[code]);
  if (message) expect(error.message).to.match(message);
  return error;
}

async function expectConfigurationError(action: () => unknown, message: RegExp): Promise<void> {
  let caught: unknown;
  try {
    await action();
  } catch (error) {
    caught = error;
  }
  expect(caught, "expected a QpConfigurationError").to.be.instanceOf(QpConfigurationError);
  expect((caught as Error).message).to.match(message);
}

const plain = (row: unknown) => JSON.parse(JSON.stringify(row)) as Row;

// ---- oracles (independent of the engine) --------------------------------------------------------

const hashOf = (salt: string, value: string) => createHmac("sha256", salt).update(Buffer.from(value, "utf8")).digest("hex").slice(0, 32);

/** Partial on code points (the oracle data has no combining marks or emoji). */
function partial(text: string, keepStart: number, keepEnd: number): string {
  const chars = [...text];
  if (chars.length <= keepStart + keepEnd) return "*".repeat(chars.length);
  return chars.slice(0, keepStart).join("") + "*".repeat(chars.length - keepStart - keepEnd) + chars.slice(chars.length - keepEnd).join("");
}

function emailMask(email: string): string {
  const at = email.lastIndexOf("@");
  return email[0] + "*".repeat(at - 1) + email.slice(at);
}

/** Phone: every digit but the last four becomes "*". */
function phoneMask(phone: string): string {
  const digits = phone.replace(/\D/g, "").length;
  let seen = 0;
  return phone.replace(/\d/g, (d) => (++seen > digits - 4 ? d : "*"));
}

const bucket = (n: number, step: number) => `${Math.floor(n / step) * step}-${Math.floor(n / step) * step + step}`;

/** The public row of a Member under the default projection, nationalId left out (tokens are random). */
function expectedMember(m: Member): Row {
  return {
    id: m.id, tenant: m.tenant, email: m.email === null ? null : emailMask(m.email), phone: phoneMask(m.phone!),
    customerRef: hashOf(SALT, m.customerRef), birthDate: m.birthDate === null ? null : m.birthDate.slice(0, 4),
    balance: bucket(m.balance, 1000), bio: [...m.bio].length > 10 ? `${[...m.bio].slice(0, 10).join("")}...` : m.bio,
    nickname: partial(m.nickname.toUpperCase(), 2, 1), secret: "hidden", fee: `${m.fee.toFixed(2)} EUR`,
    card: m.card.replace(/\d{4}/g, "####"), city: partial(m.city, 1, 1),
  };
}

/** score: +1 → nearest multiple of 10 → "[n] pts" → keep 2 + 2 → 4 characters + "~". */
function expectedScore(score: number): string {
  const mutated = score + 1;
  const rounded = String(Math.round(mutated / 10) * 10);
  const formatted = `[${rounded}] pts`;
  const masked = partial(formatted, 2, 2);
  return [...masked].length > 4 ? `${[...masked].slice(0, 4).join("")}~` : masked;
}

const pad = (n: number) => String(n).padStart(2, "0");

/** Tokens of national ids grouped by value must be a bijection value ↔ token. */
function expectTokenBijection(pairs: [string, unknown][]): Map<string, string> {
  const byValue = new Map<string, string>();
  for (const [value, token] of pairs) {
    expect(token, `token of ${value}`).to.be.a("string").and.match(hex32);
    const seen = byValue.get(value);
    if (seen) expect(token, `same value ${value}, same token`).to.equal(seen);
    else byValue.set(value, token as string);
  }
  expect(new Set(byValue.values()).size, "different values, different tokens").to.equal(byValue.size);
  return byValue;
}

// ---- entities for rule 2 (never stored) -------------------------------------------------------------

@Entity("tr_bad_bool_mask")
class TrBadBoolMask {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Fixed, text: "?" }) @Column({ type: "boolean" }) active!: boolean;
}

@Entity("tr_bad_date_mask")
class TrBadDateMask {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Partial }) @Column({ type: "date" }) born!: string;
}

@Entity("tr_bad_hash_number")
class TrBadHashNumber {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpMask({ strategy: MaskStrategy.Hash }) @Column({ type: "int" }) amount!: number;
}

/** Other transformation decorators on object members, and rule 2 broken where a query only reaches it. */
@Entity("tr_truncated_navigation")
class TrTruncatedNavigation {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "int" }) branchId!: number;
  @QpTruncate(3) @ManyToOne(() => TrBranch) @JoinColumn({ name: "branchId" }) branch!: TrBranch;
}

@Entity("tr_generalized_embedded")
class TrGeneralizedEmbedded {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpGeneralize({ mode: GeneralizeMode.Round }) @Column(() => TrAddress) address!: TrAddress;
}

@Entity("tr_defaulted_reference")
class TrDefaultedReference {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpDefault() @OneToOne(() => TrBranch) @JoinColumn() branch!: TrBranch;
}

class TrBadAddress {
  @QpMask({ strategy: MaskStrategy.Partial }) @Column({ type: "int" }) zip!: number;
}

@Entity("tr_bad_inside_embedded")
class TrBadInsideEmbedded {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column(() => TrBadAddress) address!: TrBadAddress;
}

@Entity("tr_ref_to_bad")
class TrRefToBad {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "int" }) badId!: number;
  @ManyToOne(() => TrBadNumberMask) @JoinColumn({ name: "badId" }) bad!: TrBadNumberMask;
}

/** The QpConfigurationError an action throws (its message and code), or "accepted". */
function configurationErrorOf(action: () => unknown): { code: string; message: string } | "accepted" {
  try {
    action();
  } catch (error) {
    expect(error).to.be.instanceOf(QpConfigurationError);
    return { code: (error as QpConfigurationError).code, message: (error as Error).message };
  }
  return "accepted";
}

// With a salt and a vault: these checks are about rule 2 alone (a missing salt or vault is a
// configuration problem of its own, found at startup too: test/policy/validate-once.test.ts).
const exposing = (entity: Function) => () => new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(entity, "x"), hashSalt: SALT, tokenVault: new QpInMemoryTokenVault() });

// =====================================================================================================

forEachTransformTarget("Guarded transforms", (ctx) => {
  const members = memberData();

  describe("the chain: mutate → generalize → format → mask → truncate; QpDefault short-circuits", () => {
    it("applies the stages in the fixed order, whatever order the decorators are written in", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(TrHolder, context, { selects: ["id", "score", "score2"], orders: byId });
      const holders = moreTransformData().holders;
      expect(result.data.map(plain)).to.deep.equal(holders.map((h) => ({ id: h.id, score: expectedScore(h.score), score2: expectedScore(h.score2) })));
      // Spot checks of the oracle: 14 → 15 → 20 → "[20] pts" → "[2****ts" → "[2**~".
      expect(result.data[1]!.score).to.equal("[2**~");
    });

    it("QpDefault replaces the value before any other stage (the mutator is never called); QpDefault() gives null", async () => {
      CountingMutator.calls = 0;
      const context = await contextOf(engineWith());
      const result = await ctx.run(TrHolder, context, { selects: ["id", "label", "note"], orders: byId });
      expect(result.data.map(plain)).to.deep.equal(moreTransformData().holders.map((h) => ({ id: h.id, label: "n/a", note: null })));
      expect(CountingMutator.calls).to.equal(0);
    });

    it("a mutate-only member, generalized dates, a formatted datetime, a rounded decimal, and Null on a number", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(TrHolder, context, { selects: ["id", "motto", "joined", "since", "rate", "pin"], orders: byId });
      expect(result.data.map(plain)).to.deep.equal(moreTransformData().holders.map((h) => ({
        id: h.id,
        motto: [...h.motto].reverse().join(""),
        joined: `2020-${pad(((h.id - 1) % 12) + 1)}-01`,
        since: `2024-${pad(((h.id - 1) % 12) + 1)}-${pad(h.id)} 10:30`,
        rate: `${h.id}.${h.id % 2 ? 1 : 9}`,
        pin: null,
      })));
    });
  });

  describe("masks wherever the member appears in output", () => {
    it("typed results (default projection): every member of Member, instances of the entity", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(Member, context, { orders: byId });
      expect(result.totalCount).to.equal(24);
      for (const row of result.data) expect(row).to.be.instanceOf(Member);
      const withoutToken = (r: Row) => Object.fromEntries(Object.entries(plain(r)).filter(([key]) => key !== "nationalId"));
      expect(result.data.map(withoutToken)).to.deep.equal(members.map(expectedMember));
      expectTokenBijection(result.data.map((r, i) => [members[i]!.nationalId, r.nationalId]));
    });

    it("dynamic rows: plain objects with the same masks", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.dynamic(Member, context, { selects: ["id", "email", "phone", "customerRef", "city", "secret"], orders: byId });
      expect(result.data.map(plain)).to.deep.equal(members.map((m) => {
        const e = expectedMember(m);
        return { id: m.id, email: e.email, phone: e.phone, customerRef: e.customerRef, city: e.city, secret: "hidden" };
      }));
      for (const row of result.data) expect(row).to.not.be.instanceOf(Member);
    });

    it("selects through a reference and a collection; an alias keeps its mask (typed)", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(TrHolder, context, { selects: ["id", "displayName", "branch.manager", "branch.name", "cards.pan"], orders: byId });
      const expected = moreTransformData().holders.map((h) => ({
        id: h.id,
        displayName: partial(h.name, 2, 0),
        // Each object below the root comes with its key (2.1.5 §4.1), which the caller may select as stored.
        branch: h.branch ? { manager: emailMask(h.branch.manager), name: h.branch.name, id: h.branch.id } : null,
        cards: h.cards.map((c) => ({ pan: "*".repeat(12) + c.pan.slice(-4), id: c.id })),
      }));
      expect(result.data.map(plain)).to.deep.equal(expected);
      for (const row of result.data) expect(row).to.not.have.property("name");
    });

    it("selects through navigation in dynamic rows (a missing reference gives null members)", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.dynamic(TrHolder, context, { selects: ["id", "displayName", "branch.manager"], orders: byId });
      expect(result.data.map(plain)).to.deep.equal(moreTransformData().holders.map((h) => ({
        id: h.id, displayName: partial(h.name, 2, 0), branch: { manager: h.branch ? emailMask(h.branch.manager) : null },
      })));
    });

    it("a whole reference select masks and tokenizes its members", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(TrHolder, context, { selects: ["id", "branch"], orders: byId, page: { pageNumber: 1, pageSize: 3 } });
      const holders = moreTransformData().holders.slice(0, 3);
      result.data.forEach((row, i) => {
        const branch = row.branch as Row;
        const source = holders[i]!.branch!;
        expect({ id: branch.id, name: branch.name, manager: branch.manager }).to.deep.equal({ id: source.id, name: source.name, manager: emailMask(source.manager) });
        expect(branch.registrationId).to.match(hex32);
        expect(branch.code).to.match(hex32);
        expect(branch.code).to.not.equal(branch.registrationId);
      });
    });

    it("segment results", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(Member, context, {
        conditionSets: [
          { sort: 1, conditionGroup: where(cond("tenant", "Equal", ["a"])) },
          { sort: 2, intersection: "Intersect", conditionGroup: where(cond("id", "LessThanOrEqual", [6])) },
        ],
        selects: ["id", "email", "city", "balance"],
        orders: byId,
      });
      const expected = members.filter((m) => m.tenant === "a" && m.id <= 6).map((m) => {
        const e = expectedMember(m);
        return { id: m.id, email: e.email, city: e.city, balance: e.balance };
      });
      expect(expected).to.have.length(3);
      expect(result.data.map(plain)).to.deep.equal(expected);
    });

    it("summary group keys of an allowAggregate member are masked", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(Member, context, { groupBy: { fields: ["city"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });
      const counts = new Map<string, number>();
      for (const m of members) counts.set(m.city, (counts.get(m.city) ?? 0) + 1);
      const expected = [...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([city, n]) => ({ city: partial(city, 1, 1), n }));
      expect(result.data.map(plain)).to.deep.equal(expected);
      expect(result.totalCount).to.equal(3);
    });

    it("summary group keys through a navigation keep the mask of an aliased member (branch.town → branchTown)", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(TrHolder, context, { groupBy: { fields: ["branch.town"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });
      const counts = new Map<string, number>();
      for (const h of moreTransformData().holders) if (h.branch) counts.set(h.branch.city, (counts.get(h.branch.city) ?? 0) + 1);
      expect(Object.fromEntries(counts)).to.deep.equal({ Bern: 6, Genève: 7, Lugano: 6 });
      // Holder 20 has no branch: its group (1 row) is below the floor of 5.
      const expected = [...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([city, n]) => ({ branchTown: partial(city, 1, 1), n }));
      expect(result.data.map(plain)).to.deep.equal(expected);
      expect(branchCities.map((c) => partial(c, 1, 1))).to.deep.equal(["B**n", "G****e", "L****o"]);
    });

    it("Minimum/Maximum of a transformed member are transformed like its values; Count stays a number", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(Member, context, {
        groupBy: {
          fields: ["tenant"],
          aggregateBy: [
            { alias: "n", aggregator: "Count" },
            { field: "balance", alias: "minBalance", aggregator: "Minimum" },
            { field: "balance", alias: "maxBalance", aggregator: "Maximum" },
            { field: "city", alias: "firstCity", aggregator: "Minimum" },
            { field: "city", alias: "lastCity", aggregator: "Maximum" },
          ],
        },
      });
      const expected = ["a", "b"].map((tenant) => {
        const rows = members.filter((m) => m.tenant === tenant);
        const balances = rows.map((m) => m.balance);
        const cities = rows.map((m) => m.city).sort();
        return {
          tenant, n: rows.length, minBalance: bucket(Math.min(...balances), 1000), maxBalance: bucket(Math.max(...balances), 1000),
          firstCity: partial(cities[0]!, 1, 1), lastCity: partial(cities[cities.length - 1]!, 1, 1),
        };
      });
      expect(result.data.map(plain)).to.deep.equal(expected);
    });

    it("traces each selected member: Allowed when untransformed, Masked with the decorator as source when masked", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(Member, context, { orders: byId, page: { pageNumber: 1, pageSize: 2 } });
      const selects = result.policy.entries.filter((e) => e.feature === "Select");
      const entry = (field: string) => {
        const found = selects.filter((e) => e.field === field);
        expect(found, `one Select entry for ${field}`).to.have.length(1);
        return found[0]!;
      };
      for (const field of ["id", "tenant"]) expect(entry(field)).to.include({ action: "Allowed", enforced: true });
      expect(entry("email")).to.include({ action: "Masked", source: "QpMask on Member.email", level: 1, enforced: true });
      expect(entry("customerRef")).to.include({ action: "Masked", source: "QpMask on Member.customerRef" });
      expect(entry("nationalId")).to.include({ action: "Masked", source: "QpMask on Member.nationalId" });
      const transformed: Record<string, string[]> = {
        phone: ["QpMask"], birthDate: ["QpGeneralize"], balance: ["QpGeneralize"], bio: ["QpTruncate"], nickname: ["QpMutate", "QpMask"],
        secret: ["QpDefault", "QpMask"], fee: ["QpFormat"], card: ["QpMask"], city: ["QpMask"],
      };
      for (const [field, decorators] of Object.entries(transformed)) {
        const e = entry(field);
        expect(e.action, field).to.not.equal("Allowed");
        expect(decorators.map((d) => `${d} on Member.${field}`), field).to.include(e.source);
      }
    });

    // PolicyAction has Mutated, Defaulted and Generalized beside Masked (SPEC "Enumerations"); the
    // trace should say which transform applies. (The engine currently reports Masked for all.)
    it("traces a generalized member as Generalized, a defaulted one as Defaulted, a mutated one as Mutated", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(TrHolder, context, { selects: ["id", "level", "label", "note", "motto", "displayName"], orders: byId });
      const actionOf = (field: string) => result.policy.entries.find((e) => e.feature === "Select" && e.field === field)?.action;
      expect({ level: actionOf("level"), label: actionOf("label"), note: actionOf("note"), motto: actionOf("motto"), displayName: actionOf("displayName") })
        .to.deep.equal({ level: "Generalized", label: "Defaulted", note: "Defaulted", motto: "Mutated", displayName: "Masked" });
    });
  });

  describe("the trace of a transformed member: its action and each step of its chain", () => {
    const selectEntry = (result: Result, field: string) => {
      const found = result.policy.entries.filter((e) => e.feature === "Select" && e.field === field);
      expect(found, `one Select entry for ${field}`).to.have.length(1);
      return found[0]!;
    };

    it("lists every step that applies, in chain order, each with its decorator; the entry names the step that decides", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(TrHolder, context, { selects: ["id", "score", "label", "rate", "since", "displayName"], orders: byId });
      expect(selectEntry(result, "score")).to.deep.include({ action: "Masked", source: "QpMask on TrHolder.score", level: 1, enforced: true });
      expect(selectEntry(result, "score").transforms).to.deep.equal([
        { action: "Mutated", source: "QpMutate on TrHolder.score" },
        { action: "Generalized", source: "QpGeneralize on TrHolder.score" },
        { action: "Mutated", source: "QpFormat on TrHolder.score" },
        { action: "Masked", source: "QpMask on TrHolder.score" },
        { action: "Masked", source: "QpTruncate on TrHolder.score" },
      ]);
      // QpDefault short-circuits the chain: the other stages never apply.
      expect(selectEntry(result, "label")).to.deep.include({ action: "Defaulted", source: "QpDefault on TrHolder.label", transforms: [{ action: "Defaulted", source: "QpDefault on TrHolder.label" }] });
      expect(selectEntry(result, "rate")).to.deep.include({ action: "Generalized", source: "QpGeneralize on TrHolder.rate" });
      expect(selectEntry(result, "since")).to.deep.include({ action: "Mutated", source: "QpFormat on TrHolder.since" });
      expect(selectEntry(result, "displayName")).to.deep.include({ action: "Masked", source: "QpMask on TrHolder.displayName" });
      expect(selectEntry(result, "id")).to.include({ action: "Allowed" }).and.not.have.property("transforms");
    });

    it("in the default projection and through a whole reference too", async () => {
      const context = await contextOf(engineWith());
      const members = await ctx.run(Member, context, { orders: byId, page: { pageNumber: 1, pageSize: 1 } });
      expect(selectEntry(members, "balance")).to.deep.include({ action: "Generalized", transforms: [{ action: "Generalized", source: "QpGeneralize on Member.balance" }] });
      expect(selectEntry(members, "nickname")).to.deep.include({
        action: "Masked", source: "QpMask on Member.nickname",
        transforms: [{ action: "Mutated", source: "QpMutate on Member.nickname" }, { action: "Masked", source: "QpMask on Member.nickname" }],
      });
      expect(selectEntry(members, "fee")).to.deep.include({ action: "Mutated", source: "QpFormat on Member.fee" });
      expect(selectEntry(members, "bio")).to.deep.include({ action: "Masked", source: "QpTruncate on Member.bio" });
      const holders = await ctx.run(TrHolder, context, { selects: ["id", "branch"], orders: byId, page: { pageNumber: 1, pageSize: 1 } });
      expect(selectEntry(holders, "branch.manager")).to.deep.include({ action: "Masked", transforms: [{ action: "Masked", source: "QpMask on TrBranch.manager" }] });
      expect(selectEntry(holders, "branch.town")).to.deep.include({ action: "Masked", source: "QpMask on TrBranch.town" });
    });
  });

  describe("rule 2: a text mask needs a member text can be assigned to", () => {
    it("is refused at the first guarded use of an unexposed class (default projection)", async () => {
      const context = await contextOf(engineWith());
      await expectConfigurationError(() => ctx.run(TrBadNumberMask, context, {}), /QpMask on TrBadNumberMask\.amount.*number/);
    });

    it("is refused at the first guarded use of an unexposed class, even when the query does not select the member", async () => {
      const context = await contextOf(engineWith());
      await expectConfigurationError(() => ctx.run(TrBadNumberMask, context, { selects: ["id"] }), /QpMask on TrBadNumberMask\.amount/);
    });

    // A QpMask Full on a whole navigation or embedded member: text cannot be assigned to an object.
    // Whatever the engine does (refuse, or mask what is inside), the values must not come back in clear.
    const clearOf = (text: string, values: string[]) => values.filter((v) => text.includes(v));
    async function expectNothingInClear(action: () => Promise<Result>, values: string[]) {
      let result: Result | undefined;
      try {
        result = await action();
      } catch {
        return; // refused: nothing in clear
      }
      const leaked = clearOf(JSON.stringify(result.data), values);
      expect(leaked, `returned in clear although the member is masked: ${JSON.stringify(result.data)}`).to.deep.equal([]);
    }

    it("a transformation on a whole navigation or embedded member is refused at the first guarded use, whatever the query selects", async () => {
      const context = await contextOf(engineWith());
      for (const [entity, member] of [[TrMaskedNavigation, "TrMaskedNavigation.branch"], [TrMaskedEmbedded, "TrMaskedEmbedded.address"]] as const) {
        let caught: unknown;
        try {
          await ctx.run(entity, context, { selects: ["id"], orders: byId });
        } catch (error) {
          caught = error;
        }
        expect(caught, member).to.be.instanceOf(QpConfigurationError);
        expect((caught as QpConfigurationError).code).to.equal("TransformOnObjectMember");
        expect((caught as Error).message).to.include(`QpMask on ${member}`);
      }
    });

    it("a mask on a whole navigation member never returns its values in clear", async () => {
      const context = await contextOf(engineWith());
      const names = moreTransformData().branches.map((b) => b.name);
      await expectNothingInClear(() => ctx.run(TrMaskedNavigation, context, { selects: ["id", "branch"], orders: byId }), names);
      await expectNothingInClear(() => ctx.run(TrMaskedNavigation, context, { selects: ["id", "branch.name"], orders: byId }), names);
    });

    it("a mask on a whole embedded member never returns its values in clear", async () => {
      const context = await contextOf(engineWith());
      const values = moreTransformData().maskedEmbeddeds.flatMap((m) => [m.address.street, m.address.city]);
      await expectNothingInClear(() => ctx.run(TrMaskedEmbedded, context, { orders: byId }), values);
      await expectNothingInClear(() => ctx.run(TrMaskedEmbedded, context, { selects: ["id", "address"], orders: byId }), values);
      await expectNothingInClear(() => ctx.run(TrMaskedEmbedded, context, { selects: ["id", "address.street"], orders: byId }), values);
    });

    it("the Null strategy on a number and a mask after QpGeneralize/QpFormat are accepted", async () => {
      const context = await contextOf(engineWith({ entities: new QpEntityCatalogue().expose(TrHolder, "holder") }));
      const result = await ctx.run(TrHolder, context, { selects: ["id", "pin", "score"], orders: byId, page: { pageNumber: 1, pageSize: 2 } });
      expect(result.data.map(plain)).to.deep.equal([{ id: 1, pin: null, score: expectedScore(7) }, { id: 2, pin: null, score: expectedScore(14) }]);
    });
  });

  describe("hash salt and token vault requirements", () => {
    it("MissingHashSalt (21) without a salt", async () => {
      const context = await contextOf(new QpPolicyEngine({ tokenVault: new QpInMemoryTokenVault() }));
      await expectPolicyError(() => ctx.run(Member, context, { orders: byId }), PolicyErrorCode.MissingHashSalt, /hashSalt/);
      await expectPolicyError(() => ctx.run(Member, context, { selects: ["id", "customerRef"] }), PolicyErrorCode.MissingHashSalt);
    });

    it("MissingHashSalt (21) with a salt of 15 characters; 16 characters are enough", async () => {
      const short = await contextOf(new QpPolicyEngine({ hashSalt: "x".repeat(15), tokenVault: new QpInMemoryTokenVault() }));
      await expectPolicyError(() => ctx.run(Member, short, { selects: ["id", "customerRef"] }), PolicyErrorCode.MissingHashSalt);
      const salt16 = "0123456789abcdef";
      const enough = await contextOf(new QpPolicyEngine({ hashSalt: salt16, tokenVault: new QpInMemoryTokenVault() }));
      const result = await ctx.run(Member, enough, { selects: ["id", "customerRef"], orders: byId });
      expect(result.data.map((r) => r.customerRef)).to.deep.equal(members.map((m) => hashOf(salt16, m.customerRef)));
    });

    it("MissingTokenVault (22) without a vault", async () => {
      const context = await contextOf(new QpPolicyEngine({ hashSalt: SALT }));
      await expectPolicyError(() => ctx.run(Member, context, { orders: byId }), PolicyErrorCode.MissingTokenVault, /tokenVault/);
      await expectPolicyError(() => ctx.run(TrHolder, context, { selects: ["id", "branch.code"] }), PolicyErrorCode.MissingTokenVault);
    });
  });

  describe("Tokenize", () => {
    it("equal values get equal tokens within a scope, on every page and query", async () => {
      const vault = new QpInMemoryTokenVault();
      const context = await contextOf(engineWith({ tokenVault: vault }));
      const first = await ctx.run(Member, context, { selects: ["id", "nationalId"], orders: byId, page: { pageNumber: 1, pageSize: 10 } });
      const second = await ctx.run(Member, context, { selects: ["id", "nationalId"], orders: byId, page: { pageNumber: 2, pageSize: 14 } });
      const rows = [...first.data, ...second.data];
      const tokens = expectTokenBijection(rows.map((r) => [members[(r.id as number) - 1]!.nationalId, r.nationalId]));
      expect(tokens.size).to.equal(new Set(members.map((m) => m.nationalId)).size);
      expect(vault.size("national-id")).to.equal(tokens.size);
    });

    it("a shared tokenScope gives equal tokens across members and entities; other scopes give other tokens", async () => {
      const context = await contextOf(engineWith());
      const memberTokens = expectTokenBijection((await ctx.run(Member, context, { selects: ["id", "nationalId"], orders: byId })).data
        .map((r) => [members[(r.id as number) - 1]!.nationalId, r.nationalId]));
      const holders = moreTransformData().holders;
      const holderRows = (await ctx.run(TrHolder, context, { selects: ["id", "nationalId", "otherId", "branch.registrationId", "branch.code"], orders: byId })).data;
      const branchRows = (await ctx.run(TrBranch, context, { selects: ["id", "registrationId", "code"], orders: byId })).data;
      for (const row of holderRows) {
        const h = holders[(row.id as number) - 1]!;
        expect(row.nationalId, `holder ${h.id} nationalId (shared scope)`).to.equal(memberTokens.get(h.nationalId));
        expect(row.otherId, `holder ${h.id} otherId (own scope)`).to.match(hex32).and.not.equal(memberTokens.get(h.otherId));
        const branch = row.branch as Row | null;
        if (!h.branch) {
          expect(branch).to.equal(null);
          continue;
        }
        expect(branch!.registrationId, "branch.registrationId (shared scope)").to.equal(memberTokens.get(h.branch.registrationId));
        expect(branch!.code, "branch.code (per-member scope) differs from the shared scope").to.match(hex32).and.not.equal(memberTokens.get(h.branch.code));
        const direct = branchRows.find((b) => b.id === h.branch!.id)!;
        expect(branch!.code, "the same member reached from another root has the same token").to.equal(direct.code);
        expect(direct.registrationId).to.equal(branch!.registrationId);
      }
      // otherId tokens are consistent among themselves.
      expectTokenBijection(holderRows.map((r) => [holders[(r.id as number) - 1]!.otherId, r.otherId]));
    });

    it("100 concurrent guarded queries tokenizing one new value produce one token", async function () {
      this.timeout(60_000);
      const vault = new QpInMemoryTokenVault();
      const context = await contextOf(engineWith({ tokenVault: vault }));
      const results = await Promise.all(Array.from({ length: 100 }, () => ctx.run(Member, context, { conditionGroup: where(cond("id", "Equal", [2])), selects: ["id", "nationalId"] })));
      const tokens = new Set(results.map((r) => r.data[0]!.nationalId));
      expect(tokens.size).to.equal(1);
      expect([...tokens][0]).to.match(hex32);
      expect(vault.size("national-id")).to.equal(1);
    });

    it("100 concurrent vault calls for one new value produce one token", async () => {
      const vault = new QpInMemoryTokenVault();
      const answers = await Promise.all(Array.from({ length: 100 }, () => vault.tokenize("fresh-scope", ["new-value"])));
      expect(new Set(answers.map((a) => a.get("new-value"))).size).to.equal(1);
    });

    it("costs one vault call per page and scope", async () => {
      const vault = new QpInMemoryTokenVault();
      const context = await contextOf(engineWith({ tokenVault: vault }));
      await ctx.run(Member, context, { selects: ["id", "email"], orders: byId });
      expect(vault.calls, "no tokenized member, no call").to.equal(0);
      await ctx.run(Member, context, { selects: ["id", "nationalId"], orders: byId });
      expect(vault.calls, "24 rows, one scope").to.equal(1);
      // national-id (nationalId and branch.registrationId), other-scope (otherId), branch.code's own scope.
      await ctx.run(TrHolder, context, { selects: ["id", "nationalId", "otherId", "branch.registrationId", "branch.code"], orders: byId });
      expect(vault.calls, "three scopes").to.equal(4);
      await ctx.dynamic(Member, context, { selects: ["id", "nationalId"], orders: byId, page: { pageNumber: 2, pageSize: 5 } });
      expect(vault.calls).to.equal(5);
    });
  });

  describe("detached results: a stored row never changes", () => {
    it("after masked queries the stored rows are unchanged", async () => {
      const context = await contextOf(engineWith());
      const memberRows = memberData();
      const more = moreTransformData();
      const rowsFor = (entity: Function) => (ctx.target === "memory" ? (entity === Member ? memberRows : more.holders) : undefined);
      const typed = await ctx.run(Member, context, { orders: byId }, rowsFor(Member));
      await ctx.dynamic(Member, context, { orders: byId }, rowsFor(Member));
      await ctx.run(TrHolder, context, { selects: ["id", "displayName", "branch", "cards.pan", "score"], orders: byId }, rowsFor(TrHolder));
      expect(typed.data[1]!.email).to.equal(emailMask(members[1]!.email!));
      const fresh = memberData();
      const freshMore = moreTransformData();
      if (ctx.target === "memory") {
        expect(memberRows.map(plain)).to.deep.equal(fresh.map(plain));
        const strip = (h: TrHolder) => ({ ...columnsOnly(h, ["branch", "cards"]), branch: h.branch ? columnsOnly(h.branch, ["holders"]) : null, cards: h.cards.map((c) => columnsOnly(c, ["holder"])) });
        expect(more.holders.map(strip).map(plain)).to.deep.equal(freshMore.holders.map(strip).map(plain));
        for (const row of typed.data) expect(memberRows, "a result row is not an input object").to.not.include(row);
      } else {
        const stored = await ctx.dataSource().getRepository(Member).find({ order: { id: "ASC" } });
        expect(stored.map(plain)).to.deep.equal(fresh.map(plain));
        const branches = await ctx.dataSource().getRepository(TrBranch).find({ order: { id: "ASC" } });
        expect(branches.map(plain)).to.deep.equal(freshMore.branches.map((b) => plain(columnsOnly(b, ["holders"]))));
        const cards = await ctx.dataSource().getRepository(TrCard).find({ order: { id: "ASC" } });
        expect(cards.map((c) => c.pan)).to.deep.equal(freshMore.cards.map((c) => c.pan));
      }
    });

    it("typed results are new instances, not the objects given (memory) or loaded for TypeORM", async () => {
      const context = await contextOf(engineWith());
      const rows = memberData();
      const first = await ctx.run(Member, context, { selects: ["id", "email"], orders: byId }, ctx.target === "memory" ? rows : undefined);
      const second = await ctx.run(Member, context, { selects: ["id", "email"], orders: byId }, ctx.target === "memory" ? rows : undefined);
      first.data.forEach((row, i) => {
        expect(row).to.be.instanceOf(Member);
        expect(row).to.not.equal(second.data[i]);
        if (ctx.target === "memory") expect(row).to.not.equal(rows[i]);
      });
      if (ctx.target === "memory") expect(rows[1]!.email).to.equal(members[1]!.email);
    });
  });

  describe("vault failures fail the query (StoreUnavailable 17), no data", () => {
    const failing: [string, () => IQpTokenVault][] = [
      ["a vault whose tokenize rejects", () => ({ tokenize: async () => { throw new Error("vault is down"); } })],
      ["a vault whose tokenize throws synchronously", () => ({ tokenize: () => { throw new Error("vault exploded"); } })],
      ["a vault that answers without the tokens asked for", () => ({ tokenize: async () => new Map<string, string>() })],
      // A custom vault breaking its contract must not surface as a TypeError (a 500) either.
      ["a vault that answers null", () => ({ tokenize: async () => null as unknown as ReadonlyMap<string, string> })],
      ["a vault that answers a plain object", () => ({ tokenize: async (_scope: string, values: readonly string[]) => Object.fromEntries(values.map((v) => [v, "t"])) as unknown as ReadonlyMap<string, string> })],
    ];
    for (const [name, make] of failing) {
      it(name, async () => {
        const context = await contextOf(engineWith({ tokenVault: make() }));
        await expectPolicyError(() => ctx.run(Member, context, { selects: ["id", "nationalId"], orders: byId }), PolicyErrorCode.StoreUnavailable);
        await expectPolicyError(() => ctx.dynamic(Member, context, { orders: byId }), PolicyErrorCode.StoreUnavailable);
        await expectPolicyError(() => ctx.run(TrHolder, context, { selects: ["id", "branch.code"], orders: byId }), PolicyErrorCode.StoreUnavailable);
      });
    }

    it("a query without tokenized members does not call the failing vault", async () => {
      const context = await contextOf(engineWith({ tokenVault: { tokenize: async () => { throw new Error("vault is down"); } } }));
      const result = await ctx.run(Member, context, { selects: ["id", "email"], orders: byId });
      expect(result.data).to.have.length(24);
    });
  });

  describe("group floors", () => {
    const regionCounts = () => {
      const counts = new Map<string, number>();
      for (const h of moreTransformData().holders) counts.set(h.region, (counts.get(h.region) ?? 0) + 1);
      return counts;
    };
    const byRegion = (extra: Shape = {}, aggregates: Shape[] = []) => ({
      groupBy: { fields: ["region"], aggregateBy: [{ alias: "n", aggregator: "Count" }, ...aggregates] }, ...extra,
    });
    const having = (...conditions: Shape[]) => ({ having: { connector: "And", conditions } });
    const expectedGroups = (floor: number, keep: (n: number) => boolean = () => true) =>
      [...regionCounts()].filter(([, n]) => n >= floor && keep(n)).sort(([a], [b]) => (a < b ? -1 : 1)).map(([region, n]) => ({ region: partial(region, 1, 1), n }));

    it("the data: North 8, South 6, East 4, West 2 holders", () => {
      expect(Object.fromEntries(regionCounts())).to.deep.equal({ North: 8, South: 6, East: 4, West: 2 });
      expect(regionOf(20)).to.equal("West");
    });

    it("caps.minGroupSize defaults to 5: smaller groups are suppressed; totals count only returned groups; no hidden output", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(TrHolder, context, byRegion());
      expect(result.data.map(plain)).to.deep.equal(expectedGroups(5));
      expect(result.data.map(plain)).to.deep.equal([{ region: "N***h", n: 8 }, { region: "S***h", n: 6 }]);
      expect(result.totalCount).to.equal(2);
      expect(result.pageCount).to.equal(1);
      const paged = await ctx.run(TrHolder, context, byRegion({ page: { pageNumber: 2, pageSize: 1 } }));
      expect(paged.data.map(plain)).to.deep.equal([{ region: "S***h", n: 6 }]);
      expect([paged.totalCount, paged.pageCount]).to.deep.equal([2, 2]);
    });

    it("all groups below the floor: empty data, totalCount 0, not an error", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(TrHolder, context, byRegion({ conditionGroup: where(cond("region", "In", ["East", "West"])) }));
      expect(result.data).to.deep.equal([]);
      expect([result.totalCount, result.pageCount]).to.deep.equal([0, 0]);
      const singles = await ctx.run(TrHolder, context, { groupBy: { fields: ["tenant", "id"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });
      expect(singles.data).to.deep.equal([]);
      expect(singles.totalCount).to.equal(0);
    });

    // Issue #41: an empty answer said nothing of why. The entry says the floor applies and nothing
    // more: it is the same whether the floor withheld all groups, some or none (a count of withheld
    // groups would itself tell a caller about rows it may not see).
    const floorEntry = {
      field: "groupBy", feature: "Group", action: "Injected", level: null, source: "group floor (caps.minGroupSize, a decorator's minGroupSize)", enforced: true,
      reason: "groups smaller than the group floor are withheld; totals and pages count only the groups returned",
    };
    const floorEntries = (result: { policy: { entries: readonly object[] } }) => result.policy.entries.filter((e) => (e as { field: string }).field === "groupBy");

    it("all groups below the floor: the trace says the group floor applies (issue #41)", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(TrHolder, context, byRegion({ conditionGroup: where(cond("region", "In", ["East", "West"])) }));
      expect(result.data).to.deep.equal([]);
      expect(floorEntries(result)).to.deep.equal([floorEntry]);
    });

    it("the floor's entry is identical whether it withheld all groups, some or none: it reveals nothing of the rows (issue #41)", async () => {
      const context = await contextOf(engineWith());
      const all = await ctx.run(TrHolder, context, byRegion({ conditionGroup: where(cond("region", "In", ["East", "West"])) }));
      const some = await ctx.run(TrHolder, context, byRegion());
      const none = await ctx.run(TrHolder, context, byRegion({ conditionGroup: where(cond("region", "In", ["North", "South"])) }));
      expect([all.totalCount, some.totalCount, none.totalCount]).to.deep.equal([0, 2, 2]);
      for (const result of [all, some, none]) expect(floorEntries(result)).to.deep.equal([floorEntry]);
      expect(JSON.stringify(all.policy.entries)).to.equal(JSON.stringify(none.policy.entries));
    });

    it("no floor entry when the floor is off (caps.minGroupSize 1, no decorator floor) or the Summary has no groups", async () => {
      const off = await ctx.run(TrHolder, await contextOf(engineWith({ caps: { minGroupSize: 1 } })), byRegion());
      expect(floorEntries(off)).to.deep.equal([]);
      const ungrouped = await ctx.run(TrHolder, await contextOf(engineWith()), { conditionGroup: where(cond("region", "In", ["North"])) });
      expect(floorEntries(ungrouped)).to.deep.equal([]);
    });

    it("caps.minGroupSize 1 switches the floor off", async () => {
      const context = await contextOf(engineWith({ caps: { minGroupSize: 1 } }));
      const result = await ctx.run(TrHolder, context, byRegion());
      expect(result.data.map(plain)).to.deep.equal(expectedGroups(1));
      expect(result.totalCount).to.equal(4);
    });

    it("caps.minGroupSize 3 keeps groups of 3 or more", async () => {
      const context = await contextOf(engineWith({ caps: { minGroupSize: 3 } }));
      const result = await ctx.run(TrHolder, context, byRegion());
      expect(result.data.map(plain)).to.deep.equal(expectedGroups(3));
      expect(result.totalCount).to.equal(3);
    });

    it("a decorator's minGroupSize (7 on level) raises the floor for summaries aggregating that member, also when caps say 1", async () => {
      const aggregates = [{ field: "level", alias: "minLevel", aggregator: "Minimum" }, { field: "level", alias: "maxLevel", aggregator: "Maximum" }];
      const north = moreTransformData().holders.filter((h) => h.region === "North").map((h) => h.level);
      const expected = [{ region: "N***h", n: 8, minLevel: bucket(Math.min(...north), 10), maxLevel: bucket(Math.max(...north), 10) }];
      for (const engine of [engineWith(), engineWith({ caps: { minGroupSize: 1 } })]) {
        const result = await ctx.run(TrHolder, await contextOf(engine), byRegion({}, aggregates));
        expect(result.data.map(plain)).to.deep.equal(expected);
        expect(result.totalCount).to.equal(1);
      }
      // Without touching level, the same request keeps the caps floor.
      const untouched = await ctx.run(TrHolder, await contextOf(engineWith({ caps: { minGroupSize: 1 } })), byRegion());
      expect(untouched.totalCount).to.equal(4);
    });

    it("a decorator's minGroupSize raises the floor for summaries grouping by that member", async () => {
      const context = await contextOf(engineWith({ caps: { minGroupSize: 1 } }));
      // level: every holder has its own level, so every group has 1 row, below the floor of 7.
      const result = await ctx.run(TrHolder, context, { groupBy: { fields: ["level"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });
      expect(result.data).to.deep.equal([]);
      expect(result.totalCount).to.equal(0);
    });

    const tooSmall: [string, Shape][] = [
      ["n LessThan 5", cond("n", "LessThan", [5])],
      ["n LessThanOrEqual 4", cond("n", "LessThanOrEqual", [4])],
      ["n Equal 4", cond("n", "Equal", [4])],
      ["n In 2, 4", cond("n", "In", [2, 4])],
      ["n Between 1, 4", cond("n", "Between", [1, 4])],
    ];
    for (const [name, condition] of tooSmall) {
      it(`GroupTooSmall (20): a Having that only selects groups below the floor (${name})`, async () => {
        const context = await contextOf(engineWith());
        await expectPolicyError(() => ctx.run(TrHolder, context, byRegion(having(condition))), PolicyErrorCode.GroupTooSmall, /floor/);
      });
    }

    it("a Having that can select groups at or above the floor is answered (n LessThan 7 → South), and Or branches are not refused", async () => {
      const context = await contextOf(engineWith());
      const result = await ctx.run(TrHolder, context, byRegion(having(cond("n", "LessThan", [7]))));
      expect(result.data.map(plain)).to.deep.equal(expectedGroups(5, (n) => n < 7));
      expect(result.totalCount).to.equal(1);
      const either = await ctx.run(TrHolder, context, byRegion({ having: { connector: "Or", conditions: [cond("n", "LessThan", [5], 1), cond("n", "GreaterThan", [7], 2)] } }));
      expect(either.data.map(plain)).to.deep.equal([{ region: "N***h", n: 8 }]);
    });

    it("GroupTooSmall follows the raised floor (n LessThan 7 with level touched), and is off when the floor is", async () => {
      const context = await contextOf(engineWith());
      await expectPolicyError(
        () => ctx.run(TrHolder, context, byRegion(having(cond("n", "LessThan", [7])), [{ field: "level", alias: "minLevel", aggregator: "Minimum" }])),
        PolicyErrorCode.GroupTooSmall,
      );
      const off = await contextOf(engineWith({ caps: { minGroupSize: 1 } }));
      const result = await ctx.run(TrHolder, off, byRegion(having(cond("n", "LessThan", [5]))));
      expect(result.data.map(plain)).to.deep.equal(expectedGroups(1, (n) => n < 5));
    });

    // DryRun: "everything is decided and traced, nothing is refused" (policy brief) — GroupTooSmall too.
    it("in a dry run, GroupTooSmall is traced (enforced: false), not thrown", async () => {
      const context = await contextOf(engineWith({ dryRun: true }));
      const result = await ctx.run(TrHolder, context, byRegion(having(cond("n", "LessThan", [5]))));
      expect(result.policy.dryRun).to.equal(true);
      expect(result.policy.entries.some((e) => e.enforced === false && e.action === "Denied"), JSON.stringify(result.policy.entries)).to.equal(true);
    });

    it("in a dry run, TransformRequiresMaterialization is traced (enforced: false), not thrown, and the keys stay masked", async () => {
      const context = await contextOf(engineWith({ dryRun: true, caps: { minGroupSize: 1 } }));
      const result = await ctx.run(TrHolder, context, { groupBy: { fields: ["displayName"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });
      expect(result.policy.entries.some((e) => e.enforced === false && e.field === "displayName" && e.action === "Denied")).to.equal(true);
      expect(result.data.map((r) => r.displayName)).to.have.members(moreTransformData().holders.map((h) => partial(h.name, 2, 0)));
      for (const row of result.data) expect(moreTransformData().holders.map((h) => h.name)).to.not.include(row.displayName);
    });

    const needsMaterialization: [string, Function, Shape][] = [
      ["grouping by a masked member", Member, { groupBy: { fields: ["email"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } }],
      ["counting a masked member", Member, { groupBy: { fields: ["tenant"], aggregateBy: [{ field: "email", alias: "n", aggregator: "Count" }] } }],
      ["the Minimum of a tokenized member", Member, { groupBy: { fields: ["tenant"], aggregateBy: [{ field: "nationalId", alias: "first", aggregator: "Minimum" }] } }],
      ["grouping by a mutated member", Member, { groupBy: { fields: ["nickname"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } }],
      ["grouping by a masked member through a navigation", TrHolder, { groupBy: { fields: ["branch.manager"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } }],
      ["grouping by an aliased masked member", TrHolder, { groupBy: { fields: ["displayName"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } }],
    ];
    for (const [name, entity, shape] of needsMaterialization) {
      it(`TransformRequiresMaterialization (16): ${name} without allowAggregate`, async () => {
        const context = await contextOf(engineWith());
        await expectPolicyError(() => ctx.run(entity, context, shape), PolicyErrorCode.TransformRequiresMaterialization, /allowAggregate/);
      });
    }
  });
});

describe("Rule 2 at configure time (QpEntityCatalogue)", () => {
  it("refuses a QpMask Full on an int member with a clear message", () => {
    expect(() => new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(TrBadNumberMask, "bad") }))
      .to.throw(QpConfigurationError, /QpMask on TrBadNumberMask\.amount: .*amount is a number field; use QpGeneralize/);
  });

  it("refuses a text mask on a boolean, a date and a Hash on a number", () => {
    expect(() => new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(TrBadBoolMask, "b") })).to.throw(QpConfigurationError, /TrBadBoolMask\.active.*boolean/);
    expect(() => new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(TrBadDateMask, "d") })).to.throw(QpConfigurationError, /TrBadDateMask\.born.*date/);
    expect(() => new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(TrBadHashNumber, "h") })).to.throw(QpConfigurationError, /TrBadHashNumber\.amount.*number/);
  });

  it("refuses a text mask on a whole navigation member and on a whole embedded member", () => {
    expect(() => new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(TrMaskedNavigation, "n") })).to.throw(QpConfigurationError, /TrMaskedNavigation\.branch/);
    expect(() => new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(TrMaskedEmbedded, "e") })).to.throw(QpConfigurationError, /TrMaskedEmbedded\.address/);
  });

  it("names the rule broken with a code: MaskNeedsTextMember, TransformOnObjectMember", () => {
    expect(configurationErrorOf(exposing(TrBadNumberMask))).to.include({ code: "MaskNeedsTextMember" });
    expect(configurationErrorOf(exposing(TrMaskedNavigation))).to.deep.equal({
      code: "TransformOnObjectMember",
      message: "QpMask on TrMaskedNavigation.branch: branch is a navigation to TrBranch; transformations apply to value columns, so decorate the members inside it instead",
    });
    expect(configurationErrorOf(exposing(TrMaskedEmbedded))).to.include({ code: "TransformOnObjectMember" });
  });

  it("refuses every transformation decorator on an object member, not only QpMask (QpTruncate, QpGeneralize, QpDefault)", () => {
    expect(configurationErrorOf(exposing(TrTruncatedNavigation))).to.deep.include({ code: "TransformOnObjectMember" });
    expect((configurationErrorOf(exposing(TrTruncatedNavigation)) as { message: string }).message).to.match(/^QpTruncate on TrTruncatedNavigation\.branch: branch is a navigation/);
    expect((configurationErrorOf(exposing(TrGeneralizedEmbedded)) as { message: string }).message).to.match(/^QpGeneralize on TrGeneralizedEmbedded\.address: address is an embedded object \(TrAddress\)/);
    expect((configurationErrorOf(exposing(TrDefaultedReference)) as { message: string }).message).to.match(/^QpDefault on TrDefaultedReference\.branch/);
  });

  it("checks the members of embedded objects and of every entity reachable through navigations", () => {
    expect(configurationErrorOf(exposing(TrBadInsideEmbedded))).to.deep.include({ code: "MaskNeedsTextMember" });
    expect((configurationErrorOf(exposing(TrBadInsideEmbedded)) as { message: string }).message).to.match(/QpMask on TrBadAddress\.zip/);
    expect((configurationErrorOf(exposing(TrRefToBad)) as { message: string }).message).to.match(/QpMask on TrBadNumberMask\.amount/);
  });

  it("without a catalogue, refuses the same at the first guarded use, whatever the query selects", async () => {
    const context = await contextOf(engineWith());
    const rows = [Object.assign(new TrRefToBad(), { id: 1, badId: 1, bad: moreTransformData().bad[0] })];
    await expectConfigurationError(() => applyPolicy(rows, context).toList({ selects: ["id"] }), /QpMask on TrBadNumberMask\.amount/);
    const embedded = [Object.assign(new TrBadInsideEmbedded(), { id: 1, address: Object.assign(new TrBadAddress(), { zip: 8000 }) })];
    await expectConfigurationError(() => applyPolicy(embedded, context).toList({ selects: ["id"] }), /QpMask on TrBadAddress\.zip/);
    const navigation = [Object.assign(new TrTruncatedNavigation(), { id: 1, branchId: 1, branch: moreTransformData().branches[0] })];
    await expectConfigurationError(() => applyPolicy(navigation, context).toList({ selects: ["id"] }), /QpTruncate on TrTruncatedNavigation\.branch/);
  });

  it("accepts the Null strategy on a number and masks after QpGeneralize/QpFormat", () => {
    expect(() => new QpPolicyEngine({ entities: new QpEntityCatalogue().expose(TrHolder, "holder").expose(Member, "member").expose(TrBranch, "branch").expose(TrCard, "card"), hashSalt: SALT, tokenVault: new QpInMemoryTokenVault() })).to.not.throw();
  });
});
