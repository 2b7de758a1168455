// Regex mask engines side by side (issue #18): V8's RegExp (backtracking, the former engine), re2
// (Google RE2, native addon) and re2-wasm (RE2 compiled to WebAssembly). Compile time per pattern
// and replace throughput on typical mask patterns over 100,000 values, then RE2's worst cases.
//
//   node dist/bench/regex-engines.js [--values=100000]
//
// Prints a Markdown table to stdout. Not part of `npm run bench`: it decides a dependency, once.
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";

const require = createRequire(import.meta.url);
const argument = process.argv.find((a) => a.startsWith("--values="));
const valueCount = argument ? Number(argument.slice("--values=".length)) : 100_000;

type Compile = (pattern: string) => RegExp;

const loadStarted = performance.now();
const NativeRE2 = require("re2") as new (pattern: string, flags: string) => RegExp;
const nativeLoadMs = performance.now() - loadStarted;
const wasmStarted = performance.now();
const { RE2: WasmRE2 } = require("re2-wasm") as { RE2: new (pattern: string, flags: string) => RegExp };
new WasmRE2("a", "u"); // the module instantiates on first use
const wasmLoadMs = performance.now() - wasmStarted;

const engines: [string, Compile][] = [
  ["V8 RegExp", (p) => new RegExp(p, "gu")],
  ["re2 (native)", (p) => new NativeRE2(p, "gu")],
  ["re2-wasm", (p) => new WasmRE2(p, "gu")],
];

/** Typical mask patterns, each with the kind of values it masks (none can match the empty string: re2-wasm's global replace never ends on one). */
const workloads: { pattern: string; replacement: string; value: (i: number) => string }[] = [
  { pattern: "\\d{4}", replacement: "####", value: (i) => `4111 1111 ${String(i % 10_000).padStart(4, "0")} 1234` },
  { pattern: "\\d{12}(\\d{4})", replacement: "************$1", value: (i) => `4000${String(i).padStart(12, "0")}` },
  { pattern: "[0-9]+", replacement: "***", value: (i) => `room ${i % 500}, floor ${i % 9}` },
  { pattern: "[^@\\s]+@", replacement: "***@", value: (i) => `user.${i}@example.com` },
  { pattern: "\\p{L}+", replacement: "_", value: (i) => `Zoë Ångström ${i} 東京` },
  { pattern: "(\\w+\\.)+\\w+", replacement: "<host>", value: (i) => `see https://docs.example${i % 7}.org/page for more` },
];

function time(run: () => void, repeat = 1): number {
  const started = performance.now();
  for (let i = 0; i < repeat; i++) run();
  return (performance.now() - started) / repeat;
}

/** Printed as they come: re2-wasm can abort the process when its fixed 16 MB heap is exhausted. */
const rows = { push: (line: string) => console.log(line) };
rows.push(`Node ${process.version}; load: re2 ${nativeLoadMs.toFixed(1)} ms, re2-wasm ${wasmLoadMs.toFixed(1)} ms (first compile included); ${valueCount.toLocaleString("en")} values per workload.`);
rows.push("");
rows.push("| pattern | engine | compile (µs, mean of 20) | replace 100k values (ms) | ns per value |");
rows.push("|---|---|---:|---:|---:|");
for (const workload of workloads) {
  const values = Array.from({ length: valueCount }, (_, i) => workload.value(i));
  let reference: string[] | null = null;
  for (const [name, compile] of engines) {
    compile(workload.pattern);
    // 20, not more: re2-wasm never frees a compiled pattern and aborts the process once its fixed 16 MB heap is full.
    const compileUs = time(() => compile(workload.pattern), 20) * 1000;
    const compiled = compile(workload.pattern);
    const out: string[] = new Array(values.length);
    const replaceMs = time(() => {
      for (let i = 0; i < values.length; i++) {
        compiled.lastIndex = 0;
        out[i] = values[i]!.replace(compiled, workload.replacement);
      }
    });
    if (reference && out.some((v, i) => v !== reference![i])) throw new Error(`${name} differs from V8 on /${workload.pattern}/`);
    reference ??= out;
    rows.push(`| \`${workload.pattern}\` | ${name} | ${compileUs.toFixed(1)} | ${replaceMs.toFixed(0)} | ${((replaceMs * 1e6) / values.length).toFixed(0)} |`);
  }
}

// Worst cases: the attack of issue #18 (V8 is not run on it: ~9 s per value), and patterns whose compiled program is large:
// RE2 is linear in the value but its time per character grows with the program.
rows.push("");
rows.push("| worst case | engine | compile (ms) | one value of 40 chars (ms) | one value of 10,000 chars (ms) |");
rows.push("|---|---|---:|---:|---:|");
const worst = [
  { name: "attack: `\\D{0,20}` ×7 then `X`", pattern: `${"\\D{0,20}".repeat(7)}X`, char: "a" },
  { name: "`\\p{L}{0,100}X` on CJK text", pattern: "\\p{L}{0,100}X", char: "字" },
  { name: "`(?:\\D{0,1000})` ×8 then `X`", pattern: `${"(?:\\D{0,1000})".repeat(8)}X`, char: "a" },
];
for (const { name, pattern, char } of worst) {
  for (const [engine, compile] of engines.slice(1)) {
    let compiled: RegExp;
    let compileMs: number;
    try {
      const started = performance.now();
      compiled = compile(pattern);
      compileMs = performance.now() - started;
    } catch (error) {
      rows.push(`| ${name} | ${engine} | refused: ${String((error as Error).message).split("\n")[0]!.slice(0, 60)} | | |`);
      continue;
    }
    const short = time(() => char.repeat(40).replace(compiled, "#"));
    const long = time(() => char.repeat(10_000).replace(compiled, "#"));
    rows.push(`| ${name} | ${engine} | ${compileMs.toFixed(1)} | ${short.toFixed(2)} | ${long.toFixed(1)} |`);
  }
}
process.on("exit", (code) => console.error(`exit code ${code}`));
