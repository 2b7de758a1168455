// Dev mode of the sample app: the dev tokens (the admin's included) and GET /api/dev-users exist
// only when dev mode is asked for (npm start's --dev, QUERYLIB_DEV=1, devMode: true) and never in a
// production configuration (NODE_ENV=production); a dev-mode host says so on every answer.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { devHostHeader, devModeRequested, resolveDevMode } from "../../sample-app/dev-mode.js";
import { type SampleApp, startSampleApp } from "../../sample-app/main.js";
import { SampleSecretsError, resolveSampleSecrets } from "../../sample-app/secrets.js";
import { assertNoStack, freePort, rawCall } from "./support.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const smallSeed = { customersPerTenant: 20, employeesPerTenant: 6 };
/** Keys of this test's own, for the starts outside dev mode. */
const keys = { QUERYLIB_HASH_SALT: "dev-mode-test-hash-salt-0123456789", QUERYLIB_VAULT_KEY: "dev-mode-test-vault-key-0123456789" };

/** Runs `action` with the two key variables set to `values` (undefined: unset), then restores them. */
async function withKeys<T>(values: Partial<Record<keyof typeof keys, string>>, action: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(keys).map((k) => [k, process.env[k]]));
  for (const k of Object.keys(keys)) {
    const value = values[k as keyof typeof keys];
    if (value === undefined) delete process.env[k];
    else process.env[k] = value;
  }
  try {
    return await action();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** The staff names' hashes Ben (analyst, names hashed) reads from a sample app. */
async function staffHashes(sample: SampleApp): Promise<string[]> {
  const reply = await rawCall(sample.url, "POST", "/api/employees/filter", {
    headers: { authorization: "Bearer dev-ben", "content-type": "application/json" },
    body: JSON.stringify({ selects: ["id", "name"], orders: [{ sort: 1, field: "id", direction: "Ascending" }], page: { pageNumber: 1, pageSize: 3 } }),
  });
  expect(reply.status, reply.text).to.equal(200);
  return reply.body.data.map((row: { name: string }) => row.name);
}

describe("sample app: dev mode", function () {
  describe("how it is decided", () => {
    it("is asked for by --dev or QUERYLIB_DEV=1 only", () => {
      expect(devModeRequested(["node", "main.js", "--dev"], {})).to.equal(true);
      expect(devModeRequested(["node", "main.js"], { QUERYLIB_DEV: "1" })).to.equal(true);
      expect(devModeRequested(["node", "main.js"], {})).to.equal(false);
      expect(devModeRequested(["node", "main.js", "--devx"], { QUERYLIB_DEV: "true" })).to.equal(false);
      // The script path itself is not a flag.
      expect(devModeRequested(["node", "--dev"], {})).to.equal(false);
    });

    it("is granted when asked for, and refused in a production configuration even then", () => {
      expect(resolveDevMode(true, {})).to.deep.equal({ enabled: true });
      expect(resolveDevMode(false, {})).to.deep.equal({ enabled: false });
      expect(resolveDevMode(false, { NODE_ENV: "production" })).to.deep.equal({ enabled: false });
      for (const env of ["production", "Production", " production "]) {
        const refused = resolveDevMode(true, { NODE_ENV: env });
        expect(refused.enabled).to.equal(false);
        expect(refused.refusal).to.match(/NODE_ENV=production/);
      }
    });
  });

  describe("its Hash and vault keys (#42)", () => {
    it("outside dev mode: refused without QUERYLIB_HASH_SALT and QUERYLIB_VAULT_KEY, with a short one or a published demo value", () => {
      expect(() => resolveSampleSecrets(false, {})).to.throw(SampleSecretsError, /QUERYLIB_HASH_SALT and QUERYLIB_VAULT_KEY are not set/);
      expect(() => resolveSampleSecrets(false, { QUERYLIB_HASH_SALT: keys.QUERYLIB_HASH_SALT })).to.throw(SampleSecretsError, /QUERYLIB_VAULT_KEY is not set/);
      expect(() => resolveSampleSecrets(false, { QUERYLIB_VAULT_KEY: keys.QUERYLIB_VAULT_KEY, QUERYLIB_HASH_SALT: "  " })).to.throw(SampleSecretsError, /QUERYLIB_HASH_SALT is not set/);
      expect(() => resolveSampleSecrets(false, { ...keys, QUERYLIB_HASH_SALT: "short" })).to.throw(SampleSecretsError, /shorter than 16/);
      for (const dev of [false, true]) expect(() => resolveSampleSecrets(dev, { ...keys, QUERYLIB_HASH_SALT: "querylib-sample-app-demo-salt" })).to.throw(SampleSecretsError, /demo value/);
      expect(resolveSampleSecrets(false, keys)).to.deep.equal({ hashSalt: keys.QUERYLIB_HASH_SALT, vaultKey: keys.QUERYLIB_VAULT_KEY, drawn: [] });
    });

    it("in dev mode: each key not set is drawn at random per start (node:crypto, 32 bytes), a key set is kept", () => {
      const [a, b] = [resolveSampleSecrets(true, {}), resolveSampleSecrets(true, {})];
      expect(a.drawn).to.deep.equal(["QUERYLIB_HASH_SALT", "QUERYLIB_VAULT_KEY"]);
      expect(a.hashSalt).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(a.hashSalt).not.to.equal(b.hashSalt);
      expect(a.vaultKey).not.to.equal(b.vaultKey);
      expect(a.hashSalt).not.to.equal(a.vaultKey);
      const kept = resolveSampleSecrets(true, { QUERYLIB_HASH_SALT: keys.QUERYLIB_HASH_SALT });
      expect(kept.hashSalt).to.equal(keys.QUERYLIB_HASH_SALT);
      expect(kept.drawn).to.deep.equal(["QUERYLIB_VAULT_KEY"]);
    });

    it("startSampleApp outside dev mode without the keys fails before listening; two dev-mode starts hash the same staff names differently", async () => {
      await withKeys({}, async () => {
        let caught: unknown;
        try {
          const started = await startSampleApp(0, { logger: false, database: { kind: "sqlite", url: ":memory:" }, seed: smallSeed });
          await started.close();
        } catch (error) {
          caught = error;
        }
        expect(caught).to.be.instanceOf(SampleSecretsError);
        const hashes: string[][] = [];
        for (let i = 0; i < 2; i++) {
          const dev = await startSampleApp(0, { logger: false, devMode: true, database: { kind: "sqlite", url: ":memory:" }, seed: smallSeed });
          try {
            hashes.push(await staffHashes(dev));
          } finally {
            await dev.close();
          }
        }
        for (const hash of hashes[0]!) expect(hash).to.match(/^[0-9a-f]{32}$/);
        expect(hashes[0]).not.to.deep.equal(hashes[1], "a fresh key per start");
      });
      // With the keys set, the same names hash alike across starts.
      const fixed: string[][] = [];
      await withKeys(keys, async () => {
        for (let i = 0; i < 2; i++) {
          const dev = await startSampleApp(0, { logger: false, devMode: true, database: { kind: "sqlite", url: ":memory:" }, seed: smallSeed });
          try {
            fixed.push(await staffHashes(dev));
          } finally {
            await dev.close();
          }
        }
      });
      expect(fixed[0]).to.deep.equal(fixed[1]);
    });
  });

  // One app at a time: two live sample apps in one process would register two default data sources.
  describe("in process, in dev mode", () => {
    let dev: SampleApp;
    before(async () => {
      dev = await startSampleApp(0, { logger: false, devMode: true, database: { kind: "sqlite", url: ":memory:" }, seed: smallSeed });
    });
    after(() => dev?.close());

    it("dev mode: lists the dev users, signs them in, and marks every answer (API, admin API, page, errors) as a dev host", async () => {
      expect(dev.devMode).to.equal(true);
      const users = await rawCall(dev.url, "GET", "/api/dev-users");
      expect(users.status).to.equal(200);
      expect(users.body.map((u: { token: string }) => u.token)).to.include("dev-ada");
      const index = await rawCall(dev.url, "GET", "/api");
      expect(index.body.devHost).to.match(/^DEVELOPMENT HOST/);
      for (const [method, path, token] of [["GET", "/", undefined], ["GET", "/api/me", "dev-ben"], ["GET", "/qp-admin/health", "dev-ada"], ["GET", "/api/nowhere", undefined], ["GET", "/api/me", "dev-nobody"]]) {
        const reply = await rawCall(dev.url, method!, path!, { headers: token ? { authorization: `Bearer ${token}` } : {} });
        expect(reply.headers.get(devHostHeader), `${method} ${path}`).to.match(/^DEVELOPMENT HOST: fixed dev tokens/);
      }
      expect((await rawCall(dev.url, "GET", "/api/me", { headers: { authorization: "Bearer dev-ben" } })).body.user.sub).to.equal("ben");
    });

  });

  describe("in process, without dev mode", () => {
    let plain: SampleApp;
    before(async () => {
      plain = await withKeys(keys, () => startSampleApp(0, { logger: false, database: { kind: "sqlite", url: ":memory:" }, seed: smallSeed }));
    });
    after(() => plain?.close());

    it("without dev mode: GET /api/dev-users does not exist (404, JSON error body) and no dev token signs anyone in", async () => {
      expect(plain.devMode).to.equal(false);
      const users = await rawCall(plain.url, "GET", "/api/dev-users");
      expect(users.status).to.equal(404);
      expect(users.body.code).to.equal("NotFound");
      expect(users.text).not.to.include("dev-ada");
      assertNoStack(users);
      for (const token of ["dev-ada", "dev-ben", "dev-nobody"]) {
        const me = await rawCall(plain.url, "GET", "/api/me", { headers: { authorization: `Bearer ${token}` } });
        expect(me.status).to.equal(401);
        expect(me.body.code).to.equal("InvalidToken");
        expect(me.body.message).to.match(/dev mode only/);
        const query = await rawCall(plain.url, "POST", "/api/customers/filter", { headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}" });
        expect(query.status).to.equal(401);
        expect((await rawCall(plain.url, "GET", "/qp-admin/rules", { headers: { authorization: `Bearer ${token}` } })).status).to.equal(401);
      }
      const anonymous = await rawCall(plain.url, "POST", "/api/customers/filter", { headers: { "content-type": "application/json" }, body: "{}" });
      expect(anonymous.status).to.equal(401);
      const index = await rawCall(plain.url, "GET", "/api");
      expect(index.body).not.to.have.property("devHost");
      expect(index.text).not.to.include("dev-users");
      expect(index.headers.get(devHostHeader)).to.equal(null);
    });
  });

  describe("started with NODE_ENV=production", () => {
    let child: ChildProcess | undefined;
    after(() => {
      if (child && child.exitCode === null) child.kill("SIGKILL");
    });

    it("refuses dev mode although --dev and QUERYLIB_DEV=1 ask for it, and says so", async function () {
      this.timeout(60_000);
      const port = await freePort();
      const env: NodeJS.ProcessEnv = { ...process.env, ...keys, PORT: String(port), NODE_ENV: "production", QUERYLIB_DEV: "1" };
      delete env.QUERYLIB_DB;
      delete env.QUERYLIB_DB_URL;
      let output = "";
      child = spawn(process.execPath, ["dist/sample-app/main.js", "--dev"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
      child.stdout!.on("data", (chunk) => (output += String(chunk)));
      child.stderr!.on("data", (chunk) => (output += String(chunk)));
      const deadline = Date.now() + 45_000;
      while (!/Dev mode: npm start/.test(output)) {
        if (child.exitCode !== null) throw new Error(`the sample app exited with ${child.exitCode}:\n${output}`);
        if (Date.now() > deadline) throw new Error(`the sample app did not say that dev mode is off:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(output).to.match(/dev mode refused: NODE_ENV=production/);
      expect(output).to.include("Dev mode is off");
      expect(output).not.to.include("DEVELOPMENT HOST");
      expect(output).not.to.include("dev-ada");
      const base = `http://127.0.0.1:${port}`;
      const users = await rawCall(base, "GET", "/api/dev-users");
      expect(users.status).to.equal(404);
      expect(users.headers.get(devHostHeader)).to.equal(null);
      expect((await rawCall(base, "GET", "/api/me", { headers: { authorization: "Bearer dev-ada" } })).status).to.equal(401);
      child.kill("SIGTERM");
      const code = await new Promise<number | null>((resolve) => (child!.exitCode !== null ? resolve(child!.exitCode) : child!.once("exit", (c) => resolve(c))));
      expect(code).to.equal(0);
    });

    it("refuses to start without QUERYLIB_HASH_SALT and QUERYLIB_VAULT_KEY, and says which (#42)", async function () {
      this.timeout(60_000);
      const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(await freePort()), NODE_ENV: "production" };
      for (const k of ["QUERYLIB_DB", "QUERYLIB_DB_URL", "QUERYLIB_DEV", ...Object.keys(keys)]) delete env[k];
      let output = "";
      child = spawn(process.execPath, ["dist/sample-app/main.js"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
      child.stdout!.on("data", (chunk) => (output += String(chunk)));
      child.stderr!.on("data", (chunk) => (output += String(chunk)));
      const code = await new Promise<number | null>((resolve) => (child!.exitCode !== null ? resolve(child!.exitCode) : child!.once("exit", (c) => resolve(c))));
      expect(code).to.equal(1);
      expect(output).to.match(/The sample app did not start: QUERYLIB_HASH_SALT and QUERYLIB_VAULT_KEY are not set/);
    });
  });
});
