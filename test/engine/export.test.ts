// Exports (issue #44) on every target: exportRows hands out a Filter's or Segment's every row in
// batches, in the request's order, the same rows a numbered page of everything gives; the
// request's page is ignored; a reader that stops early stops the export. toNdjson and toCsv
// encode them; a CSV cell a spreadsheet would run as a formula is escaped (OWASP CSV injection).
// And memory stays flat: 300,000 rows exported from SQLite while the heap is watched.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { DataSource, type ObjectLiteral } from "typeorm";
import { exportRows, toCsv, toList, toNdjson } from "../../lib/index.js";
import { Customer, CustomerTier, domainEntities } from "../domain/entities.js";
import { forEachTarget } from "../support/targets.js";

type Row = { id: number; name: string };

async function collect<T>(batches: AsyncIterable<T[]>): Promise<{ rows: T[]; sizes: number[] }> {
  const rows: T[] = [];
  const sizes: number[] = [];
  for await (const batch of batches) {
    sizes.push(batch.length);
    rows.push(...batch);
  }
  return { rows, sizes };
}

async function text(chunks: AsyncIterable<string>): Promise<string> {
  let out = "";
  for await (const chunk of chunks) out += chunk;
  return out;
}

const someRows = { conditions: [{ field: "id", dataType: "Number", operator: "LessThanOrEqual", values: [400] }] };

forEachTarget("Exports: every row, in batches, in order", (ctx) => {
  const source = () => (ctx.target === "memory" ? ctx.data().customers as ObjectLiteral[] : ctx.dataSource().getRepository(Customer));
  const whole = async (shape: object) => {
    const all = ctx.target === "memory" ? toList(ctx.data().customers as ObjectLiteral[], { ...shape, page: { pageNumber: 1, pageSize: 1000 } } as never)
      : await (await import("../../lib/index.js")).toListAsync(ctx.dataSource().getRepository(Customer), { ...shape, page: { pageNumber: 1, pageSize: 1000 } } as never);
    return (all.data as Row[]).map((r) => r.id);
  };

  it("a Filter: every row once, in the request's order, in batches of batchSize; its page ignored", async () => {
    const shape = { conditionGroup: someRows, orders: [{ sort: 1, field: "score", direction: "Descending" }, { sort: 2, field: "name", direction: "Ascending" }], page: { pageNumber: 3, pageSize: 5 } };
    const { rows, sizes } = await collect(exportRows(source() as never, shape as never, { batchSize: 37 }) as AsyncIterable<Row[]>);
    assert.deepEqual(rows.map((r) => r.id), await whole(shape));
    assert.equal(rows.length, 400);
    assert.ok(sizes.every((n) => n <= 37 && n > 0), `batch sizes ${sizes}`);
    if (ctx.target !== "memory") assert.equal(sizes.length, Math.ceil(400 / 37));
  });

  it("a Segment, and an empty result (no batch at all)", async () => {
    const segment = { conditionSets: [{ sort: 1, conditionGroup: someRows }, { sort: 2, intersection: "Except", conditionGroup: { conditions: [{ field: "tier", dataType: "Enum", operator: "Equal", values: [CustomerTier.Gold] }] } }] };
    const { rows } = await collect(exportRows(source() as never, segment as never, { batchSize: 50 }) as AsyncIterable<Row[]>);
    assert.deepEqual(rows.map((r) => r.id), await whole(segment));
    const none = await collect(exportRows(source() as never, { conditionGroup: { conditions: [{ field: "id", dataType: "Number", operator: "LessThan", values: [0] }] } } as never));
    assert.deepEqual(none.sizes, []);
  });

  it("a reader that stops after the first batch stops the export, and the next export runs as ever", async () => {
    let batches = 0;
    for await (const batch of exportRows(source() as never, { conditionGroup: someRows } as never, { batchSize: 10 })) {
      batches++;
      assert.equal(batch.length, 10);
      break;
    }
    assert.equal(batches, 1);
    assert.equal((await collect(exportRows(source() as never, { conditionGroup: someRows } as never, { batchSize: 100 }))).rows.length, 400);
  });

  it("NDJSON: one object a line, the rows as exported", async () => {
    const shape = { conditionGroup: someRows, selects: ["id", "name", "contact.email"], orders: [{ sort: 1, field: "id", direction: "Ascending" }] };
    const lines = (await text(toNdjson(exportRows(source() as never, shape as never, { batchSize: 64 })))).trimEnd().split("\n");
    assert.equal(lines.length, 400);
    const rows = lines.map((l) => JSON.parse(l) as { id: number; contact: unknown });
    assert.deepEqual(rows.map((r) => r.id), Array.from({ length: 400 }, (_, i) => i + 1));
    assert.ok(rows.every((r) => "contact" in r));
  });
});

