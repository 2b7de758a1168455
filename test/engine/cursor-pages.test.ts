// Cursor pages (issue #44) on every target: a walk by nextCursor from the first page, and one by
// previousCursor from the last, each visit every row once, in the order a numbered page gives
// (ties, NULLs in sort columns, mixed directions, enums, dates, a reference's column); a walk that
// turns back returns the pages it came from; count "none" pages say whether a next page exists.
import assert from "node:assert/strict";
import type { ObjectLiteral } from "typeorm";
import { LogicException, PolicyException, parseFilter, toList, toListAsync } from "../../lib/index.js";
import { Customer } from "../domain/entities.js";
import { forEachTarget } from "../support/targets.js";
import type { FilterResult } from "../../lib/index.js";

type Row = { id: number };

const orderings: { name: string; orders: object[] }[] = [
  { name: "the primary key alone", orders: [] },
  { name: "name ascending (ties)", orders: [{ sort: 1, field: "name", direction: "Ascending" }] },
  { name: "score descending (NULLs, ties)", orders: [{ sort: 1, field: "score", direction: "Descending" }] },
  { name: "score ascending (NULLs first)", orders: [{ sort: 1, field: "score", direction: "Ascending" }] },
  { name: "tier ascending, createdAt descending (an enum, mixed directions)", orders: [{ sort: 1, field: "tier", direction: "Ascending" }, { sort: 2, field: "createdAt", direction: "Descending" }] },
  { name: "birthDate descending, isActive (a nullable date, a boolean)", orders: [{ sort: 1, field: "birthDate", direction: "Descending" }, { sort: 2, field: "isActive", direction: "Ascending" }] },
  { name: "contact.email (a reference's nullable column), id descending", orders: [{ sort: 1, field: "contact.email", direction: "Ascending" }, { sort: 2, field: "id", direction: "Descending" }] },
  { name: "balance descending, tier descending", orders: [{ sort: 1, field: "balance", direction: "Descending" }, { sort: 2, field: "tier", direction: "Descending" }] },
];

/**
 * The same order as a numbered page spells it: a cursor page breaks ties by the primary key in
 * the direction of its last order (plan/seek.ts), a numbered page by the primary key ascending.
 */
function tieBroken(orders: object[]): object[] {
  const last = orders.at(-1) as { field: string; direction: string } | undefined;
  if (!last || last.field === "id") return orders;
  return [...orders, { sort: 99, field: "id", direction: last.direction }];
}

const someRows = { connector: "And", conditions: [{ field: "id", dataType: "Number", operator: "LessThanOrEqual", values: [150] }] };

