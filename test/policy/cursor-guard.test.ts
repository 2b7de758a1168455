// Cursor pages under a policy (issue #44), on every target. The attacks, each of which must fail:
// - replay: tenant t-2 (or another caller of t-1, or the same caller after a rule change) hands
//   back a cursor tenant t-1's walk produced, to read on from t-1's position;
// - forgery: a cursor re-sealed by someone without the engine's secret (another engine's secret),
//   or altered byte by byte;
// - reading: a cursor decoded as it travels shows the sort keys of a row (a name, an age the
//   caller may order by but not see, the primary key).
// And the walk itself: a tenant's walk visits each of its own rows once, in order, masks applied
// to every page, and no row of the other tenant.
import assert from "node:assert/strict";
import {
  LogicException, MaskStrategy, PolicyEffect, PolicyException, QpEntityCatalogue, QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTier,
} from "../../lib/index.js";
import { Doctor, Patient } from "./domain.js";
import { assertTenant, patientsOf, plain } from "./helpers.js";
import { forEachPolicyTarget, type PolicyTargetContext } from "./policy-targets.js";

type Row = Record<string, any>;
type Page = { data: Row[]; nextCursor?: string | null; previousCursor?: string | null; hasNextPage?: boolean; totalCount: number | null };

const secret = "0123456789abcdef0123456789abcdef-cursor-test";
const entities = () => new QpEntityCatalogue().expose(Patient, "patients");

const contextOf = (engine: QpPolicyEngine, tenant: string, roles: string[] = []) => engine.prepareAsync(new QpPolicyContext(
  [{ kind: QpSubjectKind.Tenant, value: tenant }, ...roles.map((value) => ({ kind: QpSubjectKind.Role, value }))],
  new Map([["tenantId", tenant]]),
));

async function run(ctx: PolicyTargetContext, context: QpPolicyContext, shape: object): Promise<Page> {
  return (await ctx.guard(Patient, context).toListAsync(shape as never)) as unknown as Page;
}

async function refusedWith(action: () => Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(action, (error: unknown) => {
    assert.ok(error instanceof LogicException, `expected a LogicException, got ${String(error)}`);
    assert.equal((error as LogicException).code, code);
    return true;
  });
}

const byAgeDesc = { orders: [{ sort: 1, field: "age", direction: "Descending" }, { sort: 2, field: "name", direction: "Ascending" }] };