describe("Exports: CSV", () => {
  const customer = (id: number, name: string, notes: string | null) => Object.assign(new Customer(), {
    id, name, externalId: `x${id}`, tier: CustomerTier.Gold, isActive: id % 2 === 0, score: id === 2 ? null : id * 10, balance: 12.5 * id,
    createdAt: new Date(Date.UTC(2026, 0, id)), birthDate: null, notes, address: { street: null, city: "Lima", country: "PE" }, contactId: null, contact: null, orders: [],
  });

  it("a header, a line a row, nested members as dotted columns; formulas escaped, quotes doubled, numbers as numbers", async () => {
    const rows = [
      customer(1, "=HYPERLINK(\"http://evil\",\"x\")", "plain"),
      customer(2, "+1+1", "a, b"),
      customer(3, "-2+3", "say \"hi\"\nbye"),
      customer(4, "@SUM(A1)", "\tTAB"),
    ];
    const csv = await text(toCsv(exportRows(rows, { selects: ["id", "name", "score", "isActive", "createdAt", "notes", "address.city"], orders: [{ sort: 1, field: "id" }] } as never, { batchSize: 3 })));
    const lines = csv.split("\n");
    assert.equal(lines[0], "id,name,score,isActive,createdAt,notes,address.city");
    assert.equal(lines[1], `1,"'=HYPERLINK(""http://evil"",""x"")",10,false,2026-01-01T00:00:00.000Z,plain,Lima`);
    assert.equal(lines[2], `2,'+1+1,,true,2026-01-02T00:00:00.000Z,"a, b",Lima`);
    assert.equal(lines[3], `3,'-2+3,30,false,2026-01-03T00:00:00.000Z,"say ""hi""`);
    assert.equal(lines[4], `bye",Lima`);
    assert.equal(lines[5], `4,'@SUM(A1),40,true,2026-01-04T00:00:00.000Z,'\tTAB,Lima`);
    assert.equal(lines.length, 7); // and the final newline
    // An empty export with named columns: the header alone.
    assert.equal(await text(toCsv(exportRows(rows, { conditionGroup: { conditions: [{ field: "id", dataType: "Number", operator: "LessThan", values: [0] }] } } as never), { columns: ["id", "name"] })), "id,name\n");
  });
});

describe("Exports: memory stays flat", function () {
  this.timeout(300_000);
  const rows = 300_000;
  let dir: string;
  let dataSource: DataSource;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "querylib-export-"));
    dataSource = new DataSource({ type: "better-sqlite3", database: join(dir, "export.sqlite"), entities: domainEntities, synchronize: true, logging: false });
    await dataSource.initialize();
    await dataSource.query(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${rows})
      INSERT INTO customer ("id", "name", "externalId", "tier", "isActive", "score", "balance", "createdAt", "birthDate", "notes", "addressStreet", "addressCity", "addressCountry", "contactId")
      SELECT i, 'Customer ' || i, hex(randomblob(16)), 'Gold', 1, i % 1000, i / 100.0, '2026-01-01 00:00:00.000', NULL, printf('%.200c', 'n'), NULL, 'Lima', 'PE', NULL FROM s`);
  });

  after(async () => {
    await dataSource?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`${rows.toLocaleString("en")} rows exported as NDJSON: the heap grows by less than a tenth of what the rows take`, async () => {
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as () => void;
    gc();
    const base = process.memoryUsage().heapUsed;
    let peak = 0;
    let bytes = 0;
    let lines = 0;
    let chunks = 0;
    for await (const chunk of toNdjson(exportRows(dataSource.getRepository(Customer), { orders: [{ sort: 1, field: "id" }] } as never, { batchSize: 1000 }))) {
      bytes += chunk.length;
      lines += chunk.split("\n").length - 1;
      if (++chunks % 25 === 0) {
        gc();
        peak = Math.max(peak, process.memoryUsage().heapUsed - base);
      }
    }
    assert.equal(lines, rows);
    // What holding every row would take: at least the text written (each row's JSON), ~90 MB here.
    assert.ok(bytes > 80_000_000, `${bytes} bytes written`);
    assert.ok(peak < bytes / 10, `the heap grew by ${(peak / 1e6).toFixed(1)} MB while ${(bytes / 1e6).toFixed(1)} MB of rows went through`);
  });
});
