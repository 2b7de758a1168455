// PostgreSQL native enums: equality with the enum's own labels compares the column itself (its
// index serves the forced tenant predicates of guarded queries), any other text compares the
// column's text (a label the enum lacks must not become a driver error). Rows are checked
// against the seeded data either way.
import assert from "node:assert/strict";
import { toListAsync, toStatements } from "../../lib/index.js";
import { Customer, CustomerTier } from "../domain/entities.js";
import { seededData, seededDatabase } from "../support/databases.js";
import { describeOnTargets } from "../support/targets.js";

const tierIs = (dataType: string, operator: string, values: string[]) => ({
  conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "tier", dataType, operator, values }] },
});

describeOnTargets("PostgreSQL enum equality", ["postgres"], seededDatabase, (_target, dataSource) => {
  const customers = () => dataSource().getRepository(Customer);
  const expected = (keep: (tier: CustomerTier) => boolean) => seededData().customers.filter((c) => keep(c.tier)).map((c) => c.id);
  const ids = async (shape: object) => ((await toListAsync(customers(), shape as never)) as { data: Customer[] }).data.map((c) => c.id);

  it("Enum Equal / In / NotIn with labels compare the column, not its text", async () => {
    for (const [operator, values, keep] of [
      ["Equal", ["Gold"], (t: CustomerTier) => t === CustomerTier.Gold],
      ["In", ["Gold", "Silver"], (t: CustomerTier) => t !== CustomerTier.Bronze],
      ["NotIn", ["Gold"], (t: CustomerTier) => t !== CustomerTier.Gold],
    ] as const) {
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
