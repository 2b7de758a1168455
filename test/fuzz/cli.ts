// `npm run fuzz -- --runs N --seed S [--target sqlite|postgres|mariadb|memory] [--guarded|--unguarded]
//   [--hostility full|suite] [--max-depth N] [--max-sets N] [--max-list N] [--max-text N] [--nul|--no-nul] [--max-order-collections N]
//   [--time-limit MS] [--heap-bound MB] [--shrink-ms MS] [--path P]`
// Runs the property-based fuzzer (./properties.ts) per target and mode, prints counts (runs,
// returned, LogicException by code, failures) and, for each distinct failure, the shrunk case, the
// seed and fast-check's path to replay it; exits 1 on any failure. Databases: QL_PG_URL and
// QL_MARIADB_URL as for the tests.
import { parseArgs } from "node:util";
import { closeAll } from "../support/databases.js";
import { type HostileSizes, fullHostility } from "./arbitraries.js";
import { fuzzTargets, type Target } from "./domains.js";
import { type Mode, reportLines, runSession } from "./properties.js";
import { suiteHostility } from "./suite-sizes.js";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "1000" },
    seed: { type: "string" },
    target: { type: "string", multiple: true },
    guarded: { type: "boolean", default: false },
    unguarded: { type: "boolean", default: false },
    hostility: { type: "string", default: "full" },
    "max-depth": { type: "string" },
    "max-sets": { type: "string" },
    "max-list": { type: "string" },
    "max-order-collections": { type: "string" },
    "max-text": { type: "string" },
    nul: { type: "boolean" },
    "no-nul": { type: "boolean" },
    "time-limit": { type: "string", default: "2000" },
    "heap-bound": { type: "string", default: "256" },
    "shrink-ms": { type: "string", default: "120000" },
    path: { type: "string" },
  },
});

const runs = Number(values.runs);
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
const targets = (values.target?.length ? values.target : fuzzTargets) as Target[];
for (const t of targets) if (!fuzzTargets.includes(t)) throw new Error(`unknown target ${t} (one of ${fuzzTargets.join(", ")})`);
const modes: Mode[] = values.guarded === values.unguarded ? ["unguarded", "guarded"] : values.guarded ? ["guarded"] : ["unguarded"];
const knob = (name: "max-depth" | "max-sets" | "max-list" | "max-order-collections" | "max-text", fallback: number) => (values[name] === undefined ? fallback : Number(values[name]));
const base = values.hostility === "suite" ? suiteHostility : fullHostility;
const sizes: HostileSizes = {
  maxDepth: knob("max-depth", base.maxDepth), maxSets: knob("max-sets", base.maxSets), maxListLength: knob("max-list", base.maxListLength),
  nul: values["no-nul"] ? false : values.nul ? true : base.nul, maxTextLength: knob("max-text", base.maxTextLength), maxOrderCollections: knob("max-order-collections", base.maxOrderCollections),
};
if (!Number.isSafeInteger(runs) || runs < 1 || !Number.isSafeInteger(seed)) throw new Error("--runs and --seed take integers");
if (!(globalThis as { gc?: unknown }).gc) console.log("[fuzz] no --expose-gc: the heap bound is not checked");

console.log(`[fuzz] seed ${seed}, ${runs} runs per target and mode, targets ${targets.join(", ")}, modes ${modes.join(", ")}, hostility ${Object.entries(sizes).map(([k, v]) => `${k} ${v}`).join(", ")}`);
let failures = 0;
try {
  for (const target of targets) {
    for (const mode of modes) {
      const report = await runSession({
        target, mode, runs, seed, sizes, limits: { timeMs: Number(values["time-limit"]) }, heapBoundMb: Number(values["heap-bound"]),
        shrinkMs: Number(values["shrink-ms"]), path: values.path, progress: (line) => console.log(`       ${line}`),
      });
      failures += report.counts.failures + (values.path !== undefined ? report.failures.length : 0);
      for (const line of reportLines(report)) console.log(line);
    }
  }
} finally {
  await closeAll();
}
console.log(`[fuzz] ${failures === 0 ? "no failures" : `${failures} failures`} (seed ${seed})`);
process.exitCode = failures === 0 ? 0 : 1;
