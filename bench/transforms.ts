// Transform throughput: the mask strategies of lib/transform/strategies.ts, HMAC hash and the
// in-memory token vault, called directly (no query) over generated values; values per second.
import type { TransformResult } from "./report.js";
import { SeededRandom } from "../sample-app/domain/seeded-random.js";

/** The parts of lib/transform/strategies.js and vault.js measured here. */
interface Strategies {
  maskPartial(text: string, o: object): string;
  maskEmail(text: string, o: object): string;
  maskPhone(text: string, o: object): string;
  maskFull(text: string, o: object): string;
  truncate(text: string, length: number, ellipsis: string): string;
  hmac(salt: string, text: string): string;
}
interface VaultModule {
  QpInMemoryTokenVault: new (options?: { digestKey?: string }) => { tokenize(scope: string, values: readonly string[]): Promise<ReadonlyMap<string, string>> };
}

export interface TransformOptions {
  values: number;
  passes: number;
}

/** Targets of issue 8 (values per second). */
export const TRANSFORM_TARGETS: Record<string, number> = {
  Partial: 1_000_000,
  Email: 1_000_000,
  Truncate: 1_000_000,
  "HMAC Hash": 200_000,
};

// ---------------------------------------------------------------------------------------------
// Deterministic values

const FIRST = ["Anna", "Ben", "Clara", "David", "Eva", "Felix", "Grace", "Hugo", "Ida", "Jonas", "Karin", "Liam", "Maria", "Noah", "Olga", "Paul", "Rosa", "Sven", "Tara", "Umar", "Vera", "Will", "Yara", "Zane"];
const LAST = ["Smith", "Miller", "Jones", "Brown", "Garcia", "Wilson", "Taylor", "Moore", "Martin", "Lee", "Walker", "Hall", "Young", "King", "Wright", "Scott"];
// Non-ASCII names take the grapheme-segmenter path of characters().
const FOREIGN = ["Émile Zola", "Zoë Martin", "Øre Nielsen", "Hans Straße", "Ανδρέας Παπαδόπουλος", "Дмитрий Иванов", "José Müller", "Ünal Çelik"];
const FOREIGN_WORDS = ["café", "Straße", "naïve", "Zürich", "São", "Kraków", "Αθήνα", "Москва", "🙂 thanks"];
const WORDS = ["delivery", "call", "before", "noon", "prefers", "email", "VIP", "gate", "code", "back", "door", "leave", "parcel", "with", "neighbour", "fragile"];

export function generateValues(count: number, seed = 7) {
  const rng = new SeededRandom(seed);
  const names: string[] = [];
  const emails: string[] = [];
  const phones: string[] = [];
  const texts: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = rng.next() < 0.125 ? rng.pick(FOREIGN) : `${rng.pick(FIRST)} ${rng.pick(LAST)}`;
    names.push(i % 7 === 0 ? `${name} ${i}` : name);
    emails.push(`${rng.pick(FIRST).toLowerCase()}.${rng.pick(LAST).toLowerCase()}${i}@example.com`);
    phones.push(`+${rng.int(1, 49)} ${rng.int(100, 999)} ${rng.int(100, 999)} ${rng.int(1000, 9999)}`);
    const words: string[] = rng.next() < 0.125 ? [rng.pick(FOREIGN_WORDS)] : [];
    const length = rng.int(5, 80);
    while (words.join(" ").length < length) words.push(rng.pick(WORDS));
    texts.push(words.join(" ").slice(0, length));
  }
  return { names, emails, phones, texts };
}

// ---------------------------------------------------------------------------------------------

async function importLib<T>(path: string): Promise<T> {
  return (await import(new URL(path, import.meta.url).href)) as T;
}

function measureSync(values: readonly string[], passes: number, fn: (value: string) => unknown): number[] {
  let sink = 0;
  // A warm-up over the first 20,000 values (JIT), then the timed passes over all of them.
  for (let i = 0; i < Math.min(values.length, 20_000); i++) sink += (fn(values[i]) as string).length;
  const rates: number[] = [];
  for (let pass = 0; pass < passes; pass++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < values.length; i++) sink += (fn(values[i]) as string).length;
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    rates.push(values.length / seconds);
  }
  if (sink === -1) process.stderr.write(""); // keep the results alive
  return rates;
}

function result(strategy: string, call: string, values: number, rates: number[]): TransformResult {
  const sorted = [...rates].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return {
    strategy,
    call,
    values,
    passes: rates.length,
    perSecond: median,
    minPerSecond: sorted[0],
    maxPerSecond: sorted[sorted.length - 1],
    nsPerValue: 1e9 / median,
    target: TRANSFORM_TARGETS[strategy],
    status: "ok",
  };
}

