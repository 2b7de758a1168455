// Guarded exports (issue #44), on every target: exportAsync hands out only the caller's tenant's
// rows, with the masks applied to every batch; it is audited once (the events of one request,
// however many batches), not once a batch; an export past MaxExportRows is refused before its
// first row; a field the caller may not read stays out of every batch.
import assert from "node:assert/strict";
import { Column, Entity, PrimaryColumn } from "typeorm";
import { MaskStrategy, PolicyEffect, PolicyException, PolicyFeature, QpAudit, QpEntity, QpEntityCatalogue, QpPolicyContext, QpPolicyEngine, QpSubjectKind, QpTier, applyPolicy } from "../../lib/index.js";
import { openIsolatedDatabase, type Dialect } from "../support/databases.js";
import { describeOnTargets, targets } from "../support/targets.js";
import { Patient } from "./domain.js";
import { assertTenant, patientsOf } from "./helpers.js";
import { forEachPolicyTarget } from "./policy-targets.js";

type Row = Record<string, any>;

const entities = () => new QpEntityCatalogue().expose(Patient, "patients");

forEachPolicyTarget("Policy: exports", (ctx) => {
  const contextOf = (engine: QpPolicyEngine, tenant: string, roles: string[] = []) => engine.prepareAsync(new QpPolicyContext(
    [{ kind: QpSubjectKind.Tenant, value: tenant }, ...roles.map((value) => ({ kind: QpSubjectKind.Role, value }))], new Map([["tenantId", tenant]])));

  async function exported(context: QpPolicyContext, shape: object, batchSize: number): Promise<{ rows: Row[]; batches: number }> {
    const rows: Row[] = [];
    let batches = 0;
    for await (const batch of ctx.guard(Patient, context).exportAsync(shape as never, { batchSize })) {
      batches++;
      rows.push(...batch as Row[]);
    }
    return { rows, batches };
  }

  it("the tenant's rows only, every one once, masks on every batch, denied fields in none", async () => {
    const engine = new QpPolicyEngine({ tier: QpTier.Convenience, entities: entities() });
    await engine.upsertRuleAsync({ subjectKind: QpSubjectKind.Role, subject: "clerk", entity: "patients", field: "name", effect: PolicyEffect.Mask, mask: { strategy: MaskStrategy.Full } } as never, "export-test");
    const context = await contextOf(engine, "t-1", ["clerk"]);
    const { rows, batches } = await exported(context, { orders: [{ sort: 1, field: "age", direction: "Descending" }] }, 4);
    const mine = patientsOf("t-1");
    assert.equal(rows.length, mine.length);
    assert.deepEqual(new Set(rows.map((r) => r.id)), new Set(mine.map((p) => p.id)));
    assert.equal(batches, Math.ceil(mine.length / 4));
    assertTenant(rows, "t-1");
    for (const row of rows) {
      assert.ok(!mine.some((p) => p.name === row.name), `an unmasked name: ${JSON.stringify(row)}`);
      assert.ok(!("ssn" in row), "a denied field was exported");
    }
  });

  it("past MaxExportRows: CapExceeded at page, before the first row", async () => {
    const engine = new QpPolicyEngine({ tier: QpTier.Convenience, entities: entities(), caps: { maxExportRows: 10 } });
    const t1 = await contextOf(engine, "t-1");
    let received = 0;
    await assert.rejects(async () => {
      for await (const batch of ctx.guard(Patient, t1).exportAsync({} as never, { batchSize: 4 })) received += batch.length;
    }, (error: unknown) => error instanceof PolicyException && error.code === "CapExceeded" && error.path === "page");
    assert.equal(received, 0);
    // The tenant with 10 rows exports them all.
    const t2 = await contextOf(engine, "t-2");
    assert.equal((await exported(t2, {}, 3)).rows.length, patientsOf("t-2").length);
    // A batch above MaxPageSize is refused as a page would be.
    const small = new QpPolicyEngine({ tier: QpTier.Convenience, entities: entities(), caps: { maxPageSize: 5 } });
    await assert.rejects(async () => exported(await contextOf(small, "t-1"), {}, 6), (error: unknown) => error instanceof PolicyException && error.code === "CapExceeded");
  });
});

@QpEntity({ requirePolicy: true })
@Entity("export_audited")
class Audited {
  @PrimaryColumn({ type: "int" }) id!: number;
  @QpAudit(PolicyFeature.Select) @Column({ type: "varchar", length: 20 }) secret!: string;
}

const auditedRows = Array.from({ length: 23 }, (_, i) => Object.assign(new Audited(), { id: i + 1, secret: `s${i + 1}` }));

describeOnTargets("Policy: an export is audited once", targets, async (dialect: Dialect) => {
  const dataSource = await openIsolatedDatabase(dialect, "querylib_export_audit", [Audited]);
  await dataSource.getRepository(Audited).insert(auditedRows);
  return dataSource;
}, (target, dataSource) => {
  it("one request's events, however many batches, and the rows all there", async () => {
    const engine = new QpPolicyEngine({ tier: QpTier.Convenience, entities: new QpEntityCatalogue().expose(Audited, "audited") });
    const source = () => (target === "memory" ? auditedRows : dataSource().getRepository(Audited));
    const one = await engine.prepareAsync(new QpPolicyContext());
    await applyPolicy(source() as never, one).toListAsync({ selects: ["id", "secret"], page: { pageNumber: 1, pageSize: 5 } } as never);
    const perRequest = one.auditEvents.length;
    assert.ok(perRequest > 0, "a request that selects the audited field records an event");
    const context = await engine.prepareAsync(new QpPolicyContext());
    let batches = 0;
    let rows = 0;
    for await (const batch of applyPolicy(source() as never, context).exportAsync({ selects: ["id", "secret"] } as never, { batchSize: 5 })) {
      batches++;
      rows += batch.length;
    }
    assert.equal(rows, 23);
    if (target !== "memory") assert.equal(batches, 5);
    assert.equal(context.auditEvents.length, perRequest, "one request's events, not one set a batch");
  });
});
