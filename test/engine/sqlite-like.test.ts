// SQLite: the I… text operators use SQLite's own LIKE for needles of ASCII other than i and k,
// LIKE or (for text holding İ or the Kelvin sign) the registered matcher for other ASCII needles,
// and the matcher alone otherwise. Both must decide exactly as JavaScript's lower-casing
// does (the in-memory target's semantics), also on the two characters that lower-case to ASCII
// (İ → i̇, the Kelvin sign → k) and on LIKE's own wildcards.
import "reflect-metadata";
import assert from "node:assert/strict";
import { Column, Entity, PrimaryColumn, type DataSource } from "typeorm";
import { toList, toListAsync } from "../../lib/index.js";
import { openDatabase } from "../support/databases.js";

@Entity("ci_word")
class Word {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Column({ type: "varchar", length: 60, nullable: true })
  text!: string | null;
}

const texts = [
  "Kelvin \u212A scale", "\u0130stanbul", "istanbul", "ISTANBUL", "Mañana", "MAÑANA", "50%_off", "50 off", "5__0",
  "Anna", "ANNA", "ann", "Straße", "STRASSE", "back!slash", "ΣΊΣΥΦΟΣ", null, "",
];

// Also needles as long as a value, and longer than every value: the matcher runs only for text at
// least as long as the needle (length() decides the rest in SQL; found by the fuzzer, issue #18).
const needles = ["k", "K", "i", "I", "an", "AN", "ANN", "%", "_", "50%", "0%_", "!", "ss", "ß", "ñ", "Ñ", "σ", "ς", "STAN", "bul", "x", "ki", "IN K", "n k s", "Kelvin", "ISTANBUL", "i_", "%i",
  "mañana", "σίσυφος", "ñ".repeat(100), "kelvin k scale", "kelvin k scale!"];
const operators = ["IContains", "IStartsWith", "IEndsWith", "INotContains", "INotStartsWith", "INotEndsWith"];

const filterOf = (operator: string, needle: string) => ({
  conditionGroup: { connector: "And", conditions: [{ sort: 1, field: "text", dataType: "Text", operator, values: [needle] }] },
});

describe("SQLite I… operators: LIKE where it folds as JavaScript does, the matcher elsewhere", () => {
  let dataSource: DataSource;
  const rows = texts.map((text, i) => Object.assign(new Word(), { id: i + 1, text }));

  before(async () => {
    dataSource = await openDatabase("sqlite", [Word]);
    await dataSource.getRepository(Word).insert(rows);
  });

  after(() => dataSource.destroy());

  for (const operator of operators) {
    for (const needle of needles) {
      it(`${operator} ${JSON.stringify(needle)} gives the in-memory rows`, async () => {
        const expected = toList(rows, filterOf(operator, needle)).data.map((w) => w.id);
        const actual = (await toListAsync(dataSource.getRepository(Word), filterOf(operator, needle))).data.map((w) => w.id);
        assert.deepEqual(actual, expected);
      });
    }
  }

  it("an ASCII needle without i or k compiles to LIKE; with k or i to LIKE or a matcher guarded by İ/K; non-ASCII to the matcher", async () => {
    const sqlOf = async (needle: string) => (await toListAsync(dataSource.getRepository(Word), filterOf("IContains", needle), true)).queryString!;
    assert.match(await sqlOf("an"), /LIKE \? ESCAPE '!'/);
    assert.doesNotMatch(await sqlOf("an"), /ql_ci_match/);
    const guarded = /\(length\("word"\."text"\) >= CAST\(\? AS NUMERIC\) AND ql_ci_match\("word"\."text", \?, 0\) = 1\)/;
    for (const needle of ["k", "I"]) {
      assert.match(await sqlOf(needle), /LIKE \? ESCAPE '!' OR \(\(instr\("word"\."text", '\u0130'\) > 0 OR instr\("word"\."text", '\u212A'\) > 0\) AND \(length/);
      assert.match(await sqlOf(needle), guarded);
    }
    assert.match(await sqlOf("ñ"), /^SELECT .* WHERE \(\(length\("word"\."text"\)/);
    assert.match(await sqlOf("ñ"), guarded);
    assert.doesNotMatch(await sqlOf("ñ"), /LIKE/);
  });

  it("the Kelvin sign and İ are found by k and i (JavaScript lower-cases them to ASCII)", async () => {
    const ids = async (needle: string) => (await toListAsync(dataSource.getRepository(Word), filterOf("IContains", needle))).data.map((w) => w.id);
    assert.ok((await ids("k scale")).includes(1));
    assert.ok((await ids("i")).includes(2)); // "i̇stanbul"
  });
});