export async function runTransforms(options: TransformOptions, log: (line: string) => void): Promise<TransformResult[]> {
  let s: Strategies;
  let v: VaultModule;
  try {
    s = await importLib<Strategies>("../lib/transform/strategies.js");
    v = await importLib<VaultModule>("../lib/transform/vault.js");
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return ["Partial", "Email", "Truncate", "Phone", "Full", "HMAC Hash", "Tokenize (in-memory)"].map((strategy) => ({
      strategy, call: "", values: 0, passes: 0, perSecond: 0, minPerSecond: 0, maxPerSecond: 0, nsPerValue: 0, status: "skipped" as const, reason,
    }));
  }
  const n = options.values;
  const started = performance.now();
  const data = generateValues(n);
  log(`  transforms: generated ${n.toLocaleString("en-US")} values of each kind in ${Math.round(performance.now() - started)} ms`);
  const salt = "querylib-bench-hash-salt-0001";
  // The two paths of characters() on their own: ASCII (split) and grapheme segmentation
  // (Intl.Segmenter). The seeded domain has about half its customer names non-ASCII.
  const ascii = /^[\x00-\x7f]*$/;
  const foreign = data.names.map((name, i) => (ascii.test(name) ? `${FOREIGN[i % FOREIGN.length]} ${i % 100}` : name));
  const asciiTexts = data.texts.map((text) => (ascii.test(text) ? text : text.replace(/[^\x00-\x7f]+/g, "x")));
  const plain = data.names.map((name, i) => (ascii.test(name) ? name : `${FIRST[i % FIRST.length]} ${LAST[i % LAST.length]}`));
  const cases: Array<{ strategy: string; call: string; values: string[]; fn: (value: string) => unknown }> = [
    { strategy: "Partial", call: "maskPartial(name, { strategy: Partial })", values: data.names, fn: (x) => s.maskPartial(x, { strategy: "Partial" }) },
    {
      strategy: "Partial, ASCII names only",
      call: "maskPartial(name, { strategy: Partial })",
      values: plain,
      fn: (x) => s.maskPartial(x, { strategy: "Partial" }),
    },
    {
      strategy: "Partial, non-ASCII names only",
      call: "maskPartial(name, { strategy: Partial })",
      values: foreign,
      fn: (x) => s.maskPartial(x, { strategy: "Partial" }),
    },
    { strategy: "Email", call: "maskEmail(email, { strategy: Email })", values: data.emails, fn: (x) => s.maskEmail(x, { strategy: "Email" }) },
    { strategy: "Truncate", call: 'truncate(text, 24, "...")', values: data.texts, fn: (x) => s.truncate(x, 24, "...") },
    {
      strategy: "Truncate, ASCII text only",
      call: 'truncate(text, 24, "...")',
      values: asciiTexts,
      fn: (x) => s.truncate(x, 24, "..."),
    },
    { strategy: "Phone", call: "maskPhone(phone, { strategy: Phone })", values: data.phones, fn: (x) => s.maskPhone(x, { strategy: "Phone" }) },
    { strategy: "Full", call: "maskFull(name, { strategy: Full })", values: data.names, fn: (x) => s.maskFull(x, { strategy: "Full" }) },
    { strategy: "HMAC Hash", call: "hmac(salt, email)", values: data.emails, fn: (x) => s.hmac(salt, x) },
  ];
  const out: TransformResult[] = [];
  for (const c of cases) {
    const rates = measureSync(c.values, options.passes, c.fn);
    out.push(result(c.strategy, c.call, c.values.length, rates));
    log(`  transforms: ${c.strategy} ${Math.round(out[out.length - 1].perSecond).toLocaleString("en-US")} values/s`);
  }

  // In-memory tokenize: pages of 1,000 distinct values, as a guarded query sends them.
  const page = 1000;
  const pages: string[][] = [];
  for (let i = 0; i + page <= n; i += page) pages.push(data.emails.slice(i, i + page));
  const vault = new v.QpInMemoryTokenVault({ digestKey: "querylib-bench-digest-key-0001" });
  const timePass = async (scope: string) => {
    const t0 = process.hrtime.bigint();
    for (const p of pages) await vault.tokenize(scope, p);
    return (pages.length * page) / (Number(process.hrtime.bigint() - t0) / 1e9);
  };
  await timePass("warmup");
  const fresh: number[] = [];
  const known: number[] = [];
  for (let pass = 0; pass < Math.max(2, Math.min(options.passes, 3)); pass++) {
    const scope = `bench-${pass}`;
    fresh.push(await timePass(scope));
    known.push(await timePass(scope));
  }
  out.push(result("Tokenize (in-memory), new values", "QpInMemoryTokenVault.tokenize(scope, 1,000 values)", pages.length * page, fresh));
  out.push(result("Tokenize (in-memory), already tokenized", "QpInMemoryTokenVault.tokenize(scope, 1,000 values)", pages.length * page, known));
  log(`  transforms: in-memory tokenize ${Math.round(out[out.length - 2].perSecond).toLocaleString("en-US")} (new) / ${Math.round(out[out.length - 1].perSecond).toLocaleString("en-US")} (known) values/s`);
  return out;
}
