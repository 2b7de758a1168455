/**
 * The case folding of every `I…` operator on every target, as the databases do it: one lower-case
 * character per character (PostgreSQL's and MariaDB's lower() map İ to i, where JavaScript's full
 * mapping gives i + U+0307, the one such mapping; found by the fuzzer, issue #18), and final
 * sigma as σ. The in-memory target folds with it, SQLite through a registered function, and the
 * other databases' lower() agree with it on every letter they know (test/engine/case-folding.test.ts).
 */
export const foldCase = (text: string) => text.replaceAll("\u0130", "i").toLowerCase().replaceAll("ς", "σ");
