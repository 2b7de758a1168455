// A small parser of JavaScript patterns in Unicode mode ("u"), for the safety checks of
// safe-regex.ts only: it runs on patterns `new RegExp(pattern, "u")` already accepted, and keeps
// what backtracking depends on (sequences, alternations, repetitions, the characters each atom
// can match). Lookarounds and anchors match no character.

/** Sorted, disjoint, non-adjacent code point ranges [lo, hi]. */
export type CharSet = readonly (readonly [number, number])[];

export type RegexNode =
  | { readonly type: "char"; readonly set: CharSet }
  | { readonly type: "seq"; readonly items: readonly RegexNode[] }
  | { readonly type: "alt"; readonly options: readonly RegexNode[] }
  | { readonly type: "repeat"; readonly body: RegexNode; readonly min: number; readonly max: number }
  /** ^ $ \b \B (body null) and lookarounds: they match no character. */
  | { readonly type: "assert"; readonly body: RegexNode | null }
  | { readonly type: "backreference"; readonly text: string };

const maxCodePoint = 0x10ffff;

export function union(...sets: CharSet[]): CharSet {
  const all = sets.flat().map(([lo, hi]) => [lo, hi] as [number, number]).sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const range of all) {
    const last = merged[merged.length - 1];
    if (last && range[0] <= last[1] + 1) last[1] = Math.max(last[1], range[1]);
    else merged.push(range);
  }
  return merged;
}

export function complement(set: CharSet): CharSet {
  const result: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of union(set)) {
    if (lo > next) result.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= maxCodePoint) result.push([next, maxCodePoint]);
  return result;
}

export function intersects(a: CharSet, b: CharSet): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i]![1] < b[j]![0]) i++;
    else if (b[j]![1] < a[i]![0]) j++;
    else return true;
  }
  return false;
}

const single = (c: number): CharSet => [[c, c]];
const anyChar: CharSet = [[0, maxCodePoint]];
const digit: CharSet = [[0x30, 0x39]];
const word: CharSet = union([[0x30, 0x39]], [[0x41, 0x5a]], [[0x5f, 0x5f]], [[0x61, 0x7a]]);
const space: CharSet = union(
  [[0x09, 0x0d]], single(0x20), single(0xa0), single(0x1680), [[0x2000, 0x200a]], [[0x2028, 0x2029]], single(0x202f), single(0x205f), single(0x3000), single(0xfeff),
);

const propertySets = new Map<string, CharSet>();

/** The code points of \p{…} / \P{…}, read from the engine itself once per property (cached). */
function propertySet(escape: string): CharSet {
  let set = propertySets.get(escape);
  if (!set) {
    const test = new RegExp(escape, "uy");
    const ranges: [number, number][] = [];
    let start = -1;
    for (let c = 0; c <= maxCodePoint + 1; c++) {
      test.lastIndex = 0;
      const member = c <= maxCodePoint && test.test(String.fromCodePoint(c));
      if (member && start < 0) start = c;
      else if (!member && start >= 0) {
        ranges.push([start, c - 1]);
        start = -1;
      }
    }
    propertySets.set(escape, (set = ranges));
  }
  return set;
}

class Parser {
  private i = 0;

  constructor(private readonly source: string) {}

  parse(): RegexNode {
    const node = this.disjunction();
    if (this.i < this.source.length) throw new Error(`unexpected "${this.source[this.i]}" at ${this.i}`);
    return node;
  }

  private peek(offset = 0): string | undefined {
    return this.source[this.i + offset];
  }

  private eat(text: string): boolean {
    if (!this.source.startsWith(text, this.i)) return false;
    this.i += text.length;
    return true;
  }

  private disjunction(): RegexNode {
    const options = [this.alternative()];
    while (this.eat("|")) options.push(this.alternative());
    return options.length === 1 ? options[0]! : { type: "alt", options };
  }

  private alternative(): RegexNode {
    const items: RegexNode[] = [];
    while (this.i < this.source.length && this.peek() !== "|" && this.peek() !== ")") items.push(this.term());
    return items.length === 1 ? items[0]! : { type: "seq", items };
  }

  private term(): RegexNode {
    const atom = this.atom();
    if (atom.type === "assert") return atom;
    return this.quantified(atom);
  }

