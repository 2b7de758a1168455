// Cursor walks while rows change (issue #44), on every target: rows inserted and deleted between
// pages, before and after the walk's position, must not make the walk repeat a row or skip one
// that existed throughout; and instants that differ only in microseconds (PostgreSQL's and
// MariaDB's datetime(6)) stay distinct positions: a cursor that kept a JS Date's milliseconds
// would find its own row after itself, or skip its ties.
import assert from "node:assert/strict";
import { Column, Entity, PrimaryColumn, type DataSource, type ObjectLiteral } from "typeorm";
import { toList, toListAsync, type FilterResult } from "../../lib/index.js";
import { openIsolatedDatabase, type Dialect } from "../support/databases.js";
import { describeOnTargets, targets } from "../support/targets.js";

@Entity("cursor_item")
class CursorItem {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "int", nullable: true }) rank!: number | null;
  @Column({ type: Date, precision: 6 }) at!: Date;
  @Column({ type: "varchar", length: 20 }) label!: string;
}

const base = Date.UTC(2026, 0, 1, 12, 0, 0);

/** Row i: rank i % 7 (NULL every fifth), an instant in one of 5 milliseconds (ties). */
function itemOf(id: number): CursorItem {
  return Object.assign(new CursorItem(), { id, rank: id % 5 === 0 ? null : id % 7, at: new Date(base + (id % 5)), label: `item ${id}` });
}

const byRankThenAt = { orders: [{ sort: 1, field: "rank", direction: "Ascending" }, { sort: 2, field: "at", direction: "Descending" }] };
/** As a numbered page spells the cursor pages' order: ties by the primary key in the last order's direction (plan/seek.ts). */
const byRankThenAtNumbered = { orders: [...byRankThenAt.orders, { sort: 3, field: "id", direction: "Descending" }] };

describeOnTargets("Cursor walks while rows change", targets, (dialect: Dialect) => openIsolatedDatabase(dialect, "querylib_cursor", [CursorItem]), (target, dataSource) => {
  let rows: CursorItem[] = [];
  const memory = target === "memory";
  const db = (): DataSource => dataSource();
  const run = async (shape: object): Promise<FilterResult<CursorItem>> =>
    (memory ? toList(rows as ObjectLiteral[], shape as never) : toListAsync(db().getRepository(CursorItem), shape as never)) as Promise<FilterResult<CursorItem>>;
  const insert = async (item: CursorItem) => {
    if (memory) rows.push(item);
    else await db().getRepository(CursorItem).insert(item);
  };
  const remove = async (id: number) => {
    if (memory) rows = rows.filter((r) => r.id !== id);
    else await db().getRepository(CursorItem).delete({ id });
  };

  beforeEach(async () => {
    rows = [];
    if (!memory) await db().getRepository(CursorItem).clear();
    for (let id = 1; id <= 60; id++) await insert(itemOf(id));
  });

  it("rows inserted and deleted between pages: no row twice, none that existed throughout skipped, the order kept", async () => {
    const start = (await run({ ...byRankThenAtNumbered, page: { pageNumber: 1, pageSize: 1000 } })).data.map((r) => r.id);
    const deleted = new Set<number>();
    const visited: number[] = [];
    let after = "";
    let nextId = 1000;
    for (let page = 0; page < 100; page++) {
      const result = await run({ ...byRankThenAt, page: { pageSize: 6, after } });
      visited.push(...result.data.map((r) => r.id));
      if (!result.hasNextPage) break;
      after = result.nextCursor!;
      // Behind and ahead of the position: delete one row of each, insert two (one sorting first, one last).
      const behind = visited[Math.floor(visited.length / 2)]!;
      const ahead = start.find((id) => !visited.includes(id) && !deleted.has(id));
      for (const id of [behind, ahead]) {
        if (id === undefined) continue;
        await remove(id);
        deleted.add(id);
      }
      await insert(Object.assign(itemOf(nextId++), { rank: null }));
      await insert(Object.assign(itemOf(nextId++), { rank: 99 }));
    }
    assert.equal(new Set(visited).size, visited.length, `a row visited twice: ${visited}`);
    const throughout = start.filter((id) => !deleted.has(id));
    for (const id of throughout) assert.ok(visited.includes(id), `row ${id} existed throughout and was skipped`);
    // The rows visited keep the order the final state gives them.
    const final = (await run({ ...byRankThenAtNumbered, page: { pageNumber: 1, pageSize: 1000 } })).data.map((r) => r.id);
    const still = visited.filter((id) => final.includes(id));
    assert.deepEqual(still, final.filter((id) => still.includes(id)));
  });

  if (target !== "memory" && target !== "sqlite") {
    it("instants a microsecond apart are distinct positions (ties within one millisecond)", async () => {
      const repository = db().getRepository(CursorItem);
      await repository.clear();
      const table = repository.metadata.tablePath;
      const quote = (name: string) => (target === "postgres" ? `"${name}"` : `\`${name}\``);
      // Twelve rows in the same millisecond, each a microsecond apart, inserted by text so no JS Date rounds them.
      for (let i = 0; i < 12; i++) {
        const at = `2026-01-01 12:00:00.123${String(100 + i * 7).padStart(3, "0")}`;
        const sql = `INSERT INTO ${quote(table)} (${quote("id")}, ${quote("rank")}, ${quote("at")}, ${quote("label")}) VALUES (${target === "postgres" ? "$1, $2, $3, $4" : "?, ?, ?, ?"})`;
        await db().query(sql, [100 - i, 1, at, `tie ${i}`]);
      }
      const byAt = { orders: [{ sort: 1, field: "at", direction: "Ascending" }] };
      const whole = (await run({ ...byAt, page: { pageNumber: 1, pageSize: 100 } })).data.map((r) => r.id);
      // Ordered by the microseconds, not by the id (which runs the other way).
      assert.deepEqual(whole, Array.from({ length: 12 }, (_, i) => 100 - i));
      for (const pageSize of [1, 5]) {
        const visited: number[] = [];
        let after = "";
        for (let pages = 0; ; pages++) {
          assert.ok(pages <= 12, "the walk does not end: a cursor found its own row again");
          const result = await run({ ...byAt, page: { pageSize, after } });
          visited.push(...result.data.map((r) => r.id));
          if (!result.hasNextPage) break;
          after = result.nextCursor!;
        }
        assert.deepEqual(visited, whole, `page size ${pageSize}`);
        const back: number[][] = [];
        let before = "";
        for (let pages = 0; ; pages++) {
          assert.ok(pages <= 12, "the walk does not end: a cursor found its own row again");
          const result = await run({ ...byAt, page: { pageSize, before } });
          back.unshift(result.data.map((r) => r.id));
          if (!result.hasPreviousPage) break;
          before = result.previousCursor!;
        }
        assert.deepEqual(back.flat(), whole, `backwards, page size ${pageSize}`);
      }
    });
  }
});