forEachTarget("Cursor pages: walks visit every row once, in order", (ctx) => {
  const run = async (shape: object): Promise<FilterResult<Row>> =>
    (ctx.target === "memory" ? toList(ctx.data().customers as ObjectLiteral[], shape as never) : toListAsync(ctx.dataSource().getRepository(Customer), shape as never)) as Promise<FilterResult<Row>>;
  const ids = (r: FilterResult<Row>) => r.data.map((row) => row.id);

  async function walkForward(base: object, pageSize: number): Promise<{ visited: number[]; pages: number }> {
    const visited: number[] = [];
    let after = "";
    let pages = 0;
    for (;;) {
      const page = await run({ ...base, page: { pageSize, after } });
      pages++;
      assert.ok(page.data.length <= pageSize);
      visited.push(...ids(page));
      assert.equal(page.hasPreviousPage, pages > 1);
      if (!page.hasNextPage) {
        assert.equal(page.nextCursor, null);
        return { visited, pages };
      }
      assert.equal(page.data.length, pageSize, "a page before the last is full");
      after = page.nextCursor!;
      assert.equal(typeof after, "string");
      assert.ok(pages < 1_000, "the walk does not end");
    }
  }

  async function walkBackward(base: object, pageSize: number): Promise<number[]> {
    const pages: number[][] = [];
    let before = "";
    for (;;) {
      const page = await run({ ...base, page: { pageSize, before } });
      pages.unshift(ids(page));
      assert.equal(page.hasNextPage, pages.length > 1);
      if (!page.hasPreviousPage) {
        assert.equal(page.previousCursor, null);
        return pages.flat();
      }
      assert.equal(page.data.length, pageSize, "a page after the first is full");
      before = page.previousCursor!;
      assert.ok(pages.length < 1_000, "the walk does not end");
    }
  }

  for (const { name, orders } of orderings) {
    it(`${name}: forwards and backwards, every row once, as the numbered page orders them`, async () => {
      const base = { conditionGroup: someRows, orders };
      const whole = ids(await run({ ...base, orders: tieBroken(orders), page: { pageNumber: 1, pageSize: 1000 } }));
      assert.equal(whole.length, 150);
      const forward = await walkForward(base, 7);
      assert.deepEqual(forward.visited, whole);
      assert.equal(forward.pages, Math.ceil(150 / 7) + (150 % 7 === 0 ? 1 : 0));
      assert.deepEqual(await walkBackward(base, 7), whole);
    });
  }

  it("page size 1 over ties and NULLs: every row once", async () => {
    const base = { conditionGroup: { conditions: [{ field: "id", dataType: "Number", operator: "LessThanOrEqual", values: [40] }] }, orders: [{ sort: 1, field: "score", direction: "Descending" }, { sort: 2, field: "tier", direction: "Ascending" }] };
    const whole = ids(await run({ ...base, orders: tieBroken(base.orders), page: { pageNumber: 1, pageSize: 1000 } }));
    assert.deepEqual((await walkForward(base, 1)).visited, whole);
    assert.deepEqual(await walkBackward(base, 1), whole);
  });

  it("a walk that turns back returns the pages it came from", async () => {
    const base = { conditionGroup: someRows, orders: orderings[4]!.orders };
    const first = await run({ ...base, page: { pageSize: 10, after: "" } });
    const second = await run({ ...base, page: { pageSize: 10, after: first.nextCursor } });
    const third = await run({ ...base, page: { pageSize: 10, after: second.nextCursor } });
    const back = await run({ ...base, page: { pageSize: 10, before: third.previousCursor } });
    assert.deepEqual(ids(back), ids(second));
    const backAgain = await run({ ...base, page: { pageSize: 10, before: back.previousCursor } });
    assert.deepEqual(ids(backAgain), ids(first));
    assert.equal(backAgain.hasPreviousPage, false);
    assert.equal(backAgain.previousCursor, null);
    // The page size may change on the way: the position is the cursor's row.
    const wider = await run({ ...base, page: { pageSize: 20, after: first.nextCursor } });
    assert.deepEqual(ids(wider), [...ids(second), ...ids(third)]);
  });

  it("a cursor page counts exactly by default, and not at all with count none", async () => {
    const base = { conditionGroup: someRows, orders: orderings[1]!.orders };
    const exact = await run({ ...base, page: { pageSize: 10, after: "" } });
    assert.equal(exact.totalCount, 150);
    assert.equal(exact.pageCount, 15);
    assert.equal(exact.pageNumber, 0);
    assert.equal(exact.count, "exact");
    const none = await run({ ...base, page: { pageSize: 10, after: "", count: "none" } });
    assert.equal(none.totalCount, null);
    assert.equal(none.pageCount, null);
    assert.equal(none.count, "none");
    assert.deepEqual(ids(none), ids(exact));
  });

  it("a numbered page with count none: no total, hasNextPage from one row more", async () => {
    const base = { conditionGroup: someRows, orders: orderings[2]!.orders };
    const whole = ids(await run({ ...base, page: { pageNumber: 1, pageSize: 1000 } })); // numbered pages both: the spec's tie-break
    const page15 = await run({ ...base, page: { pageNumber: 15, pageSize: 10, count: "none" } });
    assert.deepEqual(ids(page15), whole.slice(140, 150));
    assert.equal(page15.hasNextPage, false);
    assert.equal(page15.hasPreviousPage, true);
    assert.equal(page15.totalCount, null);
    const page14 = await run({ ...base, page: { pageNumber: 14, pageSize: 10, count: "none" } });
    assert.deepEqual(ids(page14), whole.slice(130, 140));
    assert.equal(page14.hasNextPage, true);
    assert.equal(page14.nextCursor, undefined, "a numbered page has no cursors");
    const exact = await run({ ...base, page: { pageNumber: 14, pageSize: 10, count: "exact" } });
    assert.equal(exact.totalCount, 150);
    assert.equal(exact.hasNextPage, true);
  });

  it("a numbered page without a count mode keeps 2.1.5's result members alone", async () => {
    const result = await run({ conditionGroup: someRows, page: { pageNumber: 2, pageSize: 10 } });
    assert.deepEqual(Object.keys(result).sort(), ["data", "pageCount", "pageNumber", "pageSize", "policy", "queryString", "totalCount"]);
  });

  it("a Segment pages by cursor too", async () => {
    const base = { conditionSets: [{ sort: 1, conditionGroup: someRows }, { sort: 2, intersection: "Except", conditionGroup: { conditions: [{ field: "tier", dataType: "Enum", operator: "Equal", values: ["Gold"] }] } }], orders: orderings[3]!.orders };
    const whole = ids(await run({ ...base, orders: tieBroken(base.orders), page: { pageNumber: 1, pageSize: 1000 } }));
    const visited: number[] = [];
    let after = "";
    for (let pages = 0; pages < 100; pages++) {
      const page = await run({ ...base, page: { pageSize: 9, after } });
      visited.push(...ids(page));
      if (!page.hasNextPage) break;
      after = page.nextCursor!;
    }
    assert.deepEqual(visited, whole);
  });

  const refused = async (shape: object, code: string) => {
    await assert.rejects(async () => run(shape), (error: unknown) => {
      assert.ok(error instanceof LogicException, String(error));
      assert.equal((error as LogicException).code, code);
      return true;
    });
  };

  it("refused: a cursor altered by one character, or made for another request", async () => {
    const base = { conditionGroup: someRows, orders: orderings[1]!.orders };
    const { nextCursor } = await run({ ...base, page: { pageSize: 10, after: "" } });
    const cursor = nextCursor!;
    const flipped = cursor.slice(0, 20) + (cursor[20] === "A" ? "B" : "A") + cursor.slice(21);
    await refused({ ...base, page: { pageSize: 10, after: flipped } }, "CursorIsInvalid");
    await refused({ ...base, page: { pageSize: 10, after: cursor.slice(0, -2) } }, "CursorIsInvalid");
    await refused({ ...base, page: { pageSize: 10, after: "not a cursor!" } }, "CursorIsInvalid");
    // Other conditions, other orders: the cursor is not theirs.
    await refused({ conditionGroup: { conditions: [{ field: "id", dataType: "Number", operator: "LessThanOrEqual", values: [151] }] }, orders: base.orders, page: { pageSize: 10, after: cursor } }, "CursorDoesNotMatchRequest");
    await refused({ conditionGroup: someRows, orders: orderings[2]!.orders, page: { pageSize: 10, after: cursor } }, "CursorDoesNotMatchRequest");
  });

  it("refused: pageNumber with a cursor, after with before, an order across a collection, a Summary cursor", async () => {
    await refused({ page: { pageNumber: 1, pageSize: 10, after: "" } }, "PageMustHasEitherPageNumberOrCursor");
    await refused({ page: { pageSize: 10, after: "", before: "" } }, "PageCannotHasBothAfterAndBefore");
    await refused({ orders: [{ sort: 1, field: "orders.placedAt", direction: "Ascending" }], page: { pageSize: 10, after: "" } }, "CursorPageCannotOrderAcrossCollection");
    await refused({ groupBy: { fields: ["tier"], aggregateBy: [{ alias: "n", aggregator: "Count" }] }, page: { pageSize: 10, after: "" } }, "CursorPageIsNotSupportedForSummary");
  });
});

describe("Cursor pages: parsing", () => {
  it("a parsed cursor page parses to itself (a Nest decorator's Filter is parsed again by toListAsync)", () => {
    for (const page of [{ pageSize: 5, after: "" }, { pageSize: 5, before: "x", count: "none" }, { pageSize: 5, pageNumber: 0, after: "y" }]) {
      const once = parseFilter({ page });
      assert.deepEqual(parseFilter(once), once);
    }
    assert.throws(() => parseFilter({ page: { pageSize: 5, pageNumber: 1, after: "" } }), /PageMustHasEitherPageNumberOrCursor/);
    assert.throws(() => parseFilter({ page: { pageSize: 5, count: "some" } }), /InvalidEnumValue/);
    assert.throws(() => parseFilter({ page: { pageSize: 5, after: 12 } }), /InvalidMemberType/);
    assert.throws(() => parseFilter({ page: { pageSize: 5, after: "a".repeat(16_385) } }), (error: unknown) => error instanceof PolicyException && error.path === "page.after");
  });
});
