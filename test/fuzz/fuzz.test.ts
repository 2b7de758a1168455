// The fuzzer's deterministic slice (see ./properties.ts for the properties and `npm run fuzz`
// for long runs): a fixed seed, every target, unguarded (shop domain) and guarded (policy and
// transform domains), at the suite's hostile sizes (./suite-sizes.ts: past every request cap). A failure prints each distinct failure, shrunk, with the
// seed and path to replay it with `npm run fuzz -- --seed S --path P --target T`.
import assert from "node:assert/strict";
import { Patient } from "../policy/domain.js";
import { Member } from "../transform/domain.js";
import { skipIfUnavailable } from "../support/databases.js";
import { type Runner, fuzzTargets } from "./domains.js";
import { type FuzzCase, type Mode, checkCase, guardViolation, reportLines, runSession } from "./properties.js";
import { suiteHostility } from "./suite-sizes.js";

const SEED = Number(process.env.QL_FUZZ_SEED ?? 18_2026);
/** Runs per target: unguarded requests cost a database run and its in-memory oracle over the shop's 9,300 items. */
const RUNS: Record<Mode, number> = { unguarded: 100, guarded: 300 };
/**
 * The per-run bound here only catches hangs (a loaded machine must not fail the suite: speed is
 * measured by `npm run bench` and by `npm run fuzz`, whose bound is 2 s).
 */
const HANG_MS = 20_000;

for (const target of fuzzTargets) {
  describe(`Fuzz: generated requests hold every property [${target}]`, function () {
    for (const mode of ["unguarded", "guarded"] as const) {
      it(`${RUNS[mode]} ${mode} requests (seed ${SEED}): each returns or throws a LogicException, within its bounds${mode === "guarded" ? ", and the guard holds" : ""}`, async function () {
        this.timeout(300_000);
        let report: Awaited<ReturnType<typeof runSession>>;
        try {
          report = await runSession({
            target, mode, runs: RUNS[mode], seed: SEED, sizes: suiteHostility, limits: { timeMs: HANG_MS }, heapBoundMb: 256, shrinkMs: 30_000,
          });
        } catch (error) {
          skipIfUnavailable(this, error);
        }
        const lines = reportLines(report);
        console.log(lines.slice(0, 2).map((line) => `      ${line}`).join("\n"));
        assert.equal(report.counts.runs, RUNS[mode]);
        assert.ok(report.counts.returned > 0 && report.counts.returned < report.counts.runs, "the slice must mix accepted and rejected requests");
        assert.equal(report.failures.length, 0, lines.join("\n"));
      });
    }
  });
}

// The guard oracle itself must see a leak (else the guarded property could not fail).
describe("Fuzz: the guard oracle", () => {
  const patientCase = (tenant: string): FuzzCase => ({ mode: "guarded", domain: "patient", tenant, request: { kind: "filter", root: Patient, dynamic: false, profile: "valid", shape: {} } });
  const memberCase: FuzzCase = { mode: "guarded", domain: "member", tenant: "", request: { kind: "filter", root: Member, dynamic: false, profile: "valid", shape: {} } };
  const result = (data: unknown[]) => ({ data, totalCount: data.length, pageNumber: 1, pageSize: 0, pageCount: 1 });

  it("flags a denied member, a denied value, another tenant's row and a transformed member's stored value", () => {
    assert.equal(guardViolation(patientCase("t-1"), result([{ id: 1, tenantId: "t-1", name: "Patient 01" }])), null);
    assert.match(guardViolation(patientCase("t-1"), result([{ id: 1, ssn: "x" }]))!, /denied member/);
    assert.match(guardViolation(patientCase("t-1"), result([{ id: 1, label: "SSN-7" }]))!, /denied value/);
    assert.match(guardViolation(patientCase("t-1"), result([{ id: 1, internalNote: "x" }]))!, /unselectable member/);
    assert.match(guardViolation(patientCase("t-1"), result([{ id: 1, n: "note 1" }]))!, /unselectable value/);
    assert.match(guardViolation(patientCase("t-1"), result([{ id: 1, tenantId: "t-2" }]))!, /another tenant/);
    assert.match(guardViolation(patientCase("t-1"), result([{ id: 4 }]))!, /another tenant/); // patient 4 is t-2's
    assert.match(guardViolation(patientCase("t-1"), result([{ doctor: { patients: [{ id: 2, tenantId: "t-2" }] } }]))!, /another tenant/);
    assert.equal(guardViolation(memberCase, result([{ id: 2, email: "us*****@example.com", city: "P***s" }])), null);
    assert.match(guardViolation(memberCase, result([{ id: 2, city: "Paris" }]))!, /stored value/);
    assert.match(guardViolation(memberCase, result([{ email: "user1@example.com" }]))!, /stored value/);
  });
});

// The time bound is about the target's run: the harness's copy of the request (structuredClone, a
// second or more for a 7 MB request under load) is made before the clock starts (#43).
describe("Fuzz: the time bound", () => {
  it("times the target's run alone, not the copy of the request it is given", async () => {
    const copyMs = 500;
    const shape = {
      // structuredClone reads the getter: the copy takes copyMs, the run itself nothing.
      get conditionGroup() {
        const until = performance.now() + copyMs;
        while (performance.now() < until);
        return { connector: "And", conditions: [] };
      },
    };
    const received: unknown[] = [];
    const page = { data: [], totalCount: 0, pageNumber: 1, pageSize: 0, pageCount: 0 };
    const runner: Runner = {
      unguarded: async (_root, given) => (received.push(given), page),
      guarded: async () => assert.fail("an unguarded case"),
    };
    const c: FuzzCase = { mode: "unguarded", domain: "shop", tenant: "", request: { kind: "filter", root: Patient, dynamic: false, profile: "hostile", shape } };
    const verdict = await checkCase(c, "memory", runner, null, { timeMs: copyMs / 2 });
    assert.equal(verdict.failure, null);
    assert.equal(verdict.slowOnce, false);
    assert.equal(received.length, 1);
    assert.notEqual(received[0], shape, "the run gets a copy of the request");
    assert.deepEqual(received[0], { conditionGroup: { connector: "And", conditions: [] } });
  });
});
