// Segment (set algebra of condition sets) and Summary (group, aggregate, having, order, page) on
// every target. Expectations are computed here in plain JS over the seeded object graph
// (ctx.data()), never from the engine.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { type FilterResult, LogicException, toList, toListAsync } from "../../lib/index.js";
import { ContactInfo, Customer, Employee, Order, OrderItem, Product } from "../domain/entities.js";
import { forEachTarget, type TargetContext } from "../support/targets.js";

// ---------------------------------------------------------------------------------------------
// Local helpers

type EntityClass = typeof Customer | typeof Order | typeof OrderItem | typeof Employee | typeof Product | typeof ContactInfo;
type Shape = Record<string, unknown>;
type Row = Record<string, any>;
type Result<T> = FilterResult<T>;

function rowsOf(ctx: TargetContext, entity: EntityClass): object[] {
  const data = ctx.data();
  if (entity === Customer) return data.customers;
  if (entity === Order) return data.orders;
  if (entity === OrderItem) return data.items;
  if (entity === Employee) return data.employees;
  if (entity === Product) return data.products;
  return data.contacts;
}

async function run<T = Row>(ctx: TargetContext, entity: EntityClass, shape: Shape): Promise<Result<T>> {
  if (ctx.target === "memory") return toList(rowsOf(ctx, entity) as ObjectLiteral[], shape) as unknown as Result<T>;
  return (await toListAsync(ctx.dataSource().getRepository(entity as never), shape)) as unknown as Result<T>;
}

async function expectCode(action: () => Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(action, (error: unknown) => {
    assert.ok(error instanceof LogicException, `expected a LogicException, got ${String(error)}`);
    assert.equal((error as LogicException).code, code);
    return true;
  });
}

function cond(field: string, dataType: string, operator: string, values: unknown[] = [], sort = 1) {
  return { sort, field, dataType, operator, values };
}

const group = (...conditions: ReturnType<typeof cond>[]) => ({ connector: "And", conditions });

/** Follows a dotted path of references/embedded members; null when a reference is missing. */
function get(row: unknown, path: string): any {
  let at: any = row;
  for (const part of path.split(".")) {
    if (at === null || at === undefined) return null;
    at = at[part];
  }
  return at ?? null;
}

type Scalar = string | number | boolean | Date | null;

function compareNonNull(a: Exclude<Scalar, null>, b: Exclude<Scalar, null>): number {
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0; // code point (BMP data)
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  return Number(a) - Number(b);
}

/** Nulls first ascending, last descending. */
function compareNullable(a: Scalar, b: Scalar, desc = false): number {
  const aNull = a === null || a === undefined;
  const bNull = b === null || b === undefined;
  const c = aNull && bNull ? 0 : aNull ? -1 : bNull ? 1 : compareNonNull(a as Exclude<Scalar, null>, b as Exclude<Scalar, null>);
  return desc ? -c : c;
}

const ids = (rows: readonly { id: number }[]) => rows.map((row) => row.id);

function plain(value: unknown): unknown {
  if (value === null || value === undefined || typeof value !== "object" || value instanceof Date) return value;
  if (Array.isArray(value)) return value.map(plain);
  const out: Row = {};
  for (const [key, member] of Object.entries(value)) out[key] = plain(member);
  return out;
}

// Summary oracle ------------------------------------------------------------------------------

interface AggSpec {
  field?: string;
  alias: string;
  aggregator: string;
}

/** `contact.city` → `contactCity` (docs/SHAPES.md: dots removed, later segments capitalised). */
const keyName = (path: string) =>
  path
    .split(".")
    .map((part, index) => (index === 0 ? part : part[0]!.toUpperCase() + part.slice(1)))
    .join("");

const valueKey = (value: unknown) => (value instanceof Date ? `d${value.getTime()}` : JSON.stringify(value));

function aggregate(rows: readonly object[], spec: AggSpec): unknown {
  if (spec.aggregator === "Count") return rows.length;
  const values = rows.map((row) => get(row, spec.field!)).filter((value) => value !== null && value !== undefined);
  switch (spec.aggregator) {
    case "CountDistinct":
      return new Set(values.map(valueKey)).size;
    case "Sumation":
      return values.length === 0 ? null : values.reduce((sum: number, value: number) => sum + value, 0);
    case "Average":
      return values.length === 0 ? null : values.reduce((sum: number, value: number) => sum + value, 0) / values.length;
    case "Minimum":
    case "FirstOrDefault":
      return values.length === 0 ? null : values.reduce((m, value) => (compareNonNull(value, m) < 0 ? value : m));
    case "Maximum":
    case "LastOrDefault":
      return values.length === 0 ? null : values.reduce((m, value) => (compareNonNull(value, m) > 0 ? value : m));
  }
  throw new Error(`oracle: unknown aggregator ${spec.aggregator}`);
}

interface SummaryOracle {
  where?: (row: any) => boolean;
  keys: string[];
  aggregates: AggSpec[];
  having?: (row: Row) => boolean;
  /** Output names (keys or aliases) with direction, before the implicit all-keys-ascending. */
  orders?: Array<[string, boolean?]>;
  page?: { pageNumber: number; pageSize: number };
}

function summarize(rows: readonly object[], oracle: SummaryOracle): { data: Row[]; totalCount: number } {
  const groups = new Map<string, { keys: Row; rows: object[] }>();
  for (const row of rows) {
    if (oracle.where && !oracle.where(row)) continue;
    const keys: Row = {};
    for (const path of oracle.keys) keys[keyName(path)] = get(row, path);
    const id = oracle.keys.map((path) => valueKey(keys[keyName(path)])).join("|");
    let entry = groups.get(id);
    if (!entry) groups.set(id, (entry = { keys, rows: [] }));
    entry.rows.push(row);
  }
  let data = [...groups.values()].map(({ keys, rows: members }) => {
    const out: Row = { ...keys };
    for (const spec of oracle.aggregates) out[spec.alias] = aggregate(members, spec);
    return out;
  });
  if (oracle.having) data = data.filter(oracle.having);
  const orders: Array<[string, boolean?]> = [...(oracle.orders ?? []), ...oracle.keys.map((path): [string] => [keyName(path)])];
  data.sort((x, y) => {
    for (const [name, desc] of orders) {
      const c = compareNullable(x[name], y[name], desc);
      if (c !== 0) return c;
    }
    return 0;
  });
  const totalCount = data.length;
  if (oracle.page) data = data.slice((oracle.page.pageNumber - 1) * oracle.page.pageSize, oracle.page.pageNumber * oracle.page.pageSize);
  return { data, totalCount };
}

