// A Regex mask runs on every value of a column: a pattern prone to catastrophic backtracking
// could hang the process, so such patterns are refused when the decorator is read, and values
// are bounded in length.
export const maxRegexInput = 10_000;

/** Why a pattern is refused, or null. Nested quantifiers and quantified alternations are refused. */
export function unsafePatternReason(pattern: string): string | null {
  try {
    new RegExp(pattern, "gu");
  } catch (error) {
    return `it does not compile: ${(error as Error).message}`;
  }
  if (/\\\d/.test(pattern)) return "backreferences can backtrack without bound";
  // A group that itself contains a quantifier (or an alternation) and is quantified: (a+)+, (a|a)*, (?:x*y?)+
  const stack: { quantified: boolean; alternation: boolean }[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "\\") {
      i++;
      continue;
    }
    if (ch === "[") {
      while (i < pattern.length && pattern[i] !== "]") i += pattern[i] === "\\" ? 2 : 1;
      continue;
    }
    if (ch === "(") stack.push({ quantified: false, alternation: false });
    else if (ch === "|" && stack.length) stack[stack.length - 1]!.alternation = true;
    else if (ch === ")") {
      const group = stack.pop();
      const next = pattern[i + 1];
      const quantified = next === "*" || next === "+" || next === "?" || next === "{";
      if (group && quantified && next !== "?" && (group.quantified || group.alternation)) return "a quantified group contains a quantifier or an alternation (catastrophic backtracking)";
      if (stack.length && (quantified || group?.quantified)) stack[stack.length - 1]!.quantified = true;
    } else if ((ch === "*" || ch === "+" || ch === "{") && stack.length) stack[stack.length - 1]!.quantified = true;
  }
  return null;
}
