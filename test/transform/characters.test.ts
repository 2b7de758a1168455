// The two paths of lib/transform/characters.ts: text whose every UTF-16 unit is one character
// (Latin, Greek, Cyrillic without combining marks, ASCII controls) is cut per unit; any other text
// goes through Intl.Segmenter. Every unit of the fast path is checked against the segmenter, and
// the masks and QpTruncate give, on random texts of both kinds, what definitions written here on
// the segmenter's own characters give.
import { expect } from "chai";
import { MaskStrategy } from "../../lib/index.js";
import { characterView, characters, isUnitSegmented, offsetAfter, segmentCharacters } from "../../lib/transform/characters.js";
import { applyTextMask, truncate } from "../../lib/transform/strategies.js";

/** The ranges the fast path claims (see characters.ts). */
const fastRanges: [number, number][] = [[0x0000, 0x02ff], [0x0370, 0x0482], [0x048a, 0x052f], [0x1e00, 0x1eff]];
const fastUnits = fastRanges.flatMap(([lo, hi]) => Array.from({ length: hi - lo + 1 }, (_, i) => String.fromCharCode(lo + i)));

/** Deterministic random numbers (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const family = "👩‍👩‍👧";
/** Pieces that need the segmenter: combining marks, emoji (ZWJ, skin tone, flag, variation selector), Hangul jamo, Devanagari. */
const slowPieces = ["e\u0301", "\u0301", "\u0483", family, "👍🏽", "🇨🇭", "❤\ufe0f", "\u200d", "\u1100\u1161", "क्षि", "😀", "\ud800"];

function randomText(next: () => number, length: number, slow: boolean): string {
  let text = "";
  for (let i = 0; i < length; i++) {
    const r = next();
    if (slow && r < 0.2) text += slowPieces[Math.floor(next() * slowPieces.length)];
    else if (r < 0.3) text += ["\r", "\n", "@", "-", " ", "5"][Math.floor(next() * 6)];
    else text += fastUnits[Math.floor(next() * fastUnits.length)];
  }
  return text;
}

// ---- the definitions, on the segmenter's characters -------------------------------------------

const seg = segmentCharacters;
const full = (text: string) => "*".repeat(seg(text).length);
function partial(text: string, keepStart: number, keepEnd: number): string {
  const chars = seg(text);
  if (chars.length <= keepStart + keepEnd) return full(text);
  return chars.slice(0, keepStart).join("") + "*".repeat(chars.length - keepStart - keepEnd) + chars.slice(chars.length - keepEnd).join("");
}
function email(text: string): string {
  const at = text.lastIndexOf("@");
  if (at <= 0) return full(text);
  const local = seg(text.slice(0, at));
  return local[0] + "*".repeat(local.length - 1) + text.slice(at);
}
function cut(text: string, length: number): string {
  const chars = seg(text);
  return chars.length <= length ? text : `${chars.slice(0, length).join("")}...`;
}

describe("Characters: the per-unit fast path and Intl.Segmenter agree", () => {
  it(`every one of the ${fastUnits.length} units the fast path claims is one character between letters, and next to itself`, () => {
    const disagree: string[] = [];
    for (const unit of fastUnits) {
      for (const text of [`a${unit}a`, `${unit}${unit}`]) {
        if (unit === "\r" && text === "\r\r") continue;
        if (!isUnitSegmented(text) || JSON.stringify(characters(text)) !== JSON.stringify(seg(text)) || seg(text).length !== text.length) disagree.push(`U+${unit.charCodeAt(0).toString(16)}`);
      }
    }
    expect(disagree).to.deep.equal([]);
  });

  it("CR LF is one character: a text holding it takes the segmenter", () => {
    expect(isUnitSegmented("a\r\nb")).to.equal(false);
    expect(characters("a\r\nb")).to.deep.equal(["a", "\r\n", "b"]);
    expect(isUnitSegmented("a\n\rb")).to.equal(true);
    expect(characters("a\n\rb")).to.deep.equal(["a", "\n", "\r", "b"]);
  });

  it("combining marks, surrogates, ZWJ, variation selectors, Hangul jamo and Indic scripts take the segmenter", () => {
    for (const piece of slowPieces) expect(isUnitSegmented(`ab${piece}`), JSON.stringify(piece)).to.equal(false);
    expect(characters(`Ze\u0301${family}!`)).to.deep.equal(["Z", "e\u0301", family, "!"]);
  });

  it("characterView and offsetAfter cut where the segmenter does, on both paths", () => {
    const next = random(11);
    for (let i = 0; i < 400; i++) {
      const text = randomText(next, Math.floor(next() * 12), i % 2 === 1);
      const chars = seg(text);
      const view = characterView(text);
      expect(view.length, JSON.stringify(text)).to.equal(chars.length);
      for (let k = 0; k <= chars.length; k++) {
        expect(view.slice(0, k), JSON.stringify(text)).to.equal(chars.slice(0, k).join(""));
        expect(view.slice(k), JSON.stringify(text)).to.equal(chars.slice(k).join(""));
        expect(offsetAfter(text, k), JSON.stringify(text)).to.equal(k < chars.length ? chars.slice(0, k).join("").length : null);
      }
    }
  });

  for (const slow of [false, true]) {
    it(`Full, Partial, Email and QpTruncate on 2,000 random ${slow ? "texts with emoji and combining marks (segmenter)" : "Latin/Greek/Cyrillic texts (fast path)"} match their definitions`, () => {
      const next = random(slow ? 2 : 1);
      let fastPathTexts = 0;
      for (let i = 0; i < 2000; i++) {
        const text = randomText(next, 1 + Math.floor(next() * 24), slow);
        if (isUnitSegmented(text)) fastPathTexts++;
        const where = JSON.stringify(text);
        expect(applyTextMask(text, { strategy: MaskStrategy.Full }, null), where).to.equal(full(text));
        expect(applyTextMask(text, { strategy: MaskStrategy.Partial, keepStart: 2, keepEnd: 1 }, null), where).to.equal(partial(text, 2, 1));
        expect(applyTextMask(text, { strategy: MaskStrategy.Email }, null), where).to.equal(email(text));
        expect(truncate(text, 5, "..."), where).to.equal(cut(text, 5));
      }
      // Most texts take the path under test (a random CR LF sends a few fast-path texts to the segmenter).
      if (slow) expect(fastPathTexts).to.be.below(500);
      else expect(fastPathTexts).to.be.above(1800);
    });
  }
});