forEachPolicyTarget("Policy: cursor pages", (ctx) => {
  let engine: QpPolicyEngine;
  beforeEach(() => {
    engine = new QpPolicyEngine({ tier: QpTier.Convenience, cursorSecrets: secret, entities: entities() });
  });

  async function walk(context: QpPolicyContext, shape: object, pageSize: number): Promise<{ rows: Row[]; cursors: string[] }> {
    const rows: Row[] = [];
    const cursors: string[] = [];
    let after = "";
    for (let pages = 0; pages < 1000; pages++) {
      const page = await run(ctx, context, { ...shape, page: { pageSize, after } });
      rows.push(...page.data);
      if (!page.hasNextPage) return { rows, cursors };
      after = page.nextCursor!;
      cursors.push(after);
    }
    throw new Error("the walk did not end");
  }

  it("a tenant's walk visits each of its rows once, in order, and no row of another tenant", async () => {
    const context = await contextOf(engine, "t-1");
    const { rows } = await walk(context, byAgeDesc, 4);
    const expected = patientsOf("t-1").sort((a, b) => b.age - a.age || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || a.id - b.id).map((p) => p.id);
    assert.deepEqual(rows.map((r) => r.id), expected);
    assertTenant(rows, "t-1");
  });

  it("masks apply to every page", async () => {
    await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "clerk", entity: "patients", field: "name", effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Full } } as never, "cursor-test");
    const context = await contextOf(engine, "t-1", ["clerk"]);
    const { rows } = await walk(context, { orders: [{ sort: 1, field: "age", direction: "Ascending" }] }, 7);
    assert.equal(rows.length, patientsOf("t-1").length);
    for (const row of rows) assert.ok(!patientsOf("t-1").some((p) => p.name === row.name), `an unmasked name on a later page: ${JSON.stringify(row)}`);
  });

  it("attack: another tenant, another caller of the tenant, or the same caller after a rule change replays a cursor", async () => {
    const t1 = await contextOf(engine, "t-1");
    const first = await run(ctx, t1, { ...byAgeDesc, page: { pageSize: 5, after: "" } });
    const cursor = first.nextCursor!;
    assert.equal(typeof cursor, "string");
    // The same caller reads on.
    const second = await run(ctx, await contextOf(engine, "t-1"), { ...byAgeDesc, page: { pageSize: 5, after: cursor } });
    assertTenant(second.data, "t-1");
    await refusedWith(async () => run(ctx, await contextOf(engine, "t-2"), { ...byAgeDesc, page: { pageSize: 5, after: cursor } }), "CursorDoesNotMatchRequest");
    await refusedWith(async () => run(ctx, await contextOf(engine, "t-1", ["auditor"]), { ...byAgeDesc, page: { pageSize: 5, after: cursor } }), "CursorDoesNotMatchRequest");
    await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "somebody", entity: "patients", field: "notes", effect: PolicyEffect.Deny } as never, "cursor-test");
    await refusedWith(async () => run(ctx, await contextOf(engine, "t-1"), { ...byAgeDesc, page: { pageSize: 5, after: cursor } }), "CursorDoesNotMatchRequest");
  });

  it("attack: a cursor sealed under another secret, or altered, is refused before anything runs", async () => {
    const other = new QpPolicyEngine({ tier: QpTier.Convenience, cursorSecrets: "another secret of at least thirty-two bytes", entities: entities() }, { ruleStore: engine.ruleStore });
    const foreign = (await run(ctx, await contextOf(other, "t-1"), { ...byAgeDesc, page: { pageSize: 5, after: "" } })).nextCursor!;
    await refusedWith(async () => run(ctx, await contextOf(engine, "t-1"), { ...byAgeDesc, page: { pageSize: 5, after: foreign } }), "CursorIsInvalid");
    const genuine = (await run(ctx, await contextOf(engine, "t-1"), { ...byAgeDesc, page: { pageSize: 5, after: "" } })).nextCursor!;
    const bytes = Buffer.from(genuine, "base64url");
    for (const at of [0, 1, 17, bytes.length - 20, bytes.length - 1]) {
      const altered = Buffer.from(bytes);
      altered[at] = altered[at]! ^ 0x01;
      await refusedWith(async () => run(ctx, await contextOf(engine, "t-1"), { ...byAgeDesc, page: { pageSize: 5, after: altered.toString("base64url") } }), "CursorIsInvalid");
    }
    // Rotation: a replica (the same rule store) that seals with a new secret and still opens with the old one reads it.
    const rotated = new QpPolicyEngine({ tier: QpTier.Convenience, cursorSecrets: ["a brand new secret of at least thirty-two bytes", secret], entities: entities() }, { ruleStore: engine.ruleStore });
    const next = await run(ctx, await contextOf(rotated, "t-1"), { ...byAgeDesc, page: { pageSize: 5, after: genuine } });
    assertTenant(next.data, "t-1");
  });

  it("a cursor shows no value of its row: not the name, the age or the key", async () => {
    const context = await contextOf(engine, "t-1");
    const byName = { orders: [{ sort: 1, field: "name", direction: "Ascending" }] };
    const page = await run(ctx, context, { ...byName, page: { pageSize: 3, after: "" } });
    const last = page.data.at(-1)!;
    const cursor = page.nextCursor!;
    const decoded = Buffer.from(cursor, "base64url").toString("latin1");
    // Texts of seven characters or more: random bytes hold one by chance with a probability under 2^-40.
    for (const text of [last.name, "Patient", `"s","${last.name}"`]) {
      assert.ok(!cursor.includes(text) && !decoded.includes(text), `the cursor shows ${text}`);
    }
    // Its length tells nothing of the values' lengths either (padded to 128-byte blocks): every page's cursor here is as long as the first.
    for (let after = cursor, i = 0; i < 4; i++) {
      const next = await run(ctx, context, { ...byName, page: { pageSize: 3, after } });
      if (!next.nextCursor) break;
      assert.equal(next.nextCursor.length, cursor.length);
      after = next.nextCursor;
    }
    // The same position sealed twice gives two different cursors (a fresh key each time): equality tells nothing either.
    const again = await run(ctx, context, { ...byName, page: { pageSize: 3, after: "" } });
    assert.notEqual(again.nextCursor, cursor);
    assert.deepEqual(plain((await run(ctx, context, { ...byName, page: { pageSize: 3, after: again.nextCursor } })).data), plain((await run(ctx, context, { ...byName, page: { pageSize: 3, after: cursor } })).data));
  });

  it("an order the policy refuses is refused on a cursor page too (no cursor is ever made from it)", async () => {
    const strict = new QpPolicyEngine({ tier: QpTier.Strict, cursorSecrets: secret, entities: entities() });
    const context = await contextOf(strict, "t-1");
    await assert.rejects(() => run(ctx, context, { orders: [{ sort: 1, field: "diagnosis", direction: "Ascending" }], page: { pageSize: 5, after: "" } }), PolicyException);
  });

  it("attack: a page read from a cursor with getQueryString would show the cursor's values as SQL parameters: refused (QueryStringDenied)", async () => {
    const doctors = new QpPolicyEngine({ tier: QpTier.Convenience, cursorSecrets: secret, entities: new QpEntityCatalogue().expose(Doctor, "doctors") });
    const context = await doctors.prepareAsync(new QpPolicyContext());
    const guarded = ctx.guard(Doctor, context);
    const first = await guarded.toListAsync({ orders: [{ sort: 1, field: "name" }], page: { pageSize: 1, after: "" } } as never, true) as unknown as Page & { queryString: string | null };
    if (ctx.target !== "memory") assert.match(first.queryString ?? "", /SELECT/, "the first page (no cursor) may show its SQL");
    await assert.rejects(() => guarded.toListAsync({ orders: [{ sort: 1, field: "name" }], page: { pageSize: 1, after: first.nextCursor } } as never, true),
      (error: unknown) => error instanceof PolicyException && error.code === "QueryStringDenied");
    // Without the SQL the same page is read.
    const second = await guarded.toListAsync({ orders: [{ sort: 1, field: "name" }], page: { pageSize: 1, after: first.nextCursor } } as never);
    assert.equal(second.data.length, 1);
  });

  it("count none under a policy: no total, the tenant's rows only", async () => {
    const context = await contextOf(engine, "t-2");
    const page = await run(ctx, context, { ...byAgeDesc, page: { pageSize: 100, after: "", count: "none" } });
    assert.equal(page.totalCount, null);
    assert.equal(page.data.length, patientsOf("t-2").length);
    assertTenant(page.data, "t-2");
  });
});

