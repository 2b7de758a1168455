// Date and DateTime values are read by two parsers: a digit-by-digit one for the forms clients
// send nearly always, and the regular expression for everything else. They must agree on every
// text the first one reads (the same instant, or both refuse), so the fast one is compared with
// the general one on generated texts, valid and not, and on the edges of the calendar.
import assert from "node:assert/strict";
import { parseAnyInstant, parseCommonInstant, parseInstant } from "../../lib/resolve/coerce-values.js";

/** A deterministic generator, so a failure names a reproducible input. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const same = (a: Date | null | undefined, b: Date | null) => (a === null || a === undefined ? a === b : b !== null && a.getTime() === b.getTime());

describe("Instants: the common forms read digit by digit agree with the general reading", () => {
  it("on generated texts of the common lengths, valid and not", () => {
    const next = random(8601);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const digits = (n: number) => Array.from({ length: n }, () => pick("0123456789".split(""))).join("");
    let read = 0;
    for (let i = 0; i < 20_000; i++) {
      const date = `${pick(["0000", "0099", "0100", "1970", "2000", "2024", "2023", "9999", digits(4), "20a4"])}${pick(["-", "/"])}${pick(["00", "01", "02", "12", "13", digits(2)])}-${pick(["00", "01", "28", "29", "30", "31", "32", digits(2)])}`;
      const time = `${pick(["T", "T", "t", " "])}${pick(["00", "23", "24", digits(2)])}:${pick(["00", "59", "60", digits(2)])}${pick([":", ":", "-"])}${pick(["00", "59", "60", digits(2)])}`;
      const text = pick([date, date + time, `${date}${time}${pick(["Z", "z", "+"])}`, `${date}${time}${pick([".", ","])}${pick([digits(3), "12a"])}${pick(["Z", "z", "+"])}`]);
      const common = parseCommonInstant(text);
      const general = parseAnyInstant(text);
      if (common !== undefined) {
        read++;
        assert.ok(same(common, general), `${text}: ${String(common?.toISOString())} vs ${String(general?.toISOString())}`);
      }
      assert.ok(same(parseInstant(text), general), text);
    }
    assert.ok(read > 2_500, `only ${read} texts took the common path`);
  });

  it("on the edges of the calendar and the clock", () => {
    const texts = [
      "2024-02-29", "2023-02-29", "2000-02-29", "1900-02-29", "2024-04-31", "2024-12-31T23:59:59.999Z", "2024-12-31T24:00:00Z",
      "2024-01-01T00:60:00", "2024-01-01T00:00:60Z", "0099-01-01", "0100-01-01", "1970-01-01T00:00:00.000Z", "9999-12-31T23:59:59Z",
    ];
    for (const text of texts) {
      const common = parseCommonInstant(text);
      assert.notEqual(common, undefined, `${text} should take the common path`);
      assert.ok(same(common, parseAnyInstant(text)), text);
    }
    assert.equal(parseInstant("2024-02-29T10:00:00.123Z")?.toISOString(), "2024-02-29T10:00:00.123Z");
    assert.equal(parseInstant("2024-02-30"), null);
    assert.equal(parseInstant("2024-02-29T10:00:00+02:00")?.toISOString(), "2024-02-29T08:00:00.000Z");
  });
});
