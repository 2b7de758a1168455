// docs/TRANSFORMS.md shows the strategy table with examples for every strategy; each example must
// be a row of strategy-cases.ts (same strategy, parameters, input and output), so the documentation
// is only ever what the strategies test runs. Every other document (README.md, BENCHMARKS.md,
// docs/*.md) is searched too: a copy of the table anywhere must be listed here, so it is checked.
import { expect } from "chai";
import { readdirSync, readFileSync } from "node:fs";
import { GeneralizeMode, MaskStrategy } from "../../lib/index.js";
import { strategyCases } from "./strategy-cases.js";

/** The documents that hold the strategy table (each must hold it). */
const tableDocuments = ["docs/TRANSFORMS.md"];

const read = (name: string) => readFileSync(new URL(`../../../${name}`, import.meta.url), "utf8");
const documents = tableDocuments.map((name) => ({ name, text: read(name) }));
/** Every Markdown document of the repository's root and docs/. */
const allDocuments = [
  ...readdirSync(new URL("../../../", import.meta.url)).filter((f) => f.endsWith(".md")),
  ...readdirSync(new URL("../../../docs/", import.meta.url)).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`),
];
/** The strategy table's header starts so (BENCHMARKS.md has a table of its own whose header starts "| Strategy | Call |"). */
const header = "| Strategy | Options";
const hasStrategyTable = (text: string) => text.startsWith(header) || text.includes(`\n${header}`);

describe("the documents that hold a strategy table", () => {
  it("are exactly the ones this test checks", () => {
    expect(allDocuments, "README.md and docs/TRANSFORMS.md are searched").to.include.members(["README.md", "docs/TRANSFORMS.md"]);
    expect(allDocuments.filter((name) => hasStrategyTable(read(name))).sort()).to.deep.equal([...tableDocuments].sort());
  });
});

/** How the document writes a value: a Date as "Date <ISO>", anything else as JSON (or the row's own display text). */
const display = (value: unknown, shown: string | undefined) => shown ?? (value instanceof Date ? `Date ${value.toISOString()}` : JSON.stringify(value));

interface DocRow {
  readonly name: string;
  readonly examples: { params: string; input: string; output: string }[];
  readonly cell: string;
}

/** The rows of the table whose header starts "| Strategy | Options" (up to the first line that is not a table row). */
function strategyRows(doc: string): DocRow[] {
  const start = doc.indexOf(`\n${header}`);
  if (start < 0) return [];
  const table = doc.slice(start + 1).split("\n");
  const lines = table.slice(0, table.findIndex((line) => !line.startsWith("|"))).filter((line) => line.startsWith("| ") && !line.startsWith("| Strategy "));
  return lines.map((line) => {
    const cells = line.slice(2, -2).split(" | ");
    const cell = cells[3] ?? "";
    const examples = cell.split("<br>").flatMap((item) => {
      const m = /^`(.*)` · `(.*)` → `(.*)`$/.exec(item.trim());
      return m ? [{ params: m[1]!, input: m[2]!, output: m[3]! }] : [];
    });
    return { name: cells[0]!, examples, cell };
  });
}

for (const { name: document, text: doc } of documents) describe(`${document}: every example of the strategy table is a tested row of strategy-cases.ts`, () => {
  const rows = strategyRows(doc);

  it("has a row for every MaskStrategy and GeneralizeMode member, QpTruncate, QpFormat, QpDefault and QpMutate", () => {
    expect(rows, `${document} has no table whose header starts "${header}"`).to.not.be.empty;
    const names = rows.map((r) => r.name);
    for (const strategy of Object.values(MaskStrategy)) expect(names).to.include(`MaskStrategy ${strategy}`);
    for (const mode of Object.values(GeneralizeMode)) expect(names).to.include(`GeneralizeMode ${mode}`);
    for (const decorator of ["QpTruncate", "QpFormat", "QpDefault", "QpMutate"]) expect(names).to.include(decorator);
  });

  for (const row of rows) {
    it(`${row.name}: its examples are rows of the strategy table`, () => {
      if (row.name === "MaskStrategy Tokenize") {
        expect(row.examples, "tokens are random: no fixed example").to.deep.equal([]);
        return;
      }
      expect(row.examples.length, `examples of ${row.name}: ${row.cell}`).to.be.within(row.name === "Chain" ? 1 : 2, 3);
      expect(row.examples.length, `every item of ${row.name}'s examples reads as \`parameters\` · \`input\` → \`output\`: ${row.cell}`).to.equal(row.cell.split("<br>").length);
      for (const example of row.examples) {
        const found = strategyCases.find((c) => c.what === row.name && c.params === example.params && display(c.input, c.showInput) === example.input && display(c.output, c.showOutput) === example.output);
        expect(found, `${row.name} · ${example.params} · ${example.input} → ${example.output} is not a row of strategy-cases.ts`).to.not.equal(undefined);
      }
    });
  }
});
