// Embedded objects inside embedded objects: typed results are built by QueryLib's own setter
// (materialize.ts), which must give what TypeORM gives — each embedded object an instance of its
// class, created once per row and shared by its columns, nulls kept — on every target, for the
// whole entity, a select of one deep column, a condition and an order on one.
import "reflect-metadata";
import assert from "node:assert/strict";
import { Column, Entity, PrimaryColumn, type DataSource } from "typeorm";
import { toList, toListAsync } from "../../lib/index.js";
import { openIsolatedDatabase } from "../support/databases.js";
import { describeOnTargets, targets } from "../support/targets.js";

class Geo {
  @Column({ type: "int", nullable: true }) lat!: number | null;
  @Column({ type: "int", nullable: true }) lon!: number | null;
}

class Place {
  @Column({ type: "varchar", length: 40 }) city!: string;
  @Column(() => Geo) geo!: Geo;
}

@Entity("nested_embedded_site")
class Site {
  @PrimaryColumn({ type: "int" }) id!: number;
  @Column({ type: "varchar", length: 40 }) name!: string;
  @Column(() => Place) place!: Place;
}

const site = (id: number, city: string, lat: number | null, lon: number | null) =>
  Object.assign(new Site(), { id, name: `Site ${id}`, place: Object.assign(new Place(), { city, geo: Object.assign(new Geo(), { lat, lon }) }) });
const sites = [site(1, "Oslo", 59, 10), site(2, "Lima", -12, null), site(3, "Oslo", null, null), site(4, "Pune", 18, 73)];

describeOnTargets("Nested embedded objects in typed results", targets, (dialect) => openIsolatedDatabase(dialect, "querylib_nested", [Site]), (target, dataSource) => {
  before(async function () {
    if (target === "memory") return;
    await dataSource().getRepository(Site).clear();
    await dataSource().getRepository(Site).insert(sites);
  });

  const run = async (shape: Record<string, unknown>) =>
    (target === "memory" ? toList(sites, shape) : await toListAsync((dataSource() as DataSource).getRepository(Site), shape)).data as Site[];

  it("the whole entity: each level an instance of its class, with TypeORM's own values", async () => {
    const rows = await run({ orders: [{ sort: 1, field: "id", direction: "Ascending" }] });
    assert.deepEqual(rows.map((r) => [r.id, r.place.city, r.place.geo.lat, r.place.geo.lon]), sites.map((s) => [s.id, s.place.city, s.place.geo.lat, s.place.geo.lon]));
    for (const row of rows) {
      assert.ok(row instanceof Site && row.place instanceof Place && row.place.geo instanceof Geo, JSON.stringify(row));
    }
    if (target !== "memory") {
      const typeorm = await dataSource().getRepository(Site).find({ order: { id: "ASC" } });
      assert.deepEqual(JSON.parse(JSON.stringify(rows)), JSON.parse(JSON.stringify(typeorm)));
    }
  });

  it("a select of one deep column, a condition and an order on one", async () => {
    const rows = await run({
      conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "place.city", dataType: "Text", operator: "Equal", values: ["Oslo"] }] },
      orders: [{ sort: 1, field: "place.geo.lat", direction: "Descending" }, { sort: 2, field: "id", direction: "Ascending" }],
      selects: ["id", "place.geo.lat"],
    });
    // NULL sorts last descending on every target (QueryLib's documented null order).
    assert.deepEqual(rows.map((r) => [r.id, r.place.geo.lat]), [[1, 59], [3, null]]);
    for (const row of rows) assert.ok(row.place instanceof Place && row.place.geo instanceof Geo);
  });
});
