// The unguarded plan cache: a Filter on a Repository is prepared once per distinct request. The
// key is the request's exact content (requestKey), so only the same request can hit; a hit
// reuses statements, never rows; host builders, invalid and non-JSON requests are never cached.
import "reflect-metadata";
import assert from "node:assert/strict";
import { Column, Entity, PrimaryColumn, type DataSource } from "typeorm";
import { LogicException, toListAsync, toStatements } from "../../lib/index.js";
import { requestKey, requestOf, valuesKey } from "../../lib/cache/plan-cache.js";
import { unguardedPlans } from "../../lib/pipeline/unguarded.js";
import { dialects, openIsolatedDatabase } from "../support/databases.js";
import { describeOnTargets } from "../support/targets.js";

@Entity("plan_note")
class Note {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Column({ type: "varchar", length: 40 })
  topic!: string;

  @Column({ type: "int" })
  rank!: number;
}

const notes = [
  { id: 1, topic: "alpha", rank: 1 },
  { id: 2, topic: "beta", rank: 2 },
  { id: 3, topic: "alpha", rank: 3 },
];

const topicIs = (topic: string) => ({
  conditionGroup: { connector: "And" as const, conditions: [{ sort: 1, field: "topic", dataType: "Text", operator: "Equal", values: [topic] }] },
  page: { pageNumber: 1, pageSize: 10 },
});

describe("Plan cache: request keys", () => {
  it("say the request exactly: a number and its text, 0 and -0, a string and its JSON differ", () => {
    const keys = [requestKey({ a: 1 }), requestKey({ a: "1" }), requestKey({ a: 0 }), requestKey({ a: -0 }), requestKey('{"a":1}'), requestKey({ a: [1] }), requestKey({ a: null }), requestKey({ a: true }), requestKey({ a: "T" })];
    assert.equal(new Set(keys).size, keys.length, JSON.stringify(keys));
    assert.equal(requestKey({ a: [1, { b: "x" }] }), requestKey({ a: [1, { b: "x" }] }));
    const request = { a: [1, { b: "x", c: null }], d: -1.5, e: "ü" };
    assert.deepEqual(requestOf(requestKey(request)!), request);
    assert.equal(requestOf(requestKey('{"a":1}')!), '{"a":1}');
  });

  it("are null for anything JSON cannot say (such a request is never cached)", () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    class Shape { a = 1; }
    // eslint-disable-next-line no-sparse-arrays
    for (const input of [undefined, { a: undefined }, { a: NaN }, { a: Infinity }, { a: () => 1 }, { a: new Date(0) }, new Shape(), { a: [1, , 2] }, cycle, { a: 1n }, { a: Symbol("s") }]) {
      assert.equal(requestKey(input), null, String(input));
    }
  });

  it("context values are keyed in name order; a Date by its instant; a function makes them uncacheable", () => {
    assert.equal(valuesKey(new Map<string, unknown>([["a", 1], ["b", "x"]])), valuesKey(new Map<string, unknown>([["b", "x"], ["a", 1]])));
    assert.notEqual(valuesKey(new Map([["t", "1"]])), valuesKey(new Map([["t", 1]])));
    assert.equal(valuesKey(new Map([["d", new Date(0)]])), valuesKey(new Map([["d", new Date(0)]])));
    assert.notEqual(valuesKey(new Map([["d", new Date(0)]])), valuesKey(new Map([["d", new Date(1)]])));
    assert.equal(valuesKey(new Map([["f", () => 1]])), null);
    assert.equal(valuesKey(new Map([["d", new Date(NaN)]])), null);
    assert.equal(valuesKey(new Map([["z", -0]])), null);
  });

  it("context values: two sets get one key only when they hold the same names with the same values", () => {
    // Values whose texts look alike, names and texts holding the key's own punctuation, and
    // sets whose entries could run into each other if the spelling were not unambiguous.
    const values: unknown[] = [
      "1", 1, 1.5, "1.5", true, "true", "b1", false, null, "null", "z", "", " ", "s1:x", "x;", "n1;", "é", "😀",
      new Date(0), "1970-01-01T00:00:00.000Z", new Date(8.64e15), [1], ["1"], [], {}, { a: 1 }, { a: "1" }, [null], "[1]", '{"a":1}',
    ];
    const names = ["a", "b", "a=", "1:a", "s", ""];
    const sets: [string, unknown][][] = [[]];
    for (const name of names) for (const value of values) sets.push([[name, value]]);
    for (let i = 0; i < values.length; i++) for (let j = 0; j < values.length; j += 3) sets.push([["a", values[i]], ["b", values[j]]]);
    // Every pair over a small alphabet of the key's own letters, digits and punctuation: a
    // spelling that dropped a length or a tag would let two of these read the same.
    const tricky = ["", "a", "b", "x", "z", "s", "ab", "b1", "az", "ab1z", "1:", "1:b", "s1:a", "x1:bb1", "1;"];
    const trickyValues: unknown[] = [...tricky, true, false, null, 1, 12, -1];
    for (const x of tricky) for (const v of trickyValues) sets.push([[x, v]]);
    for (let i = 0; i < tricky.length; i++) {
      for (let j = i + 1; j < tricky.length; j++) for (const v of trickyValues) for (const w of trickyValues) sets.push([[tricky[i]!, v], [tricky[j]!, w]]);
    }
    const canonical = (set: [string, unknown][]) =>
      JSON.stringify([...set].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([name, value]) => [name, value instanceof Date ? { date: value.toISOString() } : { type: typeof value, value }]));
    const byKey = new Map<string, string>();
    for (const set of sets) {
      const key = valuesKey(new Map(set));
      assert.notEqual(key, null, canonical(set));
      const seen = byKey.get(key!);
      if (seen !== undefined) assert.equal(seen, canonical(set), `one key for two sets: ${seen} and ${canonical(set)}`);
      byKey.set(key!, canonical(set));
      assert.equal(valuesKey(new Map([...set].reverse())), key, "the order the values were added in does not matter");
    }
    assert.ok(byKey.size > 10_000, String(byKey.size));
  });
});

