// A Regex mask runs on every value of a column: a pattern prone to catastrophic backtracking
// could hang the process, so such patterns are refused when the decorator is read, and values
// are bounded in length. The rules (docs/TRANSFORMS.md, "Regex safety"):
//  1. the pattern compiles with the "u" flag;
//  2. no backreference (\1, \k<name>): matching them is not a regular problem;
//  3. no repetition that may run more than once (*, +, {n,m} with m > 1) around a part that holds
//     a repetition of variable count (*, +, ?, {n,m} with n < m) or an alternation: (a+)+, (a|a)*,
//     (\d+){2,} (exponential);
//  4. no unbounded repetition A (*, +, {n,}) that can be followed, through parts that match the
//     empty string or characters A also matches, by another unbounded repetition over characters
//     A matches: \w*\w*!, \d+\d+x, .*=.* (polynomial). A mandatory character A cannot match
//     separates them: \d+-\d+ and [^=]*=.* are accepted.
import { type CharSet, type RegexNode, intersects, parsePattern, union } from "./regex-syntax.js";

export const maxRegexInput = 10_000;

/** Why a pattern is refused, or null. */
export function unsafePatternReason(pattern: string): string | null {
  try {
    new RegExp(pattern, "gu");
  } catch (error) {
    return `it does not compile: ${(error as Error).message}`;
  }
  const tree = parsePattern(pattern);
  return backreference(tree) ?? nestedRepetition(tree, false) ?? adjacentRepetition(tree, []);
}

const children = (node: RegexNode): readonly RegexNode[] =>
  node.type === "seq" ? node.items : node.type === "alt" ? node.options : node.type === "repeat" ? [node.body] : node.type === "assert" && node.body ? [node.body] : [];

function backreference(node: RegexNode): string | null {
  if (node.type === "backreference") return `backreferences (${node.text}) can backtrack without bound`;
  for (const child of children(node)) {
    const reason = backreference(child);
    if (reason) return reason;
  }
  return null;
}

/** Rule 3: inside a repetition that may run more than once, no variable repetition and no alternation. */
function nestedRepetition(node: RegexNode, repeated: boolean): string | null {
  if (repeated && node.type === "alt") return "a repeated group contains an alternation (exponential backtracking)";
  if (repeated && node.type === "repeat" && node.min !== node.max) return "a repeated group contains a repetition of variable count (exponential backtracking)";
  for (const child of children(node)) {
    const reason = nestedRepetition(child, repeated || (node.type === "repeat" && node.max > 1));
    if (reason) return reason;
  }
  return null;
}

/** Every character a node can match. */
function charactersOf(node: RegexNode): CharSet {
  if (node.type === "char") return node.set;
  if (node.type === "assert" || node.type === "backreference") return [];
  return union(...children(node).map(charactersOf));
}

/** Can the node match a string (possibly empty) made only of characters in `set`? */
function passes(node: RegexNode, set: CharSet): boolean {
  switch (node.type) {
    case "char": return intersects(node.set, set);
    case "seq": return node.items.every((item) => passes(item, set));
    case "alt": return node.options.some((option) => passes(option, set));
    case "repeat": return node.min === 0 || passes(node.body, set);
    case "assert": return true;
    case "backreference": return true;
  }
}

/** Reading only characters in `set` from the node's start, can an unbounded repetition over such characters be entered? */
function reaches(node: RegexNode, set: CharSet): boolean {
  switch (node.type) {
    case "seq":
      for (const item of node.items) {
        if (reaches(item, set)) return true;
        if (!passes(item, set)) return false;
      }
      return false;
    case "alt": return node.options.some((option) => reaches(option, set));
    case "repeat": return (node.max === Infinity && charactersOf(node.body).length > 0 && passes(node.body, set)) || reaches(node.body, set);
    default: return false;
  }
}

/** Rule 4: each unbounded repetition against what follows it (`next`: the nodes after it, innermost first). */
function adjacentRepetition(node: RegexNode, next: readonly RegexNode[]): string | null {
  if (node.type === "repeat" && node.max === Infinity) {
    const set = charactersOf(node.body);
    for (const following of next) {
      if (reaches(following, set)) return "two unbounded repetitions over the same characters can follow each other (polynomial backtracking)";
      if (!passes(following, set)) break;
    }
  }
  if (node.type === "seq") {
    for (let i = 0; i < node.items.length; i++) {
      const reason = adjacentRepetition(node.items[i]!, [...node.items.slice(i + 1), ...next]);
      if (reason) return reason;
    }
    return null;
  }
  // A lookaround's body is matched on its own; the body of a repetition is followed by what follows the repetition.
  const after = node.type === "assert" ? [] : next;
  for (const child of children(node)) {
    const reason = adjacentRepetition(child, after);
    if (reason) return reason;
  }
  return null;
}
