// Named parameters → positional ones. QueryLib's texts repeat with new values, so their
// placeholders are found once per text (a template); anything a template cannot say exactly —
// a spread list, a raw-SQL function, a `:name` that is no parameter (a PostgreSQL `::cast`) —
// goes the general way. Both ways must give the same statement.
import assert from "node:assert/strict";
import { toPositional } from "../../lib/compile/to-positional.js";
import { postgres } from "../../lib/dialect/postgres/postgres-dialect.js";
import { sqlite } from "../../lib/dialect/sqlite/sqlite-dialect.js";

describe("toPositional", () => {
  it("binds every value in text order, the same on the first call of a text and on later ones", () => {
    const sql = "SELECT 1 WHERE a = :ql_1 AND b = :ql_0 AND c = :ql_1";
    for (let i = 0; i < 3; i++) {
      const values = { ql_0: `b${i}`, ql_1: i };
      assert.deepEqual(toPositional(sql, [values], postgres), { sql: "SELECT 1 WHERE a = $1 AND b = $2 AND c = $3", parameters: [i, `b${i}`, i] });
      assert.deepEqual(toPositional(sql, [values], sqlite), { sql: "SELECT 1 WHERE a = ? AND b = ? AND c = ?", parameters: [i, `b${i}`, i] });
    }
  });

  it("stores SQLite booleans and dates as TypeORM does, on every call", () => {
    const sql = "SELECT 1 WHERE f = :ql_0 AND d = :ql_1";
    for (const flag of [true, false]) {
      const { parameters } = toPositional(sql, [{ ql_0: flag, ql_1: new Date("2024-02-29T10:00:00Z") }], sqlite);
      assert.deepEqual(parameters, [flag ? 1 : 0, "2024-02-29 10:00:00.000"]);
    }
  });

  it("spreads a list, keeps a name that is no parameter, and inlines a raw-SQL function, before and after the text was seen", () => {
    const sql = "SELECT x::text FROM t WHERE id IN (:...ids) AND y = :y AND z = :now";
    for (const ids of [[1, 2], [3, 4, 5]]) {
      const statement = toPositional(sql, [{ ids, y: "v", now: () => "CURRENT_TIMESTAMP" }], postgres);
      const placeholders = ids.map((_, i) => `$${i + 1}`).join(", ");
      assert.deepEqual(statement, { sql: `SELECT x::text FROM t WHERE id IN (${placeholders}) AND y = $${ids.length + 1} AND z = CURRENT_TIMESTAMP`, parameters: [...ids, "v"] });
    }
    const plain = "SELECT a::text FROM t WHERE y = :y";
    for (let i = 0; i < 2; i++) assert.deepEqual(toPositional(plain, [{ y: i }], postgres), { sql: "SELECT a::text FROM t WHERE y = $1", parameters: [i] });
  });

  it("reads values from several sources, a later one winning, an inherited member never; the same before and after the text was seen", () => {
    const sql = "SELECT 1 WHERE a = :a AND b = :b AND c = :c AND d = :toString";
    const inherited = Object.create({ c: "inherited" }) as Record<string, unknown>;
    for (let i = 0; i < 2; i++) {
      const sources = [{ a: "base a", b: "base b", c: `base c${i}` }, { b: `fragment b${i}` }, inherited, { a: undefined }];
      for (const [dialect, placeholders] of [[postgres, ["$1", "$2", "$3"]], [sqlite, ["?", "?", "?"]]] as const) {
        assert.deepEqual(toPositional(sql, sources, dialect), {
          sql: `SELECT 1 WHERE a = ${placeholders[0]} AND b = ${placeholders[1]} AND c = ${placeholders[2]} AND d = :toString`,
          parameters: [undefined, `fragment b${i}`, `base c${i}`],
        });
      }
    }
  });
});
