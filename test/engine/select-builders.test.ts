// The unguarded select builders run the one pipeline (lib/pipeline/driver.ts) as a Filter of
// selects: select() gives TypeORM's own partial selection of the same members, selectDynamic()
// the same nested rows as toListAsyncDynamic with those selects; a bad select list is the
// Filter's LogicException, named where the list is.
import assert from "node:assert/strict";
import { LogicException, select, selectDynamic, toListAsync, toListAsyncDynamic } from "../../lib/index.js";
import { Codes } from "../../lib/errors/codes.js";
import { Customer } from "../domain/entities.js";
import { forEachTarget } from "../support/targets.js";

const byId = <T extends { id: number }>(rows: T[]) => [...rows].sort((a, b) => a.id - b.id);

forEachTarget("Select builders (select, selectDynamic) through the pipeline", (ctx) => {
  if (ctx.target === "memory") {
    it("an array is refused (a builder needs TypeORM): EntityNotSupported (EntityMetadataNotFound), for a valid select list", () => {
      const rows = ctx.data().customers as never;
      for (const make of [() => select(rows, ["id"]), () => selectDynamic(rows, ["id"])]) {
        assert.throws(make, (error: unknown) => error instanceof LogicException && error.code === Codes.EntityNotSupported);
      }
    });
    return;
  }
  const repository = () => ctx.dataSource().getRepository(Customer);

  it("selectDynamic gives toListAsyncDynamic's rows for the same selects", async () => {
    const selects = ["id", "name", "contact.city"];
    const built = await selectDynamic(repository(), selects).getRows() as { id: number }[];
    const expected = (await toListAsyncDynamic(repository(), { selects })).data as { id: number }[];
    assert.ok(expected.length > 0);
    assert.deepEqual(byId(built), byId(expected));
  });

  it("select hydrates entities with the selected members (and the keys TypeORM needs)", async () => {
    const rows = await select(repository(), ["id", "name"]).getMany();
    const expected = (await toListAsync(repository(), { selects: ["id", "name"] })).data;
    assert.deepEqual(byId(rows).map((c) => [c.id, c.name]), byId(expected).map((c) => [c.id, c.name]));
    assert.ok(rows.every((c) => c.tier === undefined), "an unselected member stays unset");
  });

  it("a bad select list is the Filter's LogicException, named at selects", () => {
    for (const make of [() => select(repository(), ["nope"]), () => selectDynamic(repository(), ["nope"])]) {
      assert.throws(make, (error: unknown) => error instanceof LogicException && (error.path ?? "").startsWith("selects"));
    }
    for (const make of [() => select(repository(), []), () => selectDynamic(repository(), [])]) {
      assert.throws(make, (error: unknown) => error instanceof LogicException && error.code === "MustHasFields");
    }
  });
});
