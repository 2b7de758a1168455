// Native enums (PostgreSQL, MariaDB): equality with the enum's own labels compares the column
// itself (its index serves the forced tenant predicates of guarded queries), any other text
// compares the column's text (on PostgreSQL a label the enum lacks must not become a driver
// error; on MariaDB the collation must not let a case or accent variant through). Rows
// are checked against the seeded data either way.
import assert from "node:assert/strict";
import { toListAsync, toStatements } from "../../lib/index.js";
import type { DataSource } from "typeorm";
import { Customer, CustomerTier } from "../domain/entities.js";
import { seededData, seededDatabase } from "../support/databases.js";
import { describeOnTargets } from "../support/targets.js";

const tierIs = (dataType: string, operator: string, values: string[]) => ({
  conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "tier", dataType, operator, values }] },
});

/** Equality with the enum's own labels, and the seeded customers each keeps. */
const labelCases = [
  ["Equal", ["Gold"], (t: CustomerTier) => t === CustomerTier.Gold],
  ["In", ["Gold", "Silver"], (t: CustomerTier) => t !== CustomerTier.Bronze],
  ["NotIn", ["Gold"], (t: CustomerTier) => t !== CustomerTier.Gold],
] as const;

/** The customers repository on a target, the ids a request finds, and the ids a test on tier keeps. */
function customersOn(dataSource: () => DataSource) {
  const customers = () => dataSource().getRepository(Customer);
  return {
    customers,
    expected: (keep: (tier: CustomerTier) => boolean) => seededData().customers.filter((c) => keep(c.tier)).map((c) => c.id),
    ids: async (shape: object) => ((await toListAsync(customers(), shape as never)) as { data: Customer[] }).data.map((c) => c.id),
  };
}

describeOnTargets("PostgreSQL enum equality", ["postgres"], seededDatabase, (_target, dataSource) => {
  const { customers, expected, ids } = customersOn(dataSource);

  it("Enum Equal / In / NotIn with labels compare the column, not its text", async () => {
    for (const [operator, values, keep] of labelCases) {
      const sql = toStatements(customers(), tierIs("Enum", operator, [...values]) as never).data.sql;
      // A list is one array parameter typed by the column (the enum's array type): no cast.
      assert.match(sql, /"customer"\."tier" (= \$1|= ANY \(\$1\)|<> ALL \(\$1\))/, sql);
      assert.doesNotMatch(sql, /CAST\("customer"\."tier"/, sql);
      assert.deepEqual(await ids(tierIs("Enum", operator, [...values])), expected(keep));
    }
  });

  it("Text that is not a label keeps the text comparison and finds nothing (no driver error)", async () => {
    const sql = toStatements(customers(), tierIs("Text", "Equal", ["Platinum"]) as never).data.sql;
    assert.match(sql, /CAST\("customer"\."tier" AS text\)/, sql);
    assert.deepEqual(await ids(tierIs("Text", "Equal", ["Platinum"])), []);
    assert.deepEqual(await ids(tierIs("Text", "NotEqual", ["Platinum"])), expected(() => true));
  });
});

describeOnTargets("MariaDB enum equality", ["mariadb"], seededDatabase, (_target, dataSource) => {
  const { customers, expected, ids } = customersOn(dataSource);

  it("Enum Equal / In / NotIn with labels compare the ENUM column, and an index on it can serve them (issue #24)", async () => {
    for (const [operator, values, keep] of labelCases) {
      const { sql, parameters } = toStatements(customers(), tierIs("Enum", operator, [...values]) as never).data;
      assert.doesNotMatch(sql, /CAST\(`customer`\.`tier` AS CHAR\)/, sql);
      assert.deepEqual(await ids(tierIs("Enum", operator, [...values])), expected(keep));
      if (operator === "NotIn") continue; // a negation narrows nothing: no index to offer
      assert.match(sql, /`customer`\.`tier` (= \?|IN \()/, sql);
      const plan = (await dataSource().query(`EXPLAIN ${sql}`, [...parameters])) as { possible_keys: string | null }[];
      const tierIndexes = ((await dataSource().query("SHOW INDEX FROM `customer` WHERE Column_name = 'tier'")) as { Key_name: string }[]).map((i) => i.Key_name);
      assert.ok(tierIndexes.length > 0, "the test domain indexes customer.tier");
      assert.ok(plan.some((row) => (row.possible_keys ?? "").split(",").some((key) => tierIndexes.includes(key))), `no index on tier can serve ${sql}: ${JSON.stringify(plan)}`);
    }
  });

  it("the premise of comparing the ENUM column: the server refuses two labels its collation finds equal", async () => {
    // Were two such labels allowed, `tier = 'Gold'` would also match the other, and only the byte
    // test beside it would keep them apart. A lenient sql_mode does allow them (with a note): the
    // byte test then stays for those labels (native-enum-exactness.test.ts).
    for (const twin of ["gold", "Göld", "Gold "]) {
      await assert.rejects(
        dataSource().query(`CREATE TEMPORARY TABLE ql_enum_twins (e ENUM('Gold', ?))`, [twin]),
        /duplicated value/i,
        JSON.stringify(twin),
      );
    }
  });

  it("the collation lets no case or accent variant of a label through (Text; an Enum value names a member in any letter case by design)", async () => {
    // utf8mb4's default collations find 'gold' and 'Göld' equal to 'Gold' (trailing spaces are
    // trimmed by the parser on every target, so they are not a variant here).
    for (const variant of ["gold", "GOLD", "Göld", "GÖLD"]) {
      assert.deepEqual(await ids(tierIs("Text", "Equal", [variant])), [], JSON.stringify(variant));
      assert.deepEqual(await ids(tierIs("Text", "In", [variant, "Platinum"])), [], JSON.stringify(variant));
      assert.deepEqual(await ids(tierIs("Text", "NotEqual", [variant])), expected(() => true), JSON.stringify(variant));
    }
    // A label beside a variant: the list is not all labels, so it compares the column's text.
    assert.deepEqual(await ids(tierIs("Text", "In", ["Gold", "silver"])), expected((t) => t === CustomerTier.Gold));
  });
});
