// Text is masked by user-perceived characters (grapheme clusters): an emoji, a letter with
// combining marks or a right-to-left letter is one character, never bytes or UTF-16 units.
const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

export function characters(text: string): string[] {
  // ASCII needs no segmentation: a fast path for the common case.
  if (/^[\x00-\x7f]*$/.test(text)) return text.split("");
  return Array.from(segmenter.segment(text), (s) => s.segment);
}
