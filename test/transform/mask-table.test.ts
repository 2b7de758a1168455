// A mask strategy is its name (MaskStrategy), its row (maskStrategies, lib/transform/strategies.ts)
// and its function; its options' checks come from their kinds (lib/shapes/mask-options.ts), what
// it needs from the row. These cases show each of those facts is read from the tables.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { MaskStrategy } from "../../lib/shapes/policy-enums.js";
import { maskOptionKinds, type MaskOptionName } from "../../lib/shapes/mask-options.js";
import { maskStrategies } from "../../lib/transform/strategies.js";
import { maskOptionsProblem } from "../../lib/transform/mask-checks.js";
import { maskNeedsProblem } from "../../lib/transform/apply.js";
import type { MaskOptions } from "../../lib/registry/qp-registry.js";
import { PolicyErrorCode } from "../../lib/errors/policy-exception.js";

const optionNames = Object.keys(maskOptionKinds) as MaskOptionName[];
const doc = readFileSync(new URL("../../../docs/TRANSFORMS.md", import.meta.url), "utf8");
/** The Options cell of a strategy's row in docs/TRANSFORMS.md. */
const optionsCell = (strategy: MaskStrategy) => new RegExp(`^\\| MaskStrategy ${strategy} \\| ([^|]*) \\|`, "m").exec(doc)?.[1] ?? "";

describe("Mask strategy table", () => {
  it("has a row for every strategy, reading only known options", () => {
    expect(Object.keys(maskStrategies).sort()).to.deep.equal(Object.values(MaskStrategy).sort());
    for (const [strategy, row] of Object.entries(maskStrategies)) {
      for (const option of row.reads) expect(optionNames, strategy).to.include(option);
      // A strategy rewrites text itself, or the chain applies it (Hash, Tokenize, Null).
      expect(row.mask === null, strategy).to.equal([MaskStrategy.Hash, MaskStrategy.Tokenize, MaskStrategy.Null].includes(strategy as MaskStrategy));
    }
  });

  it("every option docs/TRANSFORMS.md gives a strategy is one its row reads, and its needs are the row's", () => {
    for (const strategy of Object.values(MaskStrategy)) {
      const cell = optionsCell(strategy);
      expect(cell, strategy).to.not.equal("");
      const named = optionNames.filter((option) => cell.includes(`\`${option}\``) || cell.includes(`\`${option}:`));
      for (const option of named) expect(maskStrategies[strategy].reads, `${strategy} reads ${option}`).to.include(option);
      expect(cell.includes("needs `hashSalt`"), strategy).to.equal(maskStrategies[strategy].needs === "hashSalt");
      expect(cell.includes("needs `tokenVault`"), strategy).to.equal(maskStrategies[strategy].needs === "vault");
    }
  });

  it("what a strategy needs is its row's needs", () => {
    for (const strategy of Object.values(MaskStrategy)) {
      const problem = maskNeedsProblem(strategy, { hashSalt: undefined, vault: undefined }, "probe");
      const need = maskStrategies[strategy].needs;
      const expected = need === "hashSalt" ? PolicyErrorCode.MissingHashSalt : need === "vault" ? PolicyErrorCode.MissingTokenVault : null;
      expect(problem?.code ?? null, strategy).to.equal(expected);
      expect(maskNeedsProblem(strategy, { hashSalt: "0123456789abcdef", vault: {} as never }, "probe"), strategy).to.equal(null);
    }
  });

  it("each option is checked by its kind, on every strategy; a pattern is required where the row reads one", () => {
    for (const strategy of Object.values(MaskStrategy)) {
      const base = { strategy, ...(maskStrategies[strategy].reads.includes("pattern") ? { pattern: "a" } : {}) } as MaskOptions;
      expect(maskOptionsProblem(base), strategy).to.equal(null);
      for (const option of optionNames) {
        const kind = maskOptionKinds[option];
        const bad = { count: -1, grapheme: "ab", pattern: "", flag: "yes", text: 1 }[kind];
        const code = maskOptionsProblem({ ...base, [option]: bad } as MaskOptions)?.code ?? null;
        const expected = kind === "count" ? "InvalidKeepCount" : kind === "grapheme" ? "InvalidMaskChar"
          : kind === "pattern" && maskStrategies[strategy].reads.includes(option) ? "MissingPattern" : null;
        expect(code, `${strategy} ${option}`).to.equal(expected);
      }
    }
  });

  it("only a strategy whose row says it emits no text (Null) goes on a non-text member", () => {
    expect(Object.values(MaskStrategy).filter((s) => !maskStrategies[s].emitsText)).to.deep.equal([MaskStrategy.Null]);
  });
});
