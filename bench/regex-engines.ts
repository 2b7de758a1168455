// Regex mask engines side by side (issues #18 and #41): V8's RegExp (backtracking, the former
// engine, a baseline only), re2 (Google RE2, native addon, an optional peer), re2-wasm (RE2 compiled
// to WebAssembly) and re2js (a pure-JavaScript port of RE2, linear time). Load time, compile time
// per pattern and replace throughput over 100,000 values on the patterns of the regex tests
// (test/transform/regex-engine.test.ts), then RE2's worst cases.
//
//   node dist/bench/regex-engines.js [--values=100000]
//
// re2js is not a dependency of the project: the rows print where it resolves (e.g. NODE_PATH=<dir
// where `npm install re2js` ran>/node_modules). Prints a Markdown table to stdout. Not part of
// `npm run bench`: it decides a dependency, once. The figures and the decision: docs/TRANSFORMS.md,
// "Regex engine".
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";

const require = createRequire(import.meta.url);
const argument = process.argv.find((a) => a.startsWith("--values="));
const valueCount = argument ? Number(argument.slice("--values=".length)) : 100_000;

/** One engine's way of masking: compile once, then replace every match of one value. */
type Engine = { name: string; compile: (pattern: string) => (value: string, replacement: string) => string; emptyMatchSafe: boolean };

function loaded<T>(load: () => T): { value: T; ms: number } | null {
  const started = performance.now();
  try {
    const value = load();
    return { value, ms: performance.now() - started };
  } catch {
    return null;
  }
}

const native = loaded(() => require("re2") as new (pattern: string, flags: string) => RegExp);
const wasm = loaded(() => {
  const { RE2 } = require("re2-wasm") as { RE2: new (pattern: string, flags: string) => RegExp };
  new RE2("a", "u"); // the module instantiates on first use
  return RE2;
});
type Re2js = { compile(p: string): { matcher(s: string): { replaceAll(r: string): string } }; translateRegExp(p: string): string };
const re2js = loaded(() => {
  const { RE2JS } = require("re2js") as { RE2JS: Re2js };
  RE2JS.compile("a").matcher("a").replaceAll("b");
  return RE2JS;
});

const engines: Engine[] = [{ name: "V8 RegExp (backtracking)", compile: (p) => { const r = new RegExp(p, "gu"); return (v, s) => v.replace(r, s); }, emptyMatchSafe: true }];
if (native) engines.push({ name: "re2 (native)", compile: (p) => { const r = new native.value(p, "gu"); return (v, s) => v.replace(r, s); }, emptyMatchSafe: true });
// re2-wasm's global replace never ends on a pattern that matches the empty string (x*): not run there.
if (wasm) engines.push({ name: "re2-wasm", compile: (p) => { const r = new wasm.value(p, "gu"); return (v, s) => v.replace(r, s); }, emptyMatchSafe: false });
if (re2js) engines.push({ name: "re2js (pure JS)", compile: (p) => { const r = re2js.value.compile(re2js.value.translateRegExp(p)); return (v, s) => r.matcher(v).replaceAll(s); }, emptyMatchSafe: true });

/** The patterns of test/transform/regex-engine.test.ts, with values like its rows (varied by i so nothing is cached). */
const attack = `${"\\D{0,20}".repeat(7)}X`;
const workloads: { pattern: string; replacement: string; value: (i: number) => string; v8?: false }[] = [
  { pattern: attack, replacement: "#", value: (i) => `${i % 10} ${"ab".repeat(10)}X ${i % 7}`, v8: false },
  { pattern: "(a+)+b", replacement: "*", value: (i) => `${"a".repeat(1 + (i % 9))}b xb ab` },
  { pattern: "\\w*\\w*!", replacement: "!", value: (i) => `hello world ${i}!` },
  { pattern: "\\d{12}(\\d{4})", replacement: "************$1", value: (i) => `card 4${String(i).padStart(15, "0")} end` },
  { pattern: "x*", replacement: "-", value: (i) => `ab${"x".repeat(i % 3)}c` },
  { pattern: "\\p{L}.", replacement: "_", value: (i) => `a😀b é${i % 10}é` },
  { pattern: "(\\w+\\.)+test", replacement: "<$1>", value: (i) => `user${i}@mail.example.test` },
  { pattern: "(e|\\d)+", replacement: "<$1>", value: (i) => `employee${i}@example.test` },
  { pattern: "(.*)@(.*)", replacement: "<$1>", value: (i) => `first.last${i}@example.test` },
];

