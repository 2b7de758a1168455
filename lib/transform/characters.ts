// Text is masked by user-perceived characters (grapheme clusters): an emoji, a letter with
// combining marks or a right-to-left letter is one character, never bytes or UTF-16 units.
const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * Code units that are each a whole character: every one of them has the grapheme break property
 * Other, Control, CR or LF (Latin, Greek and Cyrillic letters without combining marks, ASCII
 * controls), so a text made only of them breaks between every two units, except CR LF. Outside
 * these ranges (combining marks, surrogates, ZWJ, variation selectors, Hangul jamo, Indic
 * scripts...) the segmenter decides. test/transform/characters.test.ts checks every unit here
 * against Intl.Segmenter.
 */
const oneUnitCharacters = /^[\0-\u02ff\u0370-\u0482\u048a-\u052f\u1e00-\u1eff]*$/;

/** True when each UTF-16 unit of `text` is one character (no segmentation needed). */
export function isUnitSegmented(text: string): boolean {
  return oneUnitCharacters.test(text) && !text.includes("\r\n");
}

/** A text indexed by characters: `length` counts them, `slice` cuts between them. */
export interface CharacterView {
  readonly length: number;
  slice(start: number, end?: number): string;
}

/** The characters of `text` by Intl.Segmenter, whatever the text. */
export function segmentCharacters(text: string): string[] {
  return Array.from(segmenter.segment(text), (s) => s.segment);
}

/** `text` itself when each unit is a character (the fast path), else a view over its grapheme clusters. */
export function characterView(text: string): CharacterView {
  if (isUnitSegmented(text)) return text;
  const segments = segmentCharacters(text);
  return { length: segments.length, slice: (start, end) => segments.slice(start, end).join("") };
}

/** Where the character after the first `count` begins (a UTF-16 offset), or null when `text` has no more than `count` characters. Segments only what it reads. */
export function offsetAfter(text: string, count: number): number | null {
  if (isUnitSegmented(text)) return text.length > count ? count : null;
  let seen = 0;
  for (const { index } of segmenter.segment(text)) {
    if (seen === count) return index;
    seen++;
  }
  return null;
}

export function characters(text: string): string[] {
  return isUnitSegmented(text) ? text.split("") : segmentCharacters(text);
}
