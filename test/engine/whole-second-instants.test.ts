// An instant's bound without a fraction of a second is typed DATETIME on MariaDB (DATETIME(6)
// otherwise; issue #24): against a column that keeps milliseconds it must still compare exactly,
// a row 500 ms after the bound being after it. Every target answers as the in-memory one.
import "reflect-metadata";
import assert from "node:assert/strict";
import { Column, Entity, PrimaryColumn, type DataSource, type ObjectLiteral } from "typeorm";
import { toList, toListAsync } from "../../lib/index.js";
import { type Dialect, openIsolatedDatabase } from "../support/databases.js";
import { describeOnTargets, targets } from "../support/targets.js";

@Entity("whole_second_event")
class TimedEvent {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: Date, precision: 3 }) at!: Date;
}

const second = Date.parse("2024-03-01T10:00:00.000Z");
const rows = [-1000, -500, 0, 500, 999, 1000, 1500].map((offset, i) => Object.assign(new TimedEvent(), { id: i + 1, at: new Date(second + offset) }));
const iso = (offset: number) => new Date(second + offset).toISOString();
const where = (operator: string, ...values: string[]) => ({ conditionGroup: { conditions: [{ field: "at", dataType: "DateTime", operator, values }] }, orders: [{ field: "id" }] });

async function openSeeded(dialect: Dialect): Promise<DataSource> {
  const dataSource = await openIsolatedDatabase(dialect, "querylib_whole_seconds", [TimedEvent]);
  await dataSource.getRepository(TimedEvent).insert(rows);
  return dataSource;
}

describeOnTargets("Whole-second bounds against a column with milliseconds", targets, openSeeded, (target, dataSource) => {
  const ids = async (shape: object) => {
    const result = target === "memory" ? toList(rows as ObjectLiteral[], shape as never) : await toListAsync(dataSource().getRepository(TimedEvent), shape as never);
    return (result.data as TimedEvent[]).map((e) => e.id);
  };
  const cases: [string, object, number[]][] = [
    ["Equal a whole second: only the row at it", where("Equal", iso(0)), [3]],
    ["GreaterThan a whole second: 500 ms after it is after it", where("GreaterThan", iso(0)), [4, 5, 6, 7]],
    ["LessThanOrEqual a whole second", where("LessThanOrEqual", iso(0)), [1, 2, 3]],
    ["Between two whole seconds keeps both ends and what lies between", where("Between", iso(0), iso(1000)), [3, 4, 5, 6]],
    ["NotBetween two whole seconds", where("NotBetween", iso(0), iso(1000)), [1, 2, 7]],
    ["Between a fraction and a whole second", where("Between", iso(-500), iso(1000)), [2, 3, 4, 5, 6]],
  ];
  for (const [name, shape, expected] of cases) {
    it(name, async () => {
      assert.deepEqual(await ids(shape), expected);
    });
  }
});