function time(run: () => void, repeat = 1): number {
  const started = performance.now();
  for (let i = 0; i < repeat; i++) run();
  return (performance.now() - started) / repeat;
}

/** Printed as they come: re2-wasm can abort the process when its fixed 16 MB heap is exhausted. */
const rows = { push: (line: string) => console.log(line) };
const loads = [native && `re2 ${native.ms.toFixed(1)} ms`, wasm && `re2-wasm ${wasm.ms.toFixed(1)} ms`, re2js && `re2js ${re2js.ms.toFixed(1)} ms`].filter(Boolean).join(", ");
rows.push(`Node ${process.version}; load (first compile included): ${loads}; ${valueCount.toLocaleString("en")} values per workload.`);
rows.push("");
rows.push("| pattern | engine | compile (µs, mean of 20) | replace all values (ms) | ns per value | values per second |");
rows.push("|---|---|---:|---:|---:|---:|");
for (const workload of workloads) {
  const values = Array.from({ length: valueCount }, (_, i) => workload.value(i));
  let reference: string[] | null = null;
  for (const engine of engines) {
    if (engine.name.startsWith("V8") && workload.v8 === false) continue;
    if (!engine.emptyMatchSafe && new RegExp(workload.pattern, "u").test("")) {
      rows.push(`| \`${workload.pattern}\` | ${engine.name} | not run: never ends on an empty match | | | |`);
      continue;
    }
    engine.compile(workload.pattern);
    // 20, not more: re2-wasm never frees a compiled pattern and aborts the process once its fixed 16 MB heap is full.
    const compileUs = time(() => engine.compile(workload.pattern), 20) * 1000;
    const replace = engine.compile(workload.pattern);
    const out: string[] = new Array(values.length);
    const replaceMs = time(() => {
      for (let i = 0; i < values.length; i++) out[i] = replace(values[i]!, workload.replacement);
    });
    const wrong = reference ? out.findIndex((v, i) => v !== reference![i]) : -1;
    reference ??= out;
    if (wrong >= 0) {
      rows.push(`| \`${workload.pattern}\` | ${engine.name} | wrong output: ${JSON.stringify(values[wrong])} → ${JSON.stringify(out[wrong])}, not ${JSON.stringify(reference[wrong])} | | | |`);
      continue;
    }
    const perValue = (replaceMs * 1e6) / values.length;
    rows.push(`| \`${workload.pattern}\` | ${engine.name} | ${compileUs.toFixed(1)} | ${replaceMs.toFixed(0)} | ${perValue.toFixed(0)} | ${Math.round(1e9 / perValue).toLocaleString("en")} |`);
  }
}

// Worst cases: the attack of issue #18 on its stalling value (V8 is not run on it: ~9 s per value), and patterns whose
// compiled program is large: RE2 is linear in the value but its time per character grows with the program.
rows.push("");
rows.push("| worst case | engine | compile (ms) | one value of 40 chars (ms) | one value of 10,000 chars (ms) |");
rows.push("|---|---|---:|---:|---:|");
const worst = [
  { name: "attack: `\\D{0,20}` ×7 then `X`", pattern: attack, char: "a" },
  { name: "`\\p{L}{0,100}X` on CJK text", pattern: "\\p{L}{0,100}X", char: "字" },
  { name: "`(?:\\D{0,1000})` ×8 then `X`", pattern: `${"(?:\\D{0,1000})".repeat(8)}X`, char: "a" },
];
for (const { name, pattern, char } of worst) {
  for (const engine of engines.slice(1)) {
    let replace: (value: string, replacement: string) => string;
    let compileMs: number;
    try {
      const started = performance.now();
      replace = engine.compile(pattern);
      compileMs = performance.now() - started;
    } catch (error) {
      rows.push(`| ${name} | ${engine.name} | refused: ${String((error as Error).message).split("\n")[0]!.slice(0, 60)} | | |`);
      continue;
    }
    const short = time(() => replace(char.repeat(40), "#"));
    const long = time(() => replace(char.repeat(10_000), "#"));
    rows.push(`| ${name} | ${engine.name} | ${compileMs.toFixed(1)} | ${short.toFixed(2)} | ${long.toFixed(1)} |`);
  }
}
process.on("exit", (code) => console.error(`exit code ${code}`));
