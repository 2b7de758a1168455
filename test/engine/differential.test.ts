// Differential test of the query engine: many random Filters (typed and dynamic), Segments and
// Summaries over the seeded domain (fast-check arbitraries derived from the entities' metadata,
// test/fuzz/arbitraries.ts, valid profile) must return on SQLite, PostgreSQL and MariaDB exactly
// what the in-memory evaluation (toList / toListDynamic over seededData()) returns for the same
// request: totalCount, pageCount, pageNumber, pageSize and data, deep-equal (prototypes included:
// typed rows are entity instances), after normalising only what may legitimately differ:
//   - Dates are compared by getTime();
//   - Sumation/Average aggregates within 1e-9 relative (absolute for values below 1: a double
//     sum of decimals may leave 1e-12 where the exact decimal sum is 0);
//   - text order of Filters and Segments on MariaDB: the column collation utf8mb4_general_ci,
//     emulated with MemoryOptions.textCompare (test/fuzz/compare.ts; checked below against
//     MariaDB's WEIGHT_STRING for every character of the seeded text: upper-case mapping, accents
//     stripped except Cyrillic й, ß = s, trailing spaces ignored). SQLite (BINARY) and PostgreSQL
//     (C.UTF-8) use code-point order, as memory; Summary groups sort by code point on every
//     target, MariaDB included.
//
// Seed: QL_DIFF_SEED (default below) is printed; a mismatch prints the case id (seed, kind,
// index), the target, the request JSON and the first differing path, and the first mismatch of
// a run is shrunk by fast-check to a minimal request with the same kind of difference.
// QL_DIFF_SCALE multiplies the case counts (default 1: 300 filters, 100 segments, 100 summaries
// per database target).
//
// Engine bugs found by this test are pinned as fixed regression cases at the end of the file.
// The random comparisons are not relaxed for them: while a bug stands, the random test that
// meets it fails too, and its message lists the mismatches grouped by where they differ.
import assert from "node:assert/strict";
import fc from "fast-check";
import { LogicException, toList, toListAsync, toListAsyncDynamic, toListDynamic } from "../../lib/index.js";
import { Address, ContactInfo, Customer, Order, OrderItem } from "../domain/entities.js";
import type { DomainData } from "../domain/seed.js";
import { seededData } from "../support/databases.js";
import { forEachTarget, type Target, type TargetContext } from "../support/targets.js";
import type { Request, RequestArbitraries, RequestKind } from "../fuzz/arbitraries.js";
import { codePoint, generalCi, resultDifference } from "../fuzz/compare.js";
import { memoryOptions, shopArbitraries, shopSample } from "../fuzz/domains.js";

export { generalCi };

// ---------------------------------------------------------------------------------------------
// Configuration

const SEED = Number(process.env.QL_DIFF_SEED ?? 7_302_025);
const SCALE = Number(process.env.QL_DIFF_SCALE ?? 1);
const COUNTS = { filter: Math.round(300 * SCALE), segment: Math.round(100 * SCALE), summary: Math.round(100 * SCALE) };
/** Each kind draws from its own seed (the seed plus its offset), so the counts of one kind never move another's cases. */
const SEED_OFFSETS = { filter: 0, segment: 1, summary: 2 };
/** Mismatches printed in full (all are counted). */
const PRINTED = 5;
/** Time for shrinking the first mismatch of a run. */
const SHRINK_MS = 60_000;

let seedPrinted = false;
function printSeed(): void {
  if (seedPrinted) return;
  seedPrinted = true;
  console.log(`      [differential] seed ${SEED} (QL_DIFF_SEED), ${COUNTS.filter} filters, ${COUNTS.segment} segments, ${COUNTS.summary} summaries per target`);
}

// ---------------------------------------------------------------------------------------------
// Running one request

type RootName = "Customer" | "Order" | "OrderItem";
const entities = { Customer, Order, OrderItem } as const;

function rowsOfRoot(data: DomainData, root: RootName): readonly object[] {
  return root === "Customer" ? data.customers : root === "Order" ? data.orders : data.items;
}

interface Options {
  textCompare?: (a: string, b: string) => number;
}