  private quantified(body: RegexNode): RegexNode {
    let min: number;
    let max: number;
    if (this.eat("*")) [min, max] = [0, Infinity];
    else if (this.eat("+")) [min, max] = [1, Infinity];
    else if (this.eat("?")) [min, max] = [0, 1];
    else {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.i));
      if (!m) return body;
      this.i += m[0].length;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
    }
    this.eat("?"); // lazy or greedy: the same paths, tried in another order
    return { type: "repeat", body, min, max };
  }

  private atom(): RegexNode {
    const c = this.peek()!;
    if (c === "^" || c === "$") {
      this.i++;
      return { type: "assert", body: null };
    }
    if (c === ".") {
      this.i++;
      return { type: "char", set: anyChar };
    }
    if (c === "[") return { type: "char", set: this.characterClass() };
    if (c === "(") return this.group();
    if (c === "\\") {
      if (this.peek(1) === "b" || this.peek(1) === "B") {
        this.i += 2;
        return { type: "assert", body: null };
      }
      const backreference = /^\\(?:[1-9]\d*|k<[^>]*>)/.exec(this.source.slice(this.i));
      if (backreference) {
        this.i += backreference[0].length;
        return { type: "backreference", text: backreference[0] };
      }
      return { type: "char", set: this.escape() };
    }
    const code = this.source.codePointAt(this.i)!;
    this.i += code > 0xffff ? 2 : 1;
    return { type: "char", set: single(code) };
  }

  private group(): RegexNode {
    this.i++; // (
    let lookaround = false;
    if (this.eat("?=") || this.eat("?!") || this.eat("?<=") || this.eat("?<!")) lookaround = true;
    else if (this.eat("?<")) this.i = this.source.indexOf(">", this.i) + 1; // a named group
    else if (this.peek() === "?") {
      // (?: and modifier groups (?i:…), (?-i:…): a case-insensitive part may match any letter's variants, so its characters are widened below.
      const m = /^\?([a-z]*)(?:-([a-z]*))?:/.exec(this.source.slice(this.i))!;
      this.i += m[0].length;
      if (m[1]!.includes("i")) {
        const body = this.disjunction();
        this.eat(")");
        return widen(body);
      }
    }
    const body = this.disjunction();
    this.eat(")");
    return lookaround ? { type: "assert", body } : body;
  }

  /** One escape after "\\": its characters ("\\b" is only reached in a class: backspace). */
  private escape(): CharSet {
    this.i++; // backslash
    const c = this.peek()!;
    this.i++;
    switch (c) {
      case "d": return digit;
      case "D": return complement(digit);
      case "w": return word;
      case "W": return complement(word);
      case "s": return space;
      case "S": return complement(space);
      case "p":
      case "P": {
        const end = this.source.indexOf("}", this.i);
        const escape = `\\${c}${this.source.slice(this.i, end + 1)}`;
        this.i = end + 1;
        return propertySet(escape);
      }
      case "f": return single(0x0c);
      case "n": return single(0x0a);
      case "r": return single(0x0d);
      case "t": return single(0x09);
      case "v": return single(0x0b);
      case "b": return single(0x08);
      case "0": return single(0);
      case "c": {
        const letter = this.source.charCodeAt(this.i);
        this.i++;
        return single(letter % 32);
      }
      case "x": {
        const code = parseInt(this.source.slice(this.i, this.i + 2), 16);
        this.i += 2;
        return single(code);
      }
      case "u": return single(this.unicodeEscape());
      default: return single(c.codePointAt(0)!); // an escaped syntax character, "/" or (in a class) "-"
    }
  }

  /** After "\\u": {H…} or HHHH, joining an escaped surrogate pair into one code point. */
  private unicodeEscape(): number {
    if (this.eat("{")) {
      const end = this.source.indexOf("}", this.i);
      const code = parseInt(this.source.slice(this.i, end), 16);
      this.i = end + 1;
      return code;
    }
    const code = parseInt(this.source.slice(this.i, this.i + 4), 16);
    this.i += 4;
    const low = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(this.source.slice(this.i));
    if (code >= 0xd800 && code <= 0xdbff && low) {
      this.i += low[0].length;
      return 0x10000 + ((code - 0xd800) << 10) + (parseInt(low[1]!, 16) - 0xdc00);
    }
    return code;
  }

  private characterClass(): CharSet {
    this.i++; // [
    const negated = this.eat("^");
    const parts: CharSet[] = [];
    while (this.peek() !== "]") {
      const from = this.classAtom();
      if (this.peek() === "-" && this.peek(1) !== "]" && from.length === 1 && from[0]![0] === from[0]![1]) {
        const save = this.i;
        this.i++;
        const to = this.classAtom();
        if (to.length === 1 && to[0]![0] === to[0]![1]) {
          parts.push([[from[0]![0], to[0]![0]]]);
          continue;
        }
        this.i = save;
      }
      parts.push(from);
    }
    this.i++; // ]
    const set = union(...parts);
    return negated ? complement(set) : set;
  }

  private classAtom(): CharSet {
    if (this.peek() === "\\") return this.escape();
    const code = this.source.codePointAt(this.i)!;
    this.i += code > 0xffff ? 2 : 1;
    return single(code);
  }
}

/** Every character of a case-insensitive part: any character (a safe over-approximation). */
function widen(node: RegexNode): RegexNode {
  switch (node.type) {
    case "char": return { type: "char", set: anyChar };
    case "seq": return { type: "seq", items: node.items.map(widen) };
    case "alt": return { type: "alt", options: node.options.map(widen) };
    case "repeat": return { ...node, body: widen(node.body) };
    case "assert": return node.body ? { type: "assert", body: widen(node.body) } : node;
    case "backreference": return node;
  }
}

/** The syntax tree of a pattern that compiles with the "u" flag. */
export function parsePattern(pattern: string): RegexNode {
  return new Parser(pattern).parse();
}
