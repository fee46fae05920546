import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  build,
  isolationProblem,
  npmInstall,
  npmRegistry,
  pack,
  packedManifest,
  pendingChangesets,
  publicPackages,
  ROOT,
  registryOnlyProxy,
  releaseDryRun,
  removeDir,
  runApp,
  scratchCopy,
  scratchDir,
  toolVersions,
  typecheckApp,
  writeApp,
} from "../scripts/packaging.mjs";

// Every step runs in a network namespace with only loopback; without one the test cannot promise
// that it reaches nothing but the npm registry, so it does not run — and under
// OPENRATH_REQUIRE_SERVICES (CI) fails, as @openrath/testing's serviceAvailable does (tooling
// cannot depend on it: every package depends on tooling).
const problem = isolationProblem();
if (problem && process.env.OPENRATH_REQUIRE_SERVICES && process.env.OPENRATH_REQUIRE_SERVICES !== "0") {
  throw new Error(
    `network namespaces unavailable: ${problem}. OPENRATH_REQUIRE_SERVICES is set, so this fails.`,
  );
}
const isolation = problem
  ? { available: false, reason: `network namespaces unavailable: ${problem}` }
  : { available: true, reason: "network namespaces available" };

const DEPENDENCY_FIELDS = ["dependencies", "peerDependencies", "optionalDependencies"] as const;

describe.skipIf(!isolation.available)(`the packages as a user installs them (${isolation.reason})`, () => {
  const packages = publicPackages();
  let work: string;
  let tarballs: Record<string, string>;
  let app: string;

  beforeAll(() => {
    work = scratchDir("packaging");
    app = join(work, "app");
  });
  afterAll(() => {
    if (work) removeDir(work);
  });

  it("every public package builds and packs, with no workspace: or catalog: range left", () => {
    expect(packages.map((p) => p.name)).toContain("@openrath/store-postgres");
    build(packages);
    tarballs = pack(packages, join(work, "tarballs"));
    for (const pkg of packages) {
      const manifest = packedManifest(tarballs[pkg.name]!);
      expect(manifest.name).toBe(pkg.name);
      for (const field of DEPENDENCY_FIELDS) {
        for (const [dep, range] of Object.entries((manifest[field] ?? {}) as Record<string, string>)) {
          expect(range, `${pkg.name} ${field} ${dep}`).not.toMatch(/^(workspace|catalog):/);
        }
      }
    }
  });

  it("the tarballs install into a new app with plain npm install, asking nothing but the registry", async () => {
    writeApp(app, packages, tarballs, toolVersions());
    const registry = npmRegistry();
    const proxy = await registryOnlyProxy([registry.hostPort]);
    try {
      await npmInstall(app, proxy.url);
    } finally {
      await proxy.close();
    }
    expect(proxy.refused).toEqual([]);
    // npm went through the proxy (unless its cache answered everything).
    expect(proxy.tunnelled.every((hostPort) => hostPort === registry.hostPort)).toBe(true);
    for (const pkg of packages) {
      expect(existsSync(join(app, "node_modules", pkg.name, "package.json")), pkg.name).toBe(true);
    }
  });

  it("the app type-checks against every entry under nodenext with skipLibCheck off", () => {
    const tsc = typecheckApp(app);
    // On failure, tsc's own report names the declaration file and the missing type.
    expect(`${tsc.stdout}${tsc.stderr}`.trim()).toBe("");
    expect(tsc.status).toBe(0);
  });

  it("the app loads every entry and runs a durable workflow to success on the embedded PGlite store", () => {
    expect(runApp(app)).toEqual({ status: "succeeded", replies: ["hi", "hello", "bye"] });
  });

  it("a release dry run versions every package in lockstep, writes each CHANGELOG and publishes nothing", () => {
    const scratch = join(work, "repo");
    scratchCopy(scratch, packages);
    const changesets = pendingChangesets(scratch);
    const release = releaseDryRun(scratch);
    const versions = new Set<string>();
    for (const pkg of packages) {
      const dir = join(scratch, pkg.dir.slice(ROOT.length + 1));
      const version = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version as string;
      versions.add(version);
      if (changesets.length === 0) continue;
      expect(version, pkg.name).not.toBe(pkg.version);
      const changelog = readFileSync(join(dir, "CHANGELOG.md"), "utf8");
      expect(changelog, pkg.name).toContain(`## ${version}`);
      // Each changeset's first line is in the CHANGELOG of every package it names.
      for (const changeset of changesets.filter((c) => c.packages.includes(pkg.name))) {
        const firstLine = changeset.summary.split("\n")[0]!.trim();
        expect(changelog, `${pkg.name} has ${changeset.file}`).toContain(firstLine);
      }
      expect(`${release.publish.stdout}${release.publish.stderr}`, pkg.name).toContain(
        `${pkg.name}@${version}`,
      );
    }
    // One fixed group: one version for all.
    expect([...versions]).toHaveLength(1);
    // No major release unless a changeset asks for one (a peer's minor bump must not become a
    // major of its dependents: internal peer ranges span the 0.x line, ADR 0025).
    const major = (v: string) => Number(v.split(".")[0]);
    if (!changesets.some((c) => c.bumps.includes("major")))
      expect(major([...versions][0]!)).toBe(major(packages[0]!.version));
    expect(release.requests.filter((r: string) => r.startsWith("PUT"))).toEqual([]);
  });
});

describe("the registry-only proxy npm install goes through", () => {
  it("refuses a tunnel to any host but the allowed one, before connecting anywhere", async () => {
    const { request } = await import("node:http");
    const proxy = await registryOnlyProxy(["127.0.0.1:9"]);
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(proxy.url, { method: "CONNECT", path: "elsewhere.invalid:443" });
        req.on("connect", (res, socket) => {
          socket.destroy();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject);
        req.end();
      });
      expect(status).toBe(403);
      expect(proxy.refused).toEqual(["CONNECT elsewhere.invalid:443"]);
      expect(proxy.tunnelled).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});