function runInMemory(data: DomainData, g: { root: Function; dynamic: boolean }, shape: unknown, options: Options): any {
  const rows = rowsOfRoot(data, g.root.name as RootName) as object[];
  return g.dynamic ? toListDynamic(rows, shape as never, false, options) : toList(rows, shape, false, options);
}

async function runOnDatabase(ctx: TargetContext, g: { root: Function; dynamic: boolean }, shape: unknown): Promise<any> {
  const repository = ctx.dataSource().getRepository(g.root as never);
  return g.dynamic ? toListAsyncDynamic(repository, shape as never) : toListAsync(repository, shape);
}

/** The valid requests of one kind for a target (MariaDB's avoid collection text orders its collation decides differently). */
function arbitraryOf(arbs: RequestArbitraries, target: Target, kind: RequestKind): fc.Arbitrary<Request> {
  if (kind === "filter") return arbs.filterArb();
  if (kind === "segment") return arbs.segmentArb();
  return arbs.summaryArb(shopSample(target));
}

const generatorTarget = (target: Target): Target => (target === "mariadb" ? "mariadb" : "sqlite");

// ---------------------------------------------------------------------------------------------
// Comparison

interface Mismatch {
  id: string;
  json: string;
  detail: string;
}

function explain(m: Mismatch): string {
  return `${m.id}\n  request: ${m.json}\n  ${m.detail}`;
}

/** Runs one generated case on the database and in memory; returns a mismatch or null. */
async function check(ctx: TargetContext, g: Request, id: string, options: Options): Promise<Mismatch | null> {
  const json = JSON.stringify(g.shape);
  const label = `${id} [${ctx.target}] ${g.kind} on ${g.root.name}${g.dynamic ? " (dynamic)" : ""}`;
  let expected: any;
  try {
    expected = runInMemory(ctx.data(), g, JSON.parse(json), options);
  } catch (error) {
    const what = error instanceof LogicException ? `validation error ${error.code}: ${error.message}` : String(error);
    return { id: label, json, detail: `GENERATOR/ENGINE: the in-memory evaluation rejected the request: ${what}` };
  }
  let actual: any;
  try {
    actual = await runOnDatabase(ctx, g, JSON.parse(json));
  } catch (error) {
    const what = error instanceof LogicException ? `validation error ${error.code}: ${error.message}` : String((error as Error)?.message ?? error);
    return { id: label, json, detail: `the database run failed (memory returned ${expected.totalCount} rows): ${what}` };
  }
  const difference = resultDifference(g, expected, actual);
  return difference ? { id: label, json, detail: difference } : null;
}