describeOnTargets("Plan cache: unguarded Filters", dialects, (dialect) => openIsolatedDatabase(dialect, "querylib_plans", [Note]), (_target, dataSource) => {
  const repository = () => dataSource().getRepository(Note);
  const idsOf = (result: unknown) => (result as { data: Note[] }).data.map((n) => n.id);
  /** Runs `action`, returning its result and the hits it made. */
  async function counting<R>(action: () => Promise<R>): Promise<[R, number]> {
    const before = unguardedPlans.stats.hits;
    const result = await action();
    return [result, unguardedPlans.stats.hits - before];
  }

  beforeEach(async () => {
    await repository().clear();
    await repository().insert(notes);
  });

  it("a request is kept from its second sighting: the third run is a hit with the same rows and SQL; rows written in between are read (plans, not rows, are cached)", async () => {
    const first = await toListAsync(repository(), topicIs("alpha"), true);
    assert.equal((await counting(() => toListAsync(repository(), topicIs("alpha"))))[1], 0, "a request seen once is not kept");
    const [second, hits] = await counting(() => toListAsync(repository(), topicIs("alpha"), true));
    assert.equal(hits, 1);
    assert.deepEqual(idsOf(second), [1, 3]);
    assert.equal(second.queryString, first.queryString);
    await repository().insert({ id: 4, topic: "alpha", rank: 4 });
    const [third, more] = await counting(() => toListAsync(repository(), topicIs("alpha")));
    assert.equal(more, 1);
    assert.deepEqual(idsOf(third), [1, 3, 4]);
    assert.equal((third as { totalCount: number }).totalCount, 3);
  });

  it("a request that differs in a value only is a miss with its own rows", async () => {
    for (let i = 0; i < 2; i++) await toListAsync(repository(), topicIs("alpha"));
    const [beta, hits] = await counting(() => toListAsync(repository(), topicIs("beta")));
    assert.equal(hits, 0);
    assert.deepEqual(idsOf(beta), [2]);
  });

  it("an invalid request is never cached: it fails the same way every time", async () => {
    for (let i = 0; i < 2; i++) {
      await assert.rejects(() => toListAsync(repository(), { ...topicIs("alpha"), orders: [{ sort: 1, field: "nope", direction: "Ascending" }] }), LogicException);
      await assert.rejects(() => toListAsync(repository(), { ...topicIs("alpha"), page: { pageNumber: 0, pageSize: 10 } }), LogicException);
    }
  });

  it("a host's SelectQueryBuilder is never cached: its own conditions and parameters apply on every call", async () => {
    const above = (rank: number) => repository().createQueryBuilder("n").where("n.rank > :rank", { rank });
    const [low, hits] = await counting(async () => [await toListAsync(above(0), topicIs("alpha")), await toListAsync(above(0), topicIs("alpha"))]);
    assert.equal(hits, 0);
    assert.deepEqual(low.map(idsOf), [[1, 3], [1, 3]]);
    assert.deepEqual(idsOf(await toListAsync(above(2), topicIs("alpha"))), [3]);
  });

  it("toStatements gives the SQL and parameters toListAsync then runs from the same cached plan", async () => {
    toStatements(repository(), topicIs("beta") as never);
    const statements = toStatements(repository(), topicIs("beta") as never); // the second sighting keeps the plan
    assert.ok(statements.data.parameters.includes("beta"));
    assert.ok(!statements.data.sql.includes("beta"), "a value entered the SQL text");
    assert.match(statements.count!.sql, /COUNT\(\*\)/);
    const [result, hits] = await counting(() => toListAsync(repository(), topicIs("beta"), true));
    assert.equal(hits, 1);
    assert.ok((result as { queryString: string }).queryString.startsWith(statements.data.sql));
  });

  it("Segments and Summaries are cached the same way: the third run is a hit with the same rows, and a changed value is a miss", async () => {
    const segment = (topic: string) => ({ conditionSets: [{ sort: 1, conditionGroup: topicIs(topic).conditionGroup }, { sort: 2, intersection: "Union", conditionGroup: topicIs("beta").conditionGroup }] });
    const summary = (topic: string) => ({ ...topicIs(topic), groupBy: { fields: ["topic"], aggregateBy: [{ alias: "n", aggregator: "Count" }] } });
    for (let i = 0; i < 2; i++) {
      await toListAsync(repository(), segment("alpha") as never);
      await toListAsync(repository(), summary("alpha") as never);
    }
    const [rows, hits] = await counting(async () => [await toListAsync(repository(), segment("alpha") as never), await toListAsync(repository(), summary("alpha") as never)]);
    assert.equal(hits, 2);
    assert.deepEqual(idsOf(rows[0]), [1, 2, 3]);
    assert.deepEqual((rows[1] as { data: unknown[] }).data, [{ topic: "alpha", n: 2 }]);
    const [other, misses] = await counting(async () => [await toListAsync(repository(), segment("gamma") as never), await toListAsync(repository(), summary("beta") as never)]);
    assert.equal(misses, 0);
    assert.deepEqual(idsOf(other[0]), [2]);
    assert.deepEqual((other[1] as { data: unknown[] }).data, [{ topic: "beta", n: 1 }]);
    assert.match(toStatements(repository(), summary("alpha") as never).data.sql, /GROUP BY/);
  });
});
