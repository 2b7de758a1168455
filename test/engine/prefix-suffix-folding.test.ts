// IStartsWith and IEndsWith on MariaDB/MySQL lower only the text's first or last CHAR_LENGTH(needle)
// characters and compare bytes (issue #24: lowering the whole text per condition per row was half
// of W7's time). Written against the answers a whole-text LIKE gave: every target must decide each
// row as the in-memory target does, on text where a cut by length could go wrong: trailing spaces
// in the text (the server's collations pad them, bytes must not), a needle longer than the text, characters
// outside the BMP (one character, four bytes), the LIKE wildcards and QueryLib's escape character
// as plain text, final sigma, and capitals whose lower case the old collation did not know. The
// same needles run IContains, whose text is lowered without the final-sigma step when the needle
// holds no sigma.
import "reflect-metadata";
import assert from "node:assert/strict";
import { Column, Entity, PrimaryColumn, type DataSource, type ObjectLiteral } from "typeorm";
import { toList, toListAsync } from "../../lib/index.js";
import { type Dialect, openIsolatedDatabase } from "../support/databases.js";
import { describeOnTargets, targets } from "../support/targets.js";

@Entity("prefix_suffix_word")
class AffixWord {
  @PrimaryColumn({ type: "int" })
  id!: number;

  @Column({ type: "varchar", length: 60, nullable: true })
  text!: string | null;
}

const texts = [
  "ab", "ab ", "ab x", "AB X", " ab", "a", "", null,
  "\u03A3\u039F\u03A6\u039F\u03A3", "\u03C3\u03BF\u03C6\u03BF\u03C2", "\u03C3\u03BF\u03C6\u03BF\u03C3",
  "\u{1D538}bc", "\u{1D538}BC\u{1F600}", "x\u{1F600}",
  "50%_off!", "50x_off", "50%yoff", "!a", "a!",
  "STRA\u1E9EE", "stra\u00DFe", "\u0130stanbul", "istanbul",
];
const rows = texts.map((text, i) => Object.assign(new AffixWord(), { id: i + 1, text }));

const needles = ["ab", "ab ", "AB X", " ", "a", "ab x and more", "\u03C3\u03BF\u03C6\u03BF\u03C2", "\u039F\u03A3", "\u03C2", "\u{1D538}B", "\u{1F600}", "c\u{1F600}",
  "50%", "50%_", "%", "_", "!", "off!", "!a", "\u1E9EE", "STRA\u00DF", "\u0130", "ISTAN"];
// IContains too: on MariaDB/MySQL a needle without a sigma lowers the text without the final-sigma step.
const operators = ["IStartsWith", "IEndsWith", "INotStartsWith", "INotEndsWith", "IContains", "INotContains"];
const filterOf = (operator: string, values: string[]) => ({ conditionGroup: { conditions: [{ field: "text", dataType: "Text", operator, values }] }, orders: [{ field: "id" }] });

async function openSeeded(dialect: Dialect): Promise<DataSource> {
  const dataSource = await openIsolatedDatabase(dialect, "querylib_affix_folding", [AffixWord]);
  await dataSource.getRepository(AffixWord).insert(rows);
  return dataSource;
}

describeOnTargets("IStartsWith and IEndsWith decide on a cut of the text", targets, openSeeded, (target, dataSource) => {
  const ids = async (shape: object) => {
    const result = target === "memory" ? toList(rows as ObjectLiteral[], shape as never) : await toListAsync(dataSource().getRepository(AffixWord), shape as never);
    return (result.data as AffixWord[]).map((w) => w.id);
  };
  const inMemory = (shape: object) => (toList(rows as ObjectLiteral[], shape as never).data as AffixWord[]).map((w) => w.id);

  for (const operator of operators) {
    for (const needle of needles) {
      it(`${operator} ${JSON.stringify(needle)} keeps the rows the in-memory target keeps`, async () => {
        const shape = filterOf(operator, [needle]);
        assert.deepEqual(await ids(shape), inMemory(shape));
      });
    }
  }

  // The in-memory answers above are the oracle; these pin what they are, so a change there shows.
  it("a trailing space in the text is a character: \"ab \" does not end with \"ab\"; a needle's own is trimmed (2.1.5)", async () => {
    assert.deepEqual(await ids(filterOf("IEndsWith", ["ab"])), [1, 5]);
    assert.deepEqual(await ids(filterOf("INotEndsWith", ["b"])), [2, 3, 4, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]);
    assert.deepEqual(await ids(filterOf("IStartsWith", ["ab "])), [1, 2, 3, 4]);
  });

  it("a needle longer than the text matches nothing, and its negation keeps every non-null text", async () => {
    assert.deepEqual(await ids(filterOf("IStartsWith", ["ab x and more"])), []);
    assert.deepEqual(await ids(filterOf("INotEndsWith", ["ab x and more"])), rows.filter((r) => r.text !== null).map((r) => r.id));
  });

  it("final sigma folds to sigma at either end, and a character outside the BMP is one character", async () => {
    assert.deepEqual(await ids(filterOf("IEndsWith", ["\u039F\u03A3"])), [9, 10, 11]);
    assert.deepEqual(await ids(filterOf("IStartsWith", ["\u{1D538}B"])), [12, 13]);
    assert.deepEqual(await ids(filterOf("IEndsWith", ["c\u{1F600}"])), [13]);
  });

  it("wildcards and the escape character are plain text", async () => {
    assert.deepEqual(await ids(filterOf("IStartsWith", ["50%_"])), [15]);
    assert.deepEqual(await ids(filterOf("IEndsWith", ["!"])), [15, 19]);
    assert.deepEqual(await ids(filterOf("IStartsWith", ["_"])), []);
  });

  it("ẞ and ß, İ and i fold alike at the ends", async () => {
    assert.deepEqual(await ids(filterOf("IEndsWith", ["\u1E9EE"])), [20, 21]);
    assert.deepEqual(await ids(filterOf("IStartsWith", ["\u0130"])), [22, 23]);
  });
});