/** Where a mismatch differs, indices and values stripped: mismatches of one cause share it. */
const signatureOf = (detail: string) => detail.replace(/\[\d+\]/g, "[i]").replace(/(: expected| \(memory returned|; first difference).*$/s, "");

async function runCases(ctx: TargetContext, kind: RequestKind, count: number): Promise<{ mismatches: Mismatch[]; elapsed: number; shrunk: string | null }> {
  printSeed();
  const started = Date.now();
  const options = memoryOptions(ctx.target);
  const arb = arbitraryOf(shopArbitraries(generatorTarget(ctx.target)), ctx.target, kind);
  const seed = SEED + SEED_OFFSETS[kind];
  const mismatches: Mismatch[] = [];
  let first: { index: number; signature: string } | null = null;
  const cases = fc.sample(arb, { seed, numRuns: count });
  for (const [index, g] of cases.entries()) {
    const mismatch = await check(ctx, g, `seed ${SEED} ${kind}#${index}`, options);
    if (!mismatch) continue;
    mismatches.push(mismatch);
    first ??= { index, signature: signatureOf(mismatch.detail) };
  }
  const elapsed = Date.now() - started;
  // fast-check replays the first mismatching case (its path is its index) and shrinks it, keeping its kind of difference.
  let shrunk: string | null = null;
  if (first) {
    const found = first;
    let last: Mismatch | null = null;
    const details = await fc.check(fc.asyncProperty(arb, async (g) => {
      const mismatch = await check(ctx, g, "shrinking", options);
      if (mismatch && signatureOf(mismatch.detail) === found.signature) {
        last = mismatch;
        return false;
      }
      return true;
    }), { seed, path: String(found.index), numRuns: 1, interruptAfterTimeLimit: SHRINK_MS, markInterruptAsFailure: false });
    if (details.failed && last) shrunk = `shrunk (seed ${seed}, path ${details.counterexamplePath}): ${explain(last)}`;
  }
  return { mismatches, elapsed, shrunk };
}

function report(kind: string, count: number, target: Target, mismatches: readonly Mismatch[], elapsed: number, shrunk: string | null): void {
  console.log(`      [differential] ${target}: ${count} ${kind}s in ${(elapsed / 1000).toFixed(1)} s, ${mismatches.length} mismatches`);
  if (mismatches.length === 0) return;
  // QL_DIFF_VERBOSE=1 prints every mismatch, one block each (the failure message shows the first few).
  if (process.env.QL_DIFF_VERBOSE) for (const m of mismatches) console.log(`MISMATCH ${explain(m)}`);
  const groups = new Map<string, number>();
  for (const m of mismatches) groups.set(signatureOf(m.detail), (groups.get(signatureOf(m.detail)) ?? 0) + 1);
  const causes = [...groups].sort((a, b) => b[1] - a[1]).map(([signature, n]) => `  ${n} × ${signature}`).join("\n");
  const shown = mismatches.slice(0, PRINTED).map(explain).join("\n\n");
  assert.fail(`${mismatches.length} of ${count} random ${kind}s differ between ${target} and the in-memory evaluation (seed ${SEED}):\n${causes}\n\n${shrunk ?? "(not shrunk)"}\n\n${shown}`);
}

// ---------------------------------------------------------------------------------------------
// Tests

forEachTarget("Differential: random requests, database vs in-memory evaluation", (ctx) => {
  if (ctx.target === "memory") {
    // Every generated request must be valid (a rejection is an arbitrary's bug, or an engine that
    // rejects a valid request), for both variants (SQLite and PostgreSQL share one; MariaDB's
    // avoids collation ties), and the filters must select a useful mix of rows.
    it("generates only valid requests, which select some but not all rows", function () {
      this.timeout(300_000);
      printSeed();
      const data = ctx.data();
      const problems: string[] = [];
      let empty = 0;
      let everything = 0;
      for (const target of ["sqlite", "mariadb"] as Target[]) {
        const options = memoryOptions(target);
        const arbs = shopArbitraries(target);
        for (const kind of ["filter", "segment", "summary"] as const) {
          const cases = fc.sample(arbitraryOf(arbs, target, kind), { seed: SEED + SEED_OFFSETS[kind], numRuns: COUNTS[kind] });
          for (const [index, g] of cases.entries()) {
            try {
              const total = runInMemory(data, g, JSON.parse(JSON.stringify(g.shape)), options).totalCount as number;
              if (target === "sqlite" && kind === "filter") {
                if (total === 0) empty++;
                if (total === rowsOfRoot(data, g.root.name as RootName).length) everything++;
              }
            } catch (error) {
              const what = error instanceof LogicException ? `${error.code}: ${error.message}` : String(error);
              problems.push(`seed ${SEED} ${kind}#${index} (${target} variant): ${what}\n  request: ${JSON.stringify(g.shape)}`);
            }
          }
        }
      }
      assert.deepEqual(problems.slice(0, PRINTED), [], `${problems.length} generated requests were rejected`);
      assert.ok(empty < COUNTS.filter * 0.4, `${empty} of ${COUNTS.filter} filters match nothing`);
      assert.ok(everything < COUNTS.filter * 0.4, `${everything} of ${COUNTS.filter} filters match everything`);
      console.log(`      [differential] filters matching nothing: ${empty}, everything: ${everything} of ${COUNTS.filter}`);
    });
    return;
  }

  if (ctx.target === "mariadb") {
    // Guards the oracle, not the engine: if the server's collation changes (MariaDB 11.5 defaults
    // to a UCA collation), the MariaDB comparisons would fail for the wrong reason.
    it("the utf8mb4_general_ci emulation orders every seeded text value as MariaDB does", async () => {
      const columns: [string, string][] = [
        ["customer", "name"], ["customer", "notes"], ["customer", "externalId"], ["customer", "addressStreet"],
        ["customer", "addressCity"], ["customer", "addressCountry"], ["contact_info", "email"], ["contact_info", "phone"],
        ["contact_info", "city"], ["product", "name"], ["product", "sku"], ["order_item", "sku"],
      ];
      const wrong: string[] = [];
      for (const [table, column] of columns) {
        const rows: { v: string; w: string }[] = await ctx.dataSource().query(
          `SELECT DISTINCT \`${column}\` AS v, HEX(WEIGHT_STRING(\`${column}\`)) AS w FROM \`${table}\` WHERE \`${column}\` IS NOT NULL`,
        );
        rows.sort((a, b) => (a.w < b.w ? -1 : a.w > b.w ? 1 : 0));
        for (let i = 1; i < rows.length; i++) {
          const server = rows[i - 1]!.w === rows[i]!.w ? 0 : -1;
          if (generalCi(rows[i - 1]!.v, rows[i]!.v) !== server) wrong.push(`${table}.${column}: ${JSON.stringify(rows[i - 1]!.v)} vs ${JSON.stringify(rows[i]!.v)}`);
        }
      }
      assert.deepEqual(wrong.slice(0, 10), []);
    });
  }

  for (const kind of ["filter", "segment", "summary"] as const) {
    it(`${COUNTS[kind]} random ${kind}s return exactly the in-memory result`, async function () {
      this.timeout(600_000);
      const { mismatches, elapsed, shrunk } = await runCases(ctx, kind, COUNTS[kind]);
      report(kind, COUNTS[kind], ctx.target, mismatches, elapsed, shrunk);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Regressions: engine bugs the random test found, pinned as fixed requests. Each expectation is
// computed here from seededData(), independently of the engine (not from the in-memory result).

type AnyRow = Record<string, any>;

async function runPinned(ctx: TargetContext, root: RootName, shape: object, dynamic = false): Promise<any> {
  const json = JSON.parse(JSON.stringify(shape));
  if (ctx.target === "memory") {
    const rows = rowsOfRoot(ctx.data(), root) as object[];
    return dynamic ? toListDynamic(rows, json) : toList(rows, json);
  }
  return runOnDatabase(ctx, { root: entities[root], dynamic }, json);
}

const idIn = (ids: number[]) => ({ connector: "And", conditions: [{ sort: 1, field: "id", dataType: "Number", operator: "In", values: ids }] });

forEachTarget("Differential regressions (bugs found by the random requests)", (ctx) => {
  // Found as `$.data[i].address.$class: expected "Object", actual "Address"` on every database:
  // the in-memory evaluation projects an embedded member into a plain object, the databases
  // (TypeORM's setEntityValue) into an Address, like the seeded entities themselves.
  it("typed rows hold the embedded address as an Address instance, with or without selects", async () => {
    const customers = ctx.data().customers.slice(0, 3);
    for (const selects of [undefined, ["address"], ["id", "address.city"]]) {
      const shape = { conditionGroup: idIn(customers.map((c) => c.id)), ...(selects ? { selects } : {}) };
      const result = await runPinned(ctx, "Customer", shape);
      assert.equal(result.data.length, 3);
      result.data.forEach((row: AnyRow, i: number) => {
        const want = customers[i]!.address;
        const fields = selects?.includes("address.city") ? { city: want.city } : { street: want.street, city: want.city, country: want.country };
        assert.ok(row.address instanceof Address, `selects ${JSON.stringify(selects)}: address of customer ${customers[i]!.id} is a ${row.address?.constructor?.name}, not an Address`);
        assert.deepEqual({ ...row.address }, fields);
      });
    }
  });

  // Found as `$.data[i].customer.orders` / `$.data[i].order.items`: expected arrays, actual
  // undefined on every database. A collection selected through a reference (Order →
  // customer.orders, OrderItem → order.items) is never loaded: loadCollections only descends
  // into the collections of the root node and of collection nodes, not of reference nodes.
  // (Fixed in the engine by db5c71a while this test was written; kept as a regression test.)
  for (const dynamic of [false, true]) {
    it(`a collection selected through a reference is loaded (${dynamic ? "dynamic" : "typed"})`, async () => {
      const { orders, items } = ctx.data();
      const someOrders = [orders[0]!, orders.find((o) => o.customerId > 5)!];
      const orderResult = await runPinned(ctx, "Order", { conditionGroup: idIn(someOrders.map((o) => o.id)), selects: ["id", "customer.orders.id"] }, dynamic);
      assert.deepEqual(
        orderResult.data.map((row: AnyRow) => ({ id: row.id, orders: row.customer?.orders?.map((o: AnyRow) => o.id) })),
        someOrders.map((o) => ({ id: o.id, orders: orders.filter((x) => x.customerId === o.customerId).map((x) => x.id).sort((a, b) => a - b) })),
      );
      const someItems = [items[0]!, items[items.length - 1]!];
      const itemResult = await runPinned(ctx, "OrderItem", { conditionGroup: idIn(someItems.map((i) => i.id)), selects: ["id", "order.items.sku"] }, dynamic);
      assert.deepEqual(
        itemResult.data.map((row: AnyRow) => ({ id: row.id, skus: row.order?.items?.map((i: AnyRow) => i.sku) })),
        someItems.map((item) => ({
          id: item.id,
          skus: items.filter((x) => x.orderId === item.orderId).sort((a, b) => a.id - b.id).map((x) => x.sku),
        })),
      );
    });
  }

  // Reported (issue #21) as "a member of a reference comes with its key on the databases and
  // without it in memory"; then pinned as "without keys" on every target. Issue #43 follows
  // 2.1.5 §4.1 instead: a typed result returns each object built below the root with its key
  // (a reference's members, a collection's elements), on every target; a dynamic row (§4.2)
  // and the root get only what was selected. Pinned here, key for key, so no target drifts.
  for (const dynamic of [false, true]) {
    it(`a member of a reference or of collection elements comes with its object's key typed, alone dynamic (${dynamic ? "dynamic" : "typed"})`, async () => {
      const { orders, items } = ctx.data();
      const some = [orders[0]!, orders.find((o) => o.customerId > 5)!];
      const result = await runPinned(ctx, "Order", { conditionGroup: idIn(some.map((o) => o.id)), selects: ["status", "customer.name", "items.quantity"] }, dynamic);
      assert.deepEqual(
        result.data.map((row: AnyRow) => ({ keys: Object.keys(row), customer: { ...row.customer }, items: row.items.map((i: AnyRow) => ({ ...i })) })),
        some.map((o) => ({
          keys: ["status", "customer", "items"],
          customer: { name: ctx.data().customers.find((c) => c.id === o.customerId)!.name, ...(dynamic ? {} : { id: o.customerId }) },
          items: items.filter((i) => i.orderId === o.id).sort((a, b) => a.id - b.id).map((i) => ({ quantity: i.quantity, ...(dynamic ? {} : { id: i.id }) })),
        })),
      );
      // Key for key, in order: the selected members, then the key.
      if (!dynamic) for (const row of result.data) assert.deepEqual(Object.keys(row.customer), ["name", "id"]);
    });
  }

  // Found on the first runs (engine of 08:00, all three databases) as `$.data[i].contact:
  // expected {"id":10}, actual null` for `selects: ["contact.id"]`, and `order.customer` null for
  // `["order.customer", "order.customer.id"]`: a reference whose primary key is selected was
  // taken for a missing one. Fixed in the engine by 20c225c while this test was written; kept.
  it("a typed reference whose key is selected is present, and null only when missing", async () => {
    const customers = ctx.data().customers.filter((c) => c.id <= 12);
    const result = await runPinned(ctx, "Customer", { conditionGroup: idIn(customers.map((c) => c.id)), selects: ["id", "contact.id"] });
    assert.ok(customers.some((c) => c.contact === null) && customers.some((c) => c.contact !== null));
    assert.deepEqual(
      result.data.map((row: AnyRow) => ({ id: row.id, contact: row.contact === null ? null : { ...row.contact }, typed: row.contact === null || row.contact instanceof ContactInfo })),
      customers.map((c) => ({ id: c.id, contact: c.contact ? { id: c.contact.id } : null, typed: true })),
    );
    const item = ctx.data().items[0]!;
    const items = await runPinned(ctx, "OrderItem", { conditionGroup: idIn([item.id]), selects: ["order.customer", "order.customer.id"] });
    assert.deepEqual(items.data.map((row: AnyRow) => row.order?.customer?.id ?? null), [item.order.customerId]);
  });

  // Found as `function min(boolean) does not exist` on PostgreSQL: FirstOrDefault and
  // LastOrDefault pass validation on a boolean field (only Minimum/Maximum exclude booleans)
  // and are compiled to MIN/MAX, which PostgreSQL does not define for boolean.
  it("FirstOrDefault / LastOrDefault of a boolean field are its smallest / largest value", async () => {
    const summary = {
      groupBy: {
        fields: ["tier"],
        aggregateBy: [
          { field: "isActive", alias: "first", aggregator: "FirstOrDefault" },
          { field: "isActive", alias: "last", aggregator: "LastOrDefault" },
        ],
      },
      conditionGroup: idIn([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]),
    };
    const result = await runPinned(ctx, "Customer", summary);
    const customers = ctx.data().customers.filter((c) => c.id <= 20);
    const expected = [...new Set(customers.map((c) => c.tier))].sort().map((tier) => {
      const flags = customers.filter((c) => c.tier === tier).map((c) => c.isActive);
      return { tier, first: flags.every(Boolean), last: flags.some(Boolean) };
    });
    assert.ok(expected.some((g) => g.first !== g.last), "the data must mix true and false in a group");
    assert.deepEqual(result.data, expected);
  });

  // Found as `$.totalCount: expected 690, actual 695` on MariaDB (seed 1, filter#390). MariaDB
  // 10.11 rounds a fractional constant compared with an indexed integer column when it uses the
  // index (ref access): `customerId = 235.99` finds customer 236's orders (while a plan without
  // the index finds none, so COUNT and the page even disagree). The engine sends the value as is.
  it("Number Equal / In with a fraction on an indexed integer column matches nothing", async () => {
    const { orders } = ctx.data();
    const customerId = orders.find((o) => o.customerId > 10)!.customerId;
    assert.ok(orders.some((o) => o.customerId === customerId), "the rounded value must exist");
    const fraction = customerId - 0.01;
    for (const operator of ["Equal", "In"]) {
      for (const page of [undefined, { pageNumber: 1, pageSize: 5 }]) {
        const shape = {
          conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "customerId", dataType: "Number", operator, values: [fraction] }] },
          ...(page ? { page } : {}),
        };
        const result = await runPinned(ctx, "Order", shape);
        assert.deepEqual({ totalCount: result.totalCount, ids: result.data.map((o: AnyRow) => o.id) }, { totalCount: 0, ids: [] }, `customerId ${operator} ${fraction}${page ? " with a page" : ""}`);
      }
    }
  });

  // Found while restricting the random Summaries on MariaDB (group keys "New York"/"new york"
  // came back in an order no oracle can know). MariaDB groups text exactly (by bytes) but orders
  // the groups by `MIN(key)` under utf8mb4_general_ci, where "alice", "Alice" and "ALICE" tie on
  // every order term; the sort is not stable between statements, so pages of groups are not a
  // partition: one group shows up on two pages and another on none.
  it("the pages of a Summary grouped by a text key hold every group exactly once", async function () {
    this.timeout(120_000);
    const customers = ctx.data().customers.filter((c) => c.id <= 200);
    const names = [...new Set(customers.map((c) => c.name))];
    assert.ok(names.includes("alice") && names.includes("Alice") && names.includes("ALICE"));
    const base = {
      conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "id", dataType: "Number", operator: "LessThanOrEqual", values: [200] }] },
      groupBy: { fields: ["name"], aggregateBy: [{ alias: "n", aggregator: "Count" }] },
      orders: [{ sort: 1, field: "name", direction: "Ascending" }],
    };
    // The server's tie order varies between statements, so several page sizes are walked.
    for (const pageSize of [1, 2, 3]) {
      const seen: string[] = [];
      for (let pageNumber = 1; (pageNumber - 1) * pageSize < names.length; pageNumber++) {
        const result = await runPinned(ctx, "Customer", { ...base, page: { pageNumber, pageSize } });
        assert.equal(result.totalCount, names.length);
        seen.push(...result.data.map((row: AnyRow) => row.name as string));
      }
      const sorted = (list: string[]) => [...list].sort(codePoint);
      const twice = seen.filter((name, i) => seen.indexOf(name) !== i);
      const never = names.filter((name) => !seen.includes(name));
      assert.deepEqual({ pageSize, twice, never }, { pageSize, twice: [], never: [] });
      assert.deepEqual(sorted(seen), sorted(names));
    }
  });
});