/** Aliases compared with a relative tolerance (averages are doubles). */
function assertRowsEqual(actual: Row[], expected: Row[], approximate: string[] = []): void {
  assert.equal(actual.length, expected.length, `row count: ${JSON.stringify(actual.slice(0, 3))}…`);
  actual.forEach((row, index) => {
    const want = expected[index]!;
    assert.deepEqual(Object.keys(row).sort(), Object.keys(want).sort(), `members of row ${index}`);
    for (const key of Object.keys(want)) {
      const a = row[key];
      const e = want[key];
      const where = `row ${index} (${JSON.stringify(plain(want))}) member ${key}`;
      if (approximate.includes(key) && typeof e === "number") {
        assert.equal(typeof a, "number", `${where}: a number, got ${JSON.stringify(a)}`);
        assert.ok(Math.abs(a - e) <= 1e-6 * Math.max(1, Math.abs(e)), `${where}: ${a} ≈ ${e}`);
      } else if (e instanceof Date) {
        assert.ok(a instanceof Date, `${where}: a Date, got ${JSON.stringify(a)}`);
        assert.equal(a.getTime(), e.getTime(), where);
      } else {
        assert.strictEqual(a, e, where);
      }
    }
  });
}

forEachTarget("Segment and Summary", (ctx) => {
  const customers = () => ctx.data().customers;

  // ===========================================================================================
  describe("Segment", () => {
    // Four sets with overlaps in every direction.
    const gold = group(cond("tier", "Enum", "Equal", ["Gold"]));
    const rich = group(cond("balance", "Number", "GreaterThan", [3000]));
    const inactive = group(cond("isActive", "Boolean", "Equal", [false]));
    const cancelled = group(cond("orders.status", "Enum", "Equal", ["Cancelled"]));
    const isGold = (c: Customer) => c.tier === "Gold";
    const isRich = (c: Customer) => c.balance > 3000;
    const isInactive = (c: Customer) => !c.isActive;
    const hasCancelled = (c: Customer) => c.orders.some((o) => o.status === "Cancelled");

    /** The ids in primary-key order (also the order without orders). */
    const where = (test: (c: Customer) => boolean) => customers().filter(test).map((c) => c.id);
    const union = (a: number[], b: number[]) => [...new Set([...a, ...b])].sort((x, y) => x - y);
    const intersect = (a: number[], b: number[]) => a.filter((id) => b.includes(id));
    const except = (a: number[], b: number[]) => a.filter((id) => !b.includes(id));

    it("the sets overlap (sanity of the oracle)", () => {
      const a = where(isGold);
      const b = where(isRich);
      assert.ok(intersect(a, b).length > 0 && except(a, b).length > 0 && except(b, a).length > 0);
    });

    async function expectSegment(shape: Shape, expected: number[]) {
      const result = await run<Customer>(ctx, Customer, shape);
      assert.deepEqual(ids(result.data), expected);
      assert.equal(result.totalCount, expected.length);
      if (!shape.page) {
        assert.equal(result.pageNumber, 0);
        assert.equal(result.pageSize, 0);
        assert.equal(result.pageCount, 0);
      }
      return result;
    }

    it("Union of two sets given out of order", async () => {
      await expectSegment(
        { conditionSets: [{ sort: 2, intersection: "Union", conditionGroup: rich }, { sort: 1, conditionGroup: gold }] },
        union(where(isGold), where(isRich)),
      );
    });

    it("Intersect of two sets", async () => {
      await expectSegment(
        { conditionSets: [{ sort: 5, intersection: "Intersect", conditionGroup: rich }, { sort: 3, conditionGroup: gold }] },
        intersect(where(isGold), where(isRich)),
      );
    });

    it("Except follows the Sort order, not the list order", async () => {
      await expectSegment(
        { conditionSets: [{ sort: 2, intersection: "Except", conditionGroup: rich }, { sort: 1, conditionGroup: gold }] },
        except(where(isGold), where(isRich)),
      );
      await expectSegment(
        { conditionSets: [{ sort: 2, intersection: "Except", conditionGroup: gold }, { sort: 1, conditionGroup: rich }] },
        except(where(isRich), where(isGold)),
      );
    });

    it("three sets combine left to right in Sort order: (gold ∪ rich) − inactive", async () => {
      await expectSegment(
        {
          conditionSets: [
            { sort: 30, intersection: "Except", conditionGroup: inactive },
            { sort: 10, conditionGroup: gold },
            { sort: 20, intersection: "Union", conditionGroup: rich },
          ],
        },
        except(union(where(isGold), where(isRich)), where(isInactive)),
      );
    });

    it("three sets: (gold ∩ inactive) ∪ rich differs from gold ∩ (inactive ∪ rich)", async () => {
      const expected = union(intersect(where(isGold), where(isInactive)), where(isRich));
      assert.notDeepEqual(expected, intersect(where(isGold), union(where(isInactive), where(isRich))));
      await expectSegment(
        {
          conditionSets: [
            { sort: 3, intersection: "Union", conditionGroup: rich },
            { sort: 2, intersection: "Intersect", conditionGroup: inactive },
            { sort: 1, conditionGroup: gold },
          ],
        },
        expected,
      );
    });

    it("three sets: (rich − gold) ∩ inactive", async () => {
      await expectSegment(
        {
          conditionSets: [
            { sort: 1, conditionGroup: rich },
            { sort: 2, intersection: "Except", conditionGroup: gold },
            { sort: 3, intersection: "Intersect", conditionGroup: inactive },
          ],
        },
        intersect(except(where(isRich), where(isGold)), where(isInactive)),
      );
    });

    it("Except keeps rows whose condition is unknown: all − (score > 50) keeps the customers without a score", async () => {
      const highScore = group(cond("score", "Number", "GreaterThan", [50]));
      const expected = except(ids(customers()), where((c) => c.score !== null && c.score > 50));
      assert.ok(customers().some((c) => c.score === null && expected.includes(c.id)), "the seed has customers without a score");
      await expectSegment({ conditionSets: [{ sort: 1, conditionGroup: { conditions: [] } }, { sort: 2, intersection: "Except", conditionGroup: highScore }] }, expected);
      await expectSegment({ conditionSets: [{ sort: 1, conditionGroup: gold }, { sort: 2, intersection: "Except", conditionGroup: highScore }] }, except(where(isGold), where((c) => c.score !== null && c.score > 50)));
    });

    it("four sets: ((gold − rich) ∩ inactive) ∪ rich — an Intersect after the second set, then a Union", async () => {
      const expected = union(intersect(except(where(isGold), where(isRich)), where(isInactive)), where(isRich));
      assert.notDeepEqual(expected, intersect(except(where(isGold), where(isRich)), union(where(isInactive), where(isRich))));
      await expectSegment(
        {
          conditionSets: [
            { sort: 1, conditionGroup: gold },
            { sort: 2, intersection: "Except", conditionGroup: rich },
            { sort: 3, intersection: "Intersect", conditionGroup: inactive },
            { sort: 4, intersection: "Union", conditionGroup: rich },
          ],
        },
        expected,
      );
    });

    it("the first set's intersection is ignored", async () => {
      await expectSegment(
        { conditionSets: [{ sort: 1, intersection: "Except", conditionGroup: gold }, { sort: 2, intersection: "Intersect", conditionGroup: rich }] },
        intersect(where(isGold), where(isRich)),
      );
    });

    it("an empty condition group is every row: all − gold", async () => {
      await expectSegment(
        { conditionSets: [{ sort: 1, conditionGroup: { conditions: [] } }, { sort: 2, intersection: "Except", conditionGroup: gold }] },
        except(ids(customers()), where(isGold)),
      );
    });

    it("collection paths inside sets: has a Cancelled order ∩ has an order over 8000", async () => {
      const big = group(cond("orders.total", "Number", "GreaterThan", [8000]));
      const expected = intersect(where(hasCancelled), where((c) => c.orders.some((o) => o.total > 8000)));
      assert.ok(expected.length > 0);
      await expectSegment({ conditionSets: [{ sort: 1, conditionGroup: cancelled }, { sort: 2, intersection: "Intersect", conditionGroup: big }] }, expected);
    });

    it("collection path in a set, paged past the first page", async () => {
      const expected = union(where(hasCancelled), where(isGold));
      const result = await run<Customer>(ctx, Customer, {
        conditionSets: [{ sort: 1, conditionGroup: cancelled }, { sort: 2, intersection: "Union", conditionGroup: gold }],
        page: { pageNumber: 3, pageSize: 10 },
      });
      assert.deepEqual(ids(result.data), expected.slice(20, 30));
      assert.equal(result.totalCount, expected.length);
    });

    it("collection path Except: rich − has a Cancelled order", async () => {
      await expectSegment(
        { conditionSets: [{ sort: 1, conditionGroup: rich }, { sort: 2, intersection: "Except", conditionGroup: cancelled }] },
        except(where(isRich), where(hasCancelled)),
      );
    });

    it("with selects: Intersect by primary key, rows with only the selected members", async () => {
      const result = await run<Customer>(ctx, Customer, {
        conditionSets: [{ sort: 1, conditionGroup: gold }, { sort: 2, intersection: "Intersect", conditionGroup: rich }],
        selects: ["id", "name"],
      });
      const expected = customers().filter((c) => isGold(c) && isRich(c));
      assert.ok(expected.length > 0);
      for (const row of result.data) {
        assert.ok(row instanceof Customer);
        assert.deepEqual(Object.keys(row).sort(), ["id", "name"]);
      }
      assert.deepEqual(plain(result.data), expected.map((c) => ({ id: c.id, name: c.name })));
      assert.equal(result.totalCount, expected.length);
    });

    it("with selects without the key: Union keeps distinct rows with equal values, Except and Intersect still work", async () => {
      // Customers 2 and 15 are both "Alice": a set algebra on the selected values would merge them.
      const alice = group(cond("name", "Text", "Equal", ["Alice"]));
      const lower = group(cond("id", "Number", "LessThanOrEqual", [15]));
      const unionResult = await run<Customer>(ctx, Customer, {
        conditionSets: [{ sort: 1, conditionGroup: alice }, { sort: 2, intersection: "Union", conditionGroup: alice }],
        selects: ["name"],
      });
      const alices = customers().filter((c) => c.name === "Alice");
      assert.ok(alices.length >= 2);
      assert.deepEqual(plain(unionResult.data), alices.map(() => ({ name: "Alice" })));
      assert.equal(unionResult.totalCount, alices.length);

      const exceptResult = await run<Customer>(ctx, Customer, {
        conditionSets: [{ sort: 1, conditionGroup: alice }, { sort: 2, intersection: "Except", conditionGroup: lower }],
        selects: ["name", "score"],
      });
      const expected = alices.filter((c) => c.id > 15);
      assert.deepEqual(plain(exceptResult.data), expected.map((c) => ({ name: c.name, score: c.score })));

      const intersectResult = await run<Customer>(ctx, Customer, {
        conditionSets: [{ sort: 1, conditionGroup: alice }, { sort: 2, intersection: "Intersect", conditionGroup: lower }],
        selects: ["name"],
      });
      assert.deepEqual(plain(intersectResult.data), alices.filter((c) => c.id <= 15).map(() => ({ name: "Alice" })));
    });

    it("orders and page apply to the combined rows; totals are the combined set's", async () => {
      const combined = customers().filter((c) => isGold(c) || isRich(c));
      const ordered = [...combined].sort((x, y) => compareNullable(x.score, y.score, true) || x.id - y.id);
      const result = await run<Customer>(ctx, Customer, {
        conditionSets: [{ sort: 1, conditionGroup: gold }, { sort: 2, intersection: "Union", conditionGroup: rich }],
        orders: [{ sort: 1, field: "score", direction: "Descending" }],
        page: { pageNumber: 2, pageSize: 10 },
      });
      assert.deepEqual(ids(result.data), ids(ordered.slice(10, 20)));
      assert.equal(result.totalCount, combined.length);
      assert.equal(result.pageNumber, 2);
      assert.equal(result.pageSize, 10);
      assert.equal(result.pageCount, Math.ceil(combined.length / 10));
    });

    it("orders by a collection path on the combined rows, with selects", async () => {
      const combined = customers().filter((c) => isInactive(c) && !isGold(c));
      const maxTotal = (c: Customer) => (c.orders.length ? Math.max(...c.orders.map((o) => o.total)) : null);
      const ordered = [...combined].sort((x, y) => compareNullable(maxTotal(x), maxTotal(y), true) || x.id - y.id);
      const result = await run<Customer>(ctx, Customer, {
        conditionSets: [{ sort: 1, conditionGroup: inactive }, { sort: 2, intersection: "Except", conditionGroup: gold }],
        orders: [{ sort: 1, field: "orders.total", direction: "Descending" }],
        page: { pageNumber: 1, pageSize: 25 },
        selects: ["id", "orders.total"],
      });
      assert.deepEqual(
        plain(result.data),
        ordered.slice(0, 25).map((c) => ({ id: c.id, orders: [...c.orders].sort((a, b) => a.id - b.id).map((o) => ({ total: o.total, id: o.id })) })),
      );
      assert.equal(result.totalCount, combined.length);
    });

    it("a page past the end is empty with the totals intact", async () => {
      const expected = intersect(where(isGold), where(isInactive));
      const result = await run<Customer>(ctx, Customer, {
        conditionSets: [{ sort: 1, conditionGroup: gold }, { sort: 2, intersection: "Intersect", conditionGroup: inactive }],
        page: { pageNumber: 1000, pageSize: 10 },
      });
      assert.deepEqual(result.data, []);
      assert.equal(result.totalCount, expected.length);
      assert.equal(result.pageCount, Math.ceil(expected.length / 10));
    });

    it("an empty result", async () => {
      await expectSegment(
        { conditionSets: [{ sort: 1, conditionGroup: gold }, { sort: 2, intersection: "Except", conditionGroup: gold }] },
        [],
      );
    });

    it("no condition sets: the Filter rules (pageCount = totalCount without a page)", async () => {
      const all = await run<Customer>(ctx, Customer, { conditionSets: [] });
      assert.deepEqual(ids(all.data), ids(customers()));
      assert.equal(all.totalCount, customers().length);
      assert.equal(all.pageCount, customers().length);
      assert.equal(all.pageNumber, 0);
      assert.equal(all.pageSize, 0);

      const ordered = [...customers()].sort((x, y) => compareNullable(x.birthDate, y.birthDate) || x.id - y.id);
      const paged = await run<Customer>(ctx, Customer, {
        conditionSets: [],
        orders: [{ sort: 1, field: "birthDate" }],
        page: { pageNumber: 3, pageSize: 50 },
        selects: ["id", "birthDate"],
      });
      assert.deepEqual(plain(paged.data), ordered.slice(100, 150).map((c) => ({ id: c.id, birthDate: c.birthDate })));
      assert.equal(paged.pageCount, Math.ceil(customers().length / 50));
      assert.equal(paged.totalCount, customers().length);
    });

    describe("validation", () => {
      it("duplicate set sorts: ListOfConditionsSetsMustHasUniqueSortValue", async () => {
        await expectCode(
          () => run(ctx, Customer, { conditionSets: [{ sort: 1, conditionGroup: gold }, { sort: 1, intersection: "Union", conditionGroup: rich }] }),
          "ListOfConditionsSetsMustHasUniqueSortValue",
        );
      });

      it("sort uniqueness is checked before intersections", async () => {
        await expectCode(
          () => run(ctx, Customer, { conditionSets: [{ sort: 1, conditionGroup: gold }, { sort: 1, conditionGroup: rich }] }),
          "ListOfConditionsSetsMustHasUniqueSortValue",
        );
      });

      it("a set after the first without intersection: ConditionsSetOfIndex[1-N]MustHasIntersection", async () => {
        await expectCode(
          () => run(ctx, Customer, { conditionSets: [{ sort: 1, conditionGroup: gold }, { sort: 2, conditionGroup: rich }] }),
          "ConditionsSetOfIndex[1-N]MustHasIntersection",
        );
        await expectCode(
          () =>
            run(ctx, Customer, {
              conditionSets: [{ sort: 1, conditionGroup: gold }, { sort: 2, intersection: "Union", conditionGroup: rich }, { sort: 3, intersection: null, conditionGroup: inactive }],
            }),
          "ConditionsSetOfIndex[1-N]MustHasIntersection",
        );
      });

      it("first by Sort, not by list position: the listed-first set without intersection is second by Sort", async () => {
        await expectCode(
          () => run(ctx, Customer, { conditionSets: [{ sort: 2, conditionGroup: gold }, { sort: 1, intersection: "Union", conditionGroup: rich }] }),
          "ConditionsSetOfIndex[1-N]MustHasIntersection",
        );
      });

      it("each set's where is validated; intersections before wheres; orders, page, selects after", async () => {
        const bad = group(cond("nope", "Text", "Equal", ["x"]));
        await expectCode(
          () => run(ctx, Customer, { conditionSets: [{ sort: 1, conditionGroup: gold }, { sort: 2, intersection: "Union", conditionGroup: bad }] }),
          "ConditionMustHasValidFieldName",
        );
        await expectCode(
          () => run(ctx, Customer, { conditionSets: [{ sort: 1, conditionGroup: bad }, { sort: 2, conditionGroup: rich }] }),
          "ConditionsSetOfIndex[1-N]MustHasIntersection",
        );
        const sets = [{ sort: 1, conditionGroup: gold }, { sort: 2, intersection: "Union", conditionGroup: rich }];
        await expectCode(
          () => run(ctx, Customer, { conditionSets: sets, orders: [{ sort: 1, field: "nope" }], page: { pageNumber: 0, pageSize: 1 }, selects: [] }),
          "ConditionMustHasValidFieldName",
        );
        await expectCode(() => run(ctx, Customer, { conditionSets: sets, page: { pageNumber: 0, pageSize: 1 }, selects: [] }), "PageNumberMustBeGreaterThanZero");
        await expectCode(() => run(ctx, Customer, { conditionSets: sets, page: { pageNumber: 1, pageSize: 0 } }), "PageSizeMustBeGreaterThanZero");
        await expectCode(() => run(ctx, Customer, { conditionSets: sets, selects: [] }), "MustHasFields");
      });
    });
  });

  // ===========================================================================================
  describe("Summary", () => {
    const agg = (aggregator: string, alias: string, field?: string): AggSpec => (field === undefined ? { alias, aggregator } : { field, alias, aggregator });

    async function expectSummary(entity: EntityClass, shape: Shape, oracle: SummaryOracle, approximate: string[] = []) {
      const result = await run<Row>(ctx, entity, shape);
      const expected = summarize(rowsOf(ctx, entity), oracle);
      assertRowsEqual(result.data, expected.data, approximate);
      assert.equal(result.totalCount, expected.totalCount);
      if (oracle.page) {
        assert.equal(result.pageNumber, oracle.page.pageNumber);
        assert.equal(result.pageSize, oracle.page.pageSize);
        assert.equal(result.pageCount, Math.ceil(expected.totalCount / oracle.page.pageSize));
      } else {
        assert.equal(result.pageNumber, 0);
        assert.equal(result.pageSize, 0);
        assert.equal(result.pageCount, expected.totalCount);
      }
      return { result, expected };
    }

    it("every aggregator on numbers (int with nulls, decimal), grouped by tier", async () => {
      const aggregates = [
        agg("Count", "n"),
        agg("Count", "nScore", "score"),
        agg("CountDistinct", "distinctScore", "score"),
        agg("Sumation", "sumScore", "score"),
        agg("Sumation", "sumBalance", "balance"),
        agg("Average", "avgScore", "score"),
        agg("Average", "avgBalance", "balance"),
        agg("Minimum", "minScore", "score"),
        agg("Maximum", "maxScore", "score"),
        agg("Minimum", "minBalance", "balance"),
        agg("Maximum", "maxBalance", "balance"),
        agg("FirstOrDefault", "firstBalance", "balance"),
        agg("LastOrDefault", "lastScore", "score"),
        // Nulls are ignored: the smallest value, not a null sorted first.
        agg("FirstOrDefault", "firstScore", "score"),
      ];
      const { expected } = await expectSummary(
        Customer,
        { groupBy: { fields: ["tier"], aggregateBy: aggregates } },
        { keys: ["tier"], aggregates },
        ["avgScore", "avgBalance", "sumBalance"],
      );
      assert.deepEqual(expected.data.map((row) => row.tier), ["Bronze", "Gold", "Silver"]);
      assert.ok(expected.data.some((row) => row.n !== row.distinctScore));
      assert.ok(customers().some((c) => c.score === null) && expected.data.every((row) => row.firstScore !== null));
    });

    it("decimal sums are exact to the cent", async () => {
      const aggregates = [agg("Sumation", "sumBalance", "balance")];
      const result = await run<Row>(ctx, Customer, { groupBy: { fields: ["isActive"], aggregateBy: aggregates } });
      const cents = (active: boolean) => customers().filter((c) => c.isActive === active).reduce((sum, c) => sum + Math.round(c.balance * 100), 0);
      assert.deepEqual(
        result.data.map((row) => [row.isActive, Math.round(row.sumBalance * 100)]),
        [[false, cents(false)], [true, cents(true)]],
      );
    });

    it("text aggregators are exact, by code point (min/max, FirstOrDefault/LastOrDefault, CountDistinct)", async () => {
      const aggregates = [
        agg("Minimum", "minName", "name"),
        agg("Maximum", "maxName", "name"),
        agg("FirstOrDefault", "firstName", "name"),
        agg("LastOrDefault", "lastName", "name"),
        agg("Minimum", "minNotes", "notes"),
        agg("Maximum", "maxNotes", "notes"),
        agg("FirstOrDefault", "firstNotes", "notes"),
        agg("LastOrDefault", "lastNotes", "notes"),
        agg("CountDistinct", "cities", "address.city"),
        agg("CountDistinct", "names", "name"),
      ];
      const { expected } = await expectSummary(Customer, { groupBy: { fields: ["tier"], aggregateBy: aggregates } }, { keys: ["tier"], aggregates });
      // The data makes case and accents matter: a case-insensitive MIN/MAX or count would differ.
      const everyName = customers().map((c) => c.name);
      assert.ok(everyName.includes("alice") && everyName.includes("ALICE"));
      assert.ok(expected.data.some((row) => /[^\x00-\x7f]/.test(row.maxName)));
    });

    // PostgreSQL has no MIN/MAX for boolean: these failed there with "function min(boolean) does not exist".
    it("FirstOrDefault / LastOrDefault of a boolean: false before true, in having and orders too", async () => {
      const aggregates = [agg("FirstOrDefault", "firstActive", "isActive"), agg("LastOrDefault", "lastActive", "isActive"), agg("Count", "n")];
      const keys = ["address.country"];
      const { expected } = await expectSummary(Customer, { groupBy: { fields: keys, aggregateBy: aggregates } }, { keys, aggregates });
      assert.ok(expected.data.some((g) => g.firstActive === false && g.lastActive === true), "a group mixes both values");
      await expectSummary(
        Customer,
        {
          groupBy: { fields: keys, aggregateBy: aggregates },
          having: group(cond("firstActive", "Boolean", "Equal", [false], 1), cond("lastActive", "Boolean", "Equal", [true], 2)),
          orders: [{ sort: 1, field: "lastActive", direction: "Descending" }, { sort: 2, field: "firstActive" }],
        },
        { keys, aggregates, having: (g) => g.firstActive === false && g.lastActive === true, orders: [["lastActive", true], ["firstActive"]] },
      );
      const single = await expectSummary(
        Customer,
        { groupBy: { fields: ["tier", "isActive"], aggregateBy: aggregates }, orders: [{ sort: 1, field: "firstActive", direction: "Descending" }] },
        { keys: ["tier", "isActive"], aggregates, orders: [["firstActive", true]] },
      );
      assert.ok(single.expected.data.every((g) => g.firstActive === g.isActive && g.lastActive === g.isActive));
    });

    it("date aggregators: Date for a date-time column, YYYY-MM-DD text for a date column", async () => {
      const aggregates = [
        agg("Minimum", "firstCreated", "createdAt"),
        agg("Maximum", "lastCreated", "createdAt"),
        agg("FirstOrDefault", "firstCreated2", "createdAt"),
        agg("Minimum", "minBirth", "birthDate"),
        agg("Maximum", "maxBirth", "birthDate"),
        agg("LastOrDefault", "lastBirth", "birthDate"),
        agg("CountDistinct", "birthDays", "birthDate"),
      ];
      await expectSummary(Customer, { groupBy: { fields: ["tier"], aggregateBy: aggregates } }, { keys: ["tier"], aggregates });
    });

    it("a reference-navigation key: contact.city → contactCity, with a null group for customers without contact", async () => {
      const aggregates = [agg("Count", "n"), agg("Sumation", "sumScore", "score")];
      const { result, expected } = await expectSummary(
        Customer,
        { groupBy: { fields: ["contact.city"], aggregateBy: aggregates } },
        { keys: ["contact.city"], aggregates },
      );
      const nullGroup = result.data.find((row) => row.contactCity === null);
      assert.ok(nullGroup, "a null group");
      assert.equal(nullGroup.n, customers().filter((c) => c.contact === null).length);
      assert.ok(expected.data.some((row) => row.contactCity === "New York") && expected.data.some((row) => row.contactCity === "new york"));
      assert.equal(result.data[0].contactCity, null, "the null key sorts first");
    });

    it("several keys: tier and isActive, ordered by every key ascending", async () => {
      const aggregates = [agg("Count", "n"), agg("Maximum", "maxBalance", "balance")];
      const { result } = await expectSummary(Customer, { groupBy: { fields: ["tier", "isActive"], aggregateBy: aggregates } }, { keys: ["tier", "isActive"], aggregates });
      assert.equal(result.data.length, 6);
    });

    it("keys only (no aggregates): embedded address.country → addressCountry, nulls first", async () => {
      const { result } = await expectSummary(Customer, { groupBy: { fields: ["address.country"] } }, { keys: ["address.country"], aggregates: [] });
      assert.equal(result.data[0].addressCountry, null);
    });

    it("a where before grouping", async () => {
      const aggregates = [agg("Count", "n"), agg("Average", "avg", "balance")];
      await expectSummary(
        Customer,
        { conditionGroup: group(cond("orders.status", "Enum", "Equal", ["Pending"])), groupBy: { fields: ["address.country"], aggregateBy: aggregates } },
        { where: (c: Customer) => c.orders.some((o) => o.status === "Pending"), keys: ["address.country"], aggregates },
        ["avg"],
      );
    });

    describe("having", () => {
      const aggregates = [agg("Count", "n"), agg("Average", "avgBalance", "balance"), agg("Maximum", "maxScore", "score")];
      const groupBy = { fields: ["address.country", "tier"], aggregateBy: aggregates };
      const keys = ["address.country", "tier"];

      it("And on aliases", async () => {
        const { expected } = await expectSummary(
          Customer,
          { groupBy, having: group(cond("n", "Number", "GreaterThanOrEqual", [8], 1), cond("avgBalance", "Number", "GreaterThan", [2000], 2)) },
          { keys, aggregates, having: (g) => g.n >= 8 && g.avgBalance > 2000 },
          ["avgBalance"],
        );
        assert.ok(expected.data.length > 0 && expected.totalCount < summarize(customers(), { keys, aggregates }).totalCount);
      });

      it("Or with a nested sub-group", async () => {
        const having = {
          connector: "Or",
          conditions: [cond("n", "Number", "GreaterThan", [20], 1)],
          subConditionGroups: [
            { sort: 1, connector: "And", conditions: [cond("maxScore", "Number", "GreaterThanOrEqual", [90], 1), cond("n", "Number", "LessThan", [8], 2)] },
          ],
        };
        const { expected } = await expectSummary(
          Customer,
          { groupBy, having },
          { keys, aggregates, having: (g) => g.n > 20 || (g.maxScore >= 90 && g.n < 8) },
          ["avgBalance"],
        );
        assert.ok(expected.data.some((g) => g.n > 20) && expected.data.some((g) => g.n <= 20));
      });

      it("aliases are matched case-insensitively (2.1.5)", async () => {
        await expectSummary(
          Customer,
          { groupBy, having: group(cond("N", "Number", "Between", [10, 12])) },
          { keys, aggregates, having: (g) => g.n >= 10 && g.n <= 12 },
          ["avgBalance"],
        );
      });

      it("a group key in having: HavingField[tier]MustExistInAggregateByAliases", async () => {
        await expectCode(
          () => run(ctx, Customer, { groupBy, having: group(cond("tier", "Enum", "Equal", ["Gold"])) }),
          "HavingField[tier]MustExistInAggregateByAliases",
        );
      });

      it("an unknown name in having: HavingField[nope]MustExistInAggregateByAliases", async () => {
        await expectCode(
          () => run(ctx, Customer, { groupBy, having: { conditions: [], subConditionGroups: [{ sort: 1, conditions: [cond("nope", "Number", "Equal", [1])] }] } }),
          "HavingField[nope]MustExistInAggregateByAliases",
        );
      });
    });

    describe("orders and pages of groups", () => {
      const aggregates = [agg("Count", "n"), agg("Sumation", "total", "balance")];
      const groupBy = { fields: ["address.country", "tier"], aggregateBy: aggregates };
      const keys = ["address.country", "tier"];

      it("by an alias descending, then every key ascending", async () => {
        await expectSummary(Customer, { groupBy, orders: [{ sort: 1, field: "n", direction: "Descending" }] }, { keys, aggregates, orders: [["n", true]] }, ["total"]);
      });

      it("by a dotted key descending (nulls last)", async () => {
        const { result } = await expectSummary(
          Customer,
          { groupBy, orders: [{ sort: 1, field: "address.country", direction: "Descending" }] },
          { keys, aggregates, orders: [["addressCountry", true]] },
          ["total"],
        );
        assert.equal(result.data[result.data.length - 1].addressCountry, null);
      });

      it("by the dot-stripped key and by the output name (any case)", async () => {
        for (const field of ["addresscountry", "addressCountry", "ADDRESS.COUNTRY"]) {
          await expectSummary(
            Customer,
            { groupBy, orders: [{ sort: 1, field: "tier", direction: "Descending" }, { sort: 2, field, direction: "Descending" }] },
            { keys, aggregates, orders: [["tier", true], ["addressCountry", true]] },
            ["total"],
          );
        }
      });

      it("a page of groups: totalCount counts groups after having", async () => {
        const having = group(cond("n", "Number", "GreaterThanOrEqual", [3]));
        for (const page of [{ pageNumber: 1, pageSize: 7 }, { pageNumber: 3, pageSize: 7 }]) {
          const { expected } = await expectSummary(
            Customer,
            { groupBy, having, orders: [{ sort: 1, field: "total", direction: "Ascending" }], page },
            { keys, aggregates, having: (g) => g.n >= 3, orders: [["total"]], page },
            ["total"],
          );
          assert.ok(expected.totalCount > 14 && expected.totalCount < summarize(customers(), { keys, aggregates }).totalCount);
        }
      });

      it("a page past the end of the groups", async () => {
        const result = await run<Row>(ctx, Customer, { groupBy, page: { pageNumber: 100, pageSize: 10 } });
        const total = summarize(customers(), { keys, aggregates }).totalCount;
        assert.deepEqual(result.data, []);
        assert.equal(result.totalCount, total);
        assert.equal(result.pageCount, Math.ceil(total / 10));
      });

      // MariaDB ordered text groups by its case- and accent-insensitive collation: "alice", "Alice"
      // and "ALICE" tied on every order term, so the order (and the pages) changed between statements.
      it("text keys and text extremes sort exactly, by code point, on every target; pages partition the groups", async () => {
        const names = new Set(customers().map((c) => c.name));
        assert.ok(names.has("alice") && names.has("Alice") && names.has("ALICE"), "case variants in the data");
        const nameCount = [agg("Count", "n")];
        for (const direction of ["Ascending", "Descending"]) {
          await expectSummary(
            Customer,
            { groupBy: { fields: ["name"], aggregateBy: nameCount }, orders: [{ sort: 1, field: "name", direction }] },
            { keys: ["name"], aggregates: nameCount, orders: [["name", direction === "Descending"]] },
          );
        }
        const extremes = [agg("FirstOrDefault", "firstName", "name"), agg("Maximum", "maxCity", "address.city"), agg("Count", "n")];
        for (const [alias, desc] of [["firstName", false], ["maxCity", true]] as const) {
          await expectSummary(
            Customer,
            { groupBy: { fields: ["score"], aggregateBy: extremes }, orders: [{ sort: 1, field: alias, direction: desc ? "Descending" : "Ascending" }] },
            { keys: ["score"], aggregates: extremes, orders: [[alias, desc]] },
          );
        }
        const keys = ["contact.city", "address.city"];
        const pageSize = 7;
        const all = summarize(customers(), { keys, aggregates: nameCount });
        const seen: Row[] = [];
        for (let pageNumber = 1; (pageNumber - 1) * pageSize < all.totalCount; pageNumber++) {
          const page = { pageNumber, pageSize };
          const { result } = await expectSummary(Customer, { groupBy: { fields: keys, aggregateBy: nameCount }, page }, { keys, aggregates: nameCount, page });
          seen.push(...result.data);
        }
        assert.deepEqual(seen, all.data);
      });

      it("an unknown order field: SummaryOrderField[nope]MustExistInGroupByFieldsOrAggregateByAliases", async () => {
        await expectCode(() => run(ctx, Customer, { groupBy, orders: [{ sort: 1, field: "nope" }] }), "SummaryOrderField[nope]MustExistInGroupByFieldsOrAggregateByAliases");
      });
    });

    it("empty input: a where that matches nothing gives no groups", async () => {
      const aggregates = [agg("Count", "n"), agg("Sumation", "s", "balance")];
      for (const page of [undefined, { pageNumber: 1, pageSize: 10 }]) {
        const result = await run<Row>(ctx, Customer, {
          conditionGroup: group(cond("name", "Text", "Equal", ["nobody at all"])),
          groupBy: { fields: ["tier"], aggregateBy: aggregates },
          ...(page ? { page } : {}),
        });
        assert.deepEqual(result.data, []);
        assert.equal(result.totalCount, 0);
        assert.equal(result.pageCount, 0);
      }
    });

    it("nulls inside aggregates: a group whose values are all null gives null sums, averages, minima; 0 distinct", async () => {
      const aggregates = [
        agg("Count", "n"),
        agg("Count", "nScore", "score"),
        agg("CountDistinct", "distinctScore", "score"),
        agg("Sumation", "sumScore", "score"),
        agg("Average", "avgScore", "score"),
        agg("Minimum", "minScore", "score"),
        agg("Maximum", "maxScore", "score"),
        agg("FirstOrDefault", "firstScore", "score"),
        agg("LastOrDefault", "lastScore", "score"),
        agg("Maximum", "maxNotes", "notes"),
      ];
      const { expected } = await expectSummary(
        Customer,
        { conditionGroup: group(cond("score", "Number", "IsNull")), groupBy: { fields: ["tier"], aggregateBy: aggregates } },
        { where: (c: Customer) => c.score === null, keys: ["tier"], aggregates },
      );
      assert.ok(expected.data.length > 0);
      for (const row of expected.data) assert.deepEqual([row.sumScore, row.avgScore, row.minScore, row.distinctScore], [null, null, null, 0]);
    });

    it("ordering by an aggregate with null values: nulls first ascending", async () => {
      const aggregates = [agg("Average", "avgScore", "score"), agg("Count", "n")];
      await expectSummary(
        Customer,
        { groupBy: { fields: ["score"], aggregateBy: aggregates }, orders: [{ sort: 1, field: "avgScore" }] },
        { keys: ["score"], aggregates, orders: [["avgScore"]] },
        ["avgScore"],
      );
    });

    it("Summary on Order grouped by customer.tier and status", async () => {
      const aggregates = [agg("Count", "orders"), agg("Sumation", "revenue", "total"), agg("Average", "avgTotal", "total"), agg("Maximum", "lastPlaced", "placedAt")];
      const { result } = await expectSummary(
        Order,
        { groupBy: { fields: ["customer.tier", "status"], aggregateBy: aggregates } },
        { keys: ["customer.tier", "status"], aggregates },
        ["revenue", "avgTotal"],
      );
      assert.equal(result.data.length, 15);
      assert.ok("customerTier" in result.data[0]!);
    });

    it("Summary on Order with an order on a dotted reference key and a page", async () => {
      const aggregates = [agg("Count", "n")];
      const page = { pageNumber: 2, pageSize: 4 };
      await expectSummary(
        Order,
        { groupBy: { fields: ["status", "customer.tier"], aggregateBy: aggregates }, orders: [{ sort: 1, field: "customer.tier", direction: "Descending" }], page },
        { keys: ["status", "customer.tier"], aggregates, orders: [["customerTier", true]], page },
      );
    });

    describe("aliases", () => {
      for (const alias of ["1x", "a b", "a,b", "", "a.b", "x-y"]) {
        it(`"${alias}" is AggregationMustHasValidAlias`, async () => {
          await expectCode(
            () => run(ctx, Customer, { groupBy: { fields: ["tier"], aggregateBy: [{ alias, aggregator: "Count" }] } }),
            "AggregationMustHasValidAlias",
          );
        });
      }

      it("a missing alias is AggregationMustHasValidAlias", async () => {
        await expectCode(() => run(ctx, Customer, { groupBy: { fields: ["tier"], aggregateBy: [{ aggregator: "Count" }] } }), "AggregationMustHasValidAlias");
      });

      it("non-Latin letters, _ and digits after the first character are accepted", async () => {
        const aggregates = [agg("Count", "المجموع"), agg("Sumation", "σύνολο", "score"), agg("Maximum", "итог", "balance"), agg("Count", "_n2")];
        await expectSummary(Customer, { groupBy: { fields: ["tier"], aggregateBy: aggregates } }, { keys: ["tier"], aggregates });
      });

      it("duplicate aliases (case-insensitive): AggregationAliasesMustBeUnique", async () => {
        await expectCode(
          () => run(ctx, Customer, { groupBy: { fields: ["tier"], aggregateBy: [agg("Count", "n"), agg("Maximum", "N", "score")] } }),
          "AggregationAliasesMustBeUnique",
        );
      });

      it("an alias equal to a group field: AggregationAlias[tier]CannotBeUsedInGroupByFields", async () => {
        await expectCode(
          () => run(ctx, Customer, { groupBy: { fields: ["tier"], aggregateBy: [agg("Count", "tier")] } }),
          "AggregationAlias[tier]CannotBeUsedInGroupByFields",
        );
      });

      it("an alias equal to a key's output name: GroupKey[contactCity]CollidesWithAnotherKeyOrAlias", async () => {
        await expectCode(
          () => run(ctx, Customer, { groupBy: { fields: ["contact.city"], aggregateBy: [agg("Count", "contactCity")] } }),
          "GroupKey[contactCity]CollidesWithAnotherKeyOrAlias",
        );
      });
    });

    describe("group and aggregate field validation", () => {
      const withGroup = (fields: string[], aggregateBy: AggSpec[] = [agg("Count", "n")]) => ({ groupBy: { fields, aggregateBy } });

      for (const field of ["orders.total", "contact", "orders", "address"]) {
        it(`group by ${field}: GroupByFieldCannotBeComplexType`, async () => {
          await expectCode(() => run(ctx, Customer, withGroup([field])), "GroupByFieldCannotBeComplexType");
        });
      }

      it("an unknown group field: ConditionMustHasValidFieldName", async () => {
        await expectCode(() => run(ctx, Customer, withGroup(["nope"])), "ConditionMustHasValidFieldName");
      });

      it("no group fields: GroupByMustHasAtLeastOneField; the same field twice: GroupByFieldsMustBeUnique", async () => {
        await expectCode(() => run(ctx, Customer, withGroup([])), "GroupByMustHasAtLeastOneField");
        await expectCode(() => run(ctx, Customer, withGroup(["tier", "Tier"])), "GroupByFieldsMustBeUnique");
      });

      it("a summary without groupBy: SummaryMustHasGroupBy", async () => {
        await expectCode(() => run(ctx, Customer, { having: { conditions: [] } }), "SummaryMustHasGroupBy");
      });

      for (const field of ["contact", "orders"]) {
        it(`aggregate of ${field}: AggregationFieldMustBeSimpleType`, async () => {
          await expectCode(() => run(ctx, Customer, withGroup(["tier"], [agg("Maximum", "m", field)])), "AggregationFieldMustBeSimpleType");
        });
      }

      it("Sumation and Average of text: Aggregator[...]IsNotSupportedForFieldType[String]", async () => {
        await expectCode(() => run(ctx, Customer, withGroup(["tier"], [agg("Sumation", "s", "name")])), "Aggregator[Sumation]IsNotSupportedForFieldType[String]");
        await expectCode(() => run(ctx, Customer, withGroup(["tier"], [agg("Average", "a", "contact.city")])), "Aggregator[Average]IsNotSupportedForFieldType[String]");
      });

      it("Minimum of a boolean: Aggregator[Minimum]IsNotSupportedForFieldType[Boolean] (2.1.5)", async () => {
        await expectCode(() => run(ctx, Customer, withGroup(["tier"], [agg("Minimum", "m", "isActive")])), "Aggregator[Minimum]IsNotSupportedForFieldType[Boolean]");
      });

      it("an aggregate without field (other than Count) or with an unknown field: ConditionMustHasValidFieldName", async () => {
        await expectCode(() => run(ctx, Customer, withGroup(["tier"], [agg("Maximum", "m")])), "ConditionMustHasValidFieldName");
        await expectCode(() => run(ctx, Customer, withGroup(["tier"], [agg("Maximum", "m", "nope")])), "ConditionMustHasValidFieldName");
      });

      it("validation order per aggregate: alias, field, type, clash, duplicate", async () => {
        // alias before field
        await expectCode(() => run(ctx, Customer, withGroup(["tier"], [agg("Sumation", "1x", "nope")])), "AggregationMustHasValidAlias");
        // field before type
        await expectCode(() => run(ctx, Customer, withGroup(["tier"], [agg("Sumation", "s", "nope")])), "ConditionMustHasValidFieldName");
        // type before clash with a group field
        await expectCode(() => run(ctx, Customer, withGroup(["tier"], [agg("Sumation", "tier", "name")])), "Aggregator[Sumation]IsNotSupportedForFieldType[String]");
        // clash before duplicate
        await expectCode(() => run(ctx, Customer, withGroup(["tier"], [agg("Count", "n"), agg("Count", "tier"), agg("Count", "N")])), "AggregationAlias[tier]CannotBeUsedInGroupByFields");
        // group fields before aggregates
        await expectCode(() => run(ctx, Customer, withGroup(["contact"], [agg("Sumation", "s", "name")])), "GroupByFieldCannotBeComplexType");
      });

      it("summary order: where, group fields, aggregates, orders, page, having", async () => {
        const badWhere = group(cond("nope", "Text", "Equal", ["x"]));
        const badHaving = group(cond("tier", "Text", "Equal", ["x"]));
        const badPage = { pageNumber: 0, pageSize: 1 };
        const badOrders = [{ sort: 1, field: "nope" }];
        const base = { groupBy: { fields: ["tier"], aggregateBy: [agg("Count", "n")] } };
        await expectCode(() => run(ctx, Customer, { ...base, conditionGroup: badWhere, groupBy: { fields: ["contact"] }, having: badHaving }), "ConditionMustHasValidFieldName");
        await expectCode(() => run(ctx, Customer, { ...base, orders: badOrders, page: badPage, having: badHaving }), "SummaryOrderField[nope]MustExistInGroupByFieldsOrAggregateByAliases");
        await expectCode(() => run(ctx, Customer, { ...base, page: badPage, having: badHaving }), "PageNumberMustBeGreaterThanZero");
        await expectCode(() => run(ctx, Customer, { ...base, having: badHaving }), "HavingField[tier]MustExistInAggregateByAliases");
      });
    });
  });
});
