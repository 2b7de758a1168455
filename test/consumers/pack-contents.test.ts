// What `npm pack` ships: only what a user needs (the compiled library, decorators and Nest module
// with their declarations and maps, README, LICENSE, package.json); no tests, bench, sample app or
// sources. Every exports target, typesVersions target and the bin are in the list.
import { expect } from "chai";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

interface Manifest {
  exports: Record<string, string | { types: string; default: string }>;
  typesVersions: Record<string, Record<string, string[]>>;
  bin: Record<string, string>;
  main: string;
  types: string;
  engines: { node: string };
}

describe("package contents: npm pack --dry-run", function () {
  this.timeout(120_000);
  let files: string[] = [];
  const manifest = JSON.parse(readFileSync(resolve(repo, "package.json"), "utf8")) as Manifest;

  before(async () => {
    const out = await new Promise<string>((done, failed) => {
      execFile("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: repo, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
        if (error) failed(new Error(`npm pack --dry-run failed: ${stderr}`)); else done(stdout);
      });
    });
    files = (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
  });

  it("lists only the compiled library, decorators and Nest module, README, LICENSE and package.json", () => {
    const allowed = /^(?:README\.md|LICENSE|package\.json|dist\/(?:lib|decorators|nest-module)\/.+\.(?:js|d\.ts|js\.map))$/;
    expect(files.filter((file) => !allowed.test(file))).to.deep.equal([]);
    expect(files.filter((file) => /(?:^|\/)(?:test|bench|sample-app)\/|\.test\.|\.ts$(?<!\.d\.ts)/.test(file))).to.deep.equal([]);
    for (const needed of ["README.md", "LICENSE", "package.json", "dist/lib/index.js", "dist/decorators/index.js", "dist/nest-module/index.js"]) expect(files).to.include(needed);
  });

  it("holds every exports, typesVersions, main, types and bin target", () => {
    const targets = [manifest.main, manifest.types, ...Object.values(manifest.bin)];
    for (const entry of Object.values(manifest.exports)) targets.push(...(typeof entry === "string" ? [entry] : [entry.types, entry.default]));
    for (const paths of Object.values(manifest.typesVersions["*"]!)) targets.push(...paths);
    for (const target of targets) expect(files, target).to.include(target.replace(/^\.\//, ""));
  });

  it("gives every exports entry types first and a default condition, and a typesVersions path per subpath", () => {
    for (const [subpath, entry] of Object.entries(manifest.exports)) {
      if (subpath === "./package.json") continue;
      expect(entry, subpath).to.be.an("object");
      expect(Object.keys(entry), subpath).to.deep.equal(["types", "default"]);
      if (subpath !== ".") expect(manifest.typesVersions["*"]![subpath.slice(2)], subpath).to.deep.equal([(entry as { types: string }).types.replace(/^\.\//, "")]);
    }
  });

  it("claims the Node versions require(esm) needs", () => {
    expect(manifest.engines.node).to.equal(">=20.19");
  });
});
