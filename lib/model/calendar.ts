// Calendar arithmetic shared by request values and row values: both read ISO-8601 texts digit by
// digit in their common forms and must agree on which dates exist.

/** The number read from `count` decimal digits of `text` at `from`, or -1 if any is not a digit. */
export function digitsAt(text: string, from: number, count: number): number {
  let n = 0;
  for (let i = from; i < from + count; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/**
 * The UTC instant of a calendar date and time in whole milliseconds, or null when the date or
 * time does not exist, or the year is below 100 (Date.UTC reads years 0–99 as 19xx).
 */
export function calendarTime(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): Date | null {
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  const days = mo === 2 ? (leap ? 29 : 28) : mo === 4 || mo === 6 || mo === 9 || mo === 11 ? 30 : 31;
  if (y < 100 || mo < 1 || mo > 12 || d < 1 || d > days || h > 23 || mi > 59 || s > 59) return null;
  return new Date(Date.UTC(y, mo - 1, d, h, mi, s, ms));
}
