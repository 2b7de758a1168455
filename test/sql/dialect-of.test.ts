// The driver types QueryLib runs on are named from dialect-of.ts's table, so a new dialect's line
// is also the list its refusals give (no message spells the databases by hand).
import assert from "node:assert/strict";
import type { DataSource } from "typeorm";
import { LogicException } from "../../lib/errors/logic-exception.js";
import { dialectOf, supportedDriverTypes } from "../../lib/dialect/dialect-of.js";

describe("dialectOf: the supported driver types", () => {
  it("a DataSource of another driver type is refused with the table's driver types, every one of them", () => {
    const types = supportedDriverTypes().split(", ");
    for (const type of ["postgres", "mysql", "sqlite", "cockroachdb", "mariadb", "better-sqlite3"]) assert.ok(types.includes(type), type);
    const oracle = { options: { type: "oracle" } } as unknown as DataSource;
    assert.throws(() => dialectOf(oracle), (error: unknown) =>
      error instanceof LogicException && error.message.includes(`driver types ${supportedDriverTypes()}, not "oracle"`));
  });
});
