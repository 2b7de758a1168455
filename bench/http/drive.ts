// The HTTP benchmark's load generator, in its own process: autocannon drives one endpoint with a
// fixed number of connections, for a warm-up and then the timed window, which starts only once
// every connection has been admitted (accepted off the listen queue, its first request
// answered): a Node server takes new connections slowly under overload, and counting that would
// measure the accept queue, not request handling. A fixed warm-up was not enough: a connection
// admitted after it brought a first request of ~5 s into the window, the p99 of a whole run at
// 200 connections while the server's own p99 stayed under 2× its p50. Admission can also never
// finish: libuv accepts connections between event-loop iterations, and on SQLite (synchronous
// queries) an iteration that answers every ready request takes about a second at 200
// connections, so 50 connections still sat in the listen queue after 30 s, whatever the endpoint.
// The window therefore starts after at most MAX_ADMISSION_SECONDS, only the connections admitted
// by then count, and `lateConnections` says how many were not. Only responses inside the window
// count. Latencies go into an HDR histogram (hdr-histogram-js, autocannon's own).
//
//   node dist/bench/http/drive.js '<json spec>'   → one line of JSON on stdout
import { createRequire } from "node:module";
import * as hdr from "hdr-histogram-js";

// autocannon is CommonJS without type declarations: required, and typed below as far as used.
const autocannon = createRequire(import.meta.url)("autocannon") as (options: object) => AutocannonInstance;

export interface DriveSpec {
  readonly url: string;
  readonly method: "GET" | "POST";
  readonly body?: string;
  readonly connections: number;
  readonly warmupSeconds: number;
  readonly seconds: number;
}

export interface DriveResult {
  readonly requests: number;
  readonly rps: number;
  /** Milliseconds. */
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly errors: number;
  readonly non2xx: number;
  /** Connections without a first answer when timing started (admission took longer than MAX_ADMISSION_SECONDS): not measured. */
  readonly lateConnections: number;
  /** Seconds from the first request to the window's start: the warm-up, or longer while connections were being admitted. */
  readonly admissionSeconds: number;
}

/** How long the window waits for the last connection's first answer before it starts anyway (and says so). */
const MAX_ADMISSION_SECONDS = 6;

interface AutocannonInstance {
  stop(): void;
  on(event: "response", listener: (client: unknown, status: number, bytes: number, responseTime: number) => void): void;
  on(event: "reqError", listener: (error: unknown) => void): void;
  on(event: "done", listener: () => void): void;
}

function drive(spec: DriveSpec): Promise<DriveResult> {
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
  let requests = 0;
  let errors = 0;
  let non2xx = 0;
  const started = performance.now();
  const admitted = new Set<unknown>();
  /** The connections admitted when the window started: only theirs count (a late one's first answer measures the accept queue). */
  let measured = new Set<unknown>();
  let timedFrom = Infinity;
  let timedTo = Infinity;
  let lateConnections = 0;
  return new Promise((resolve) => {
    const instance = autocannon({
      url: spec.url,
      method: spec.method,
      body: spec.body,
      headers: spec.body === undefined ? {} : { "content-type": "application/json" },
      connections: spec.connections,
      pipelining: 1,
      // Stopped by hand when the window ends; the duration only bounds a run whose admission never completes.
      duration: spec.warmupSeconds + MAX_ADMISSION_SECONDS + spec.seconds + 5,
      timeout: 30,
    });
    const startWindow = () => {
      if (timedFrom !== Infinity) return;
      timedFrom = performance.now();
      timedTo = timedFrom + spec.seconds * 1000;
      lateConnections = spec.connections - admitted.size;
      measured = new Set(admitted);
      setTimeout(() => instance.stop(), spec.seconds * 1000 + 50);
    };
    const warmedUp = setTimeout(() => {
      if (admitted.size >= spec.connections) startWindow();
    }, spec.warmupSeconds * 1000);
    const giveUp = setTimeout(startWindow, (spec.warmupSeconds + MAX_ADMISSION_SECONDS) * 1000);
    const timed = () => {
      const now = performance.now();
      return now >= timedFrom && now <= timedTo;
    };
    instance.on("response", (client, status, _bytes, responseTime) => {
      if (!admitted.has(client)) {
        admitted.add(client);
        if (admitted.size >= spec.connections && performance.now() - started >= spec.warmupSeconds * 1000) startWindow();
      }
      if (!timed() || !measured.has(client)) return;
      requests++;
      // responseTime is in ms (fractional); the histogram holds microseconds.
      histogram.recordValue(Math.max(1, Math.round(responseTime * 1000)));
      if (status < 200 || status >= 300) non2xx++;
    });
    instance.on("reqError", () => {
      if (timed()) errors++;
    });
    instance.on("done", () => {
      clearTimeout(warmedUp);
      clearTimeout(giveUp);
      const ms = (us: number) => Math.round(us) / 1000;
      resolve({
        requests, rps: requests / spec.seconds,
        p50: ms(histogram.getValueAtPercentile(50)), p90: ms(histogram.getValueAtPercentile(90)),
        p99: ms(histogram.getValueAtPercentile(99)), p999: ms(histogram.getValueAtPercentile(99.9)), max: ms(histogram.maxValue),
        errors, non2xx, lateConnections, admissionSeconds: Math.round((timedFrom - started) / 100) / 10,
      });
    });
  });
}

const spec = JSON.parse(process.argv[2] ?? "null") as DriveSpec | null;
if (!spec) {
  process.stderr.write("usage: drive.js '<json spec>'\n");
  process.exit(2);
}
drive(spec).then((result) => {
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}, (error: unknown) => {
  process.stderr.write(`drive failed: ${String(error)}\n`);
  process.exit(1);
});
