#!/usr/bin/env node
/**
 * The packages as a user gets them: build and `pnpm pack` every public package, install the
 * tarballs into a new app outside the repository with plain `npm install`, type-check the app
 * (`moduleResolution: nodenext`, `skipLibCheck: false`) against every entry of every package, run a
 * durable workflow on the embedded PGlite store, and dry-run a release (`changeset version`, then
 * `pnpm -r publish --dry-run`) in a scratch copy of the repository.
 *
 * Network: every step but `npm install` runs in a network namespace of its own with only loopback
 * (`unshare -n`), so it reaches nothing at all; the release dry run asks a registry on loopback
 * that holds no package (`offline-registry.mjs`). `npm install` goes through a proxy on loopback
 * that lets through the configured npm registry only and records anything else it was asked for,
 * with lifecycle scripts off.
 *
 * `tooling/test/packaging.test.ts` runs these steps and asserts on them; run as a script
 * (`pnpm packaging`) it does the same and prints what it found.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, request } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (this file lives in tooling/scripts). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const OFFLINE_REGISTRY = join(dirname(fileURLToPath(import.meta.url)), "offline-registry.mjs");

/** Keeps tools that phone home quiet (they could not reach anything anyway). */
const QUIET = {
  TURBO_TELEMETRY_DISABLED: "1",
  TURBO_NO_UPDATE_NOTIFIER: "1",
  DO_NOT_TRACK: "1",
  npm_config_update_notifier: "false",
  npm_config_audit: "false",
  npm_config_fund: "false",
};

/** A command's outcome. */
function outcome(command, args, result) {
  return {
    command: [command, ...args].join(" "),
    status: result.status ?? (result.signal ? 128 : 1),
    stdout: result.stdout ?? "",
    stderr: result.stderr ?? (result.error ? String(result.error.message) : ""),
  };
}

/** Throws with the command's output unless it exited 0. */
export function must(result) {
  if (result.status !== 0) {
    throw new Error(
      `${result.command} exited ${result.status}\n${result.stdout.slice(-6000)}\n${result.stderr.slice(-6000)}`,
    );
  }
  return result;
}

/**
 * Runs a command without blocking this process, so that a proxy served from it keeps answering
 * (used for `npm install`, the one step with network access).
 */
function runAsync(command, args, { cwd, env = {}, timeoutMs = 600_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...QUIET, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve({ command: [command, ...args].join(" "), status: 127, stdout, stderr: error.message });
    });
    child.once("close", (status, signal) => {
      clearTimeout(timer);
      resolve({
        command: [command, ...args].join(" "),
        status: status ?? (signal ? 128 : 1),
        stdout,
        stderr,
      });
    });
  });
}

/**
 * Runs a command in a network namespace of its own: loopback up, no other interface, so nothing it
 * does can leave the machine.
 */
export function runIsolated(command, args, { cwd, env = {}, timeoutMs = 600_000 } = {}) {
  const wrapper = ["-n", "sh", "-c", 'ip link set lo up && exec "$@"', "isolated", command, ...args];
  const result = spawnSync("unshare", wrapper, {
    cwd,
    env: { ...process.env, ...QUIET, ...env },
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    timeout: timeoutMs,
  });
  return outcome(command, args, result);
}

/** Why commands cannot be isolated here, or undefined when they can (root, `unshare`, `ip`). */
export function isolationProblem() {
  const probe = spawnSync("unshare", ["-n", "sh", "-c", "ip link set lo up"], { encoding: "utf8" });
  if (probe.error) return `unshare is not available: ${probe.error.message}`;
  if (probe.status !== 0) return `unshare -n failed: ${probe.stderr.trim() || probe.status}`;
  return undefined;
}

/**
 * The public (not `private`) workspace packages: name, directory, version, and the import
 * specifiers of their entries (every `exports` key but `./package.json`).
 */
export function publicPackages(root = ROOT) {
  const found = [];
  for (const group of ["packages", "apps"]) {
    const base = join(root, group);
    if (!existsSync(base)) continue;
    for (const entry of readdirSync(base).sort()) {
      const file = join(base, entry, "package.json");
      if (!existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, "utf8"));
      if (manifest.private) continue;
      const entries = Object.keys(manifest.exports ?? { ".": "" })
        .filter((key) => key !== "./package.json" && !key.includes("*"))
        .map((key) => (key === "." ? manifest.name : `${manifest.name}/${key.slice(2)}`));
      found.push({ name: manifest.name, dir: join(base, entry), version: manifest.version, entries });
    }
  }
  return found;
}

/** Builds the packages (and what they depend on) with turbo; its cache is used when warm. */
export function build(packages, root = ROOT) {
  const filters = packages.map((p) => `--filter=${p.name}`);
  return must(
    runIsolated("pnpm", ["exec", "turbo", "run", "build", ...filters, "--output-logs=errors-only"], {
      cwd: root,
    }),
  );
}

/** `pnpm pack` of each package into `dest`; returns the tarball of each, by package name. */
export function pack(packages, dest) {
  mkdirSync(dest, { recursive: true });
  const tarballs = {};
  for (const pkg of packages) {
    const result = must(
      runIsolated("pnpm", ["pack", "--json", "--pack-destination", dest], { cwd: pkg.dir }),
    );
    const info = JSON.parse(result.stdout.slice(result.stdout.indexOf("{")));
    tarballs[pkg.name] = info.filename.startsWith("/") ? info.filename : join(dest, info.filename);
  }
  return tarballs;
}

/** The manifest inside a tarball, read with `tar` (no network, nothing unpacked on disk). */
export function packedManifest(tarball) {
  const result = must(runIsolated("tar", ["-xzOf", tarball, "package/package.json"]));
  return JSON.parse(result.stdout);
}

/**
 * A forward proxy on loopback that lets through `allowed` (`host:port` of the registry) and
 * refuses everything else. `refused` lists what was asked for and refused; `tunnelled` what went
 * through.
 */
export async function registryOnlyProxy(allowed) {
  const tunnelled = [];
  const refused = [];
  const server = createServer((req, res) => {
    // A plain-HTTP proxy request (an http:// registry): forwarded only to an allowed host.
    let target;
    try {
      target = new URL(req.url);
    } catch {
      target = undefined;
    }
    const hostPort = target ? `${target.hostname}:${target.port || 80}` : String(req.url);
    if (!target || !allowed.includes(hostPort)) {
      refused.push(`${req.method} ${hostPort}`);
      res.writeHead(403).end();
      return;
    }
    tunnelled.push(hostPort);
    const upstream = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  server.on("connect", (req, socket, head) => {
    const hostPort = String(req.url);
    socket.on("error", () => {});
    if (!allowed.includes(hostPort)) {
      refused.push(`CONNECT ${hostPort}`);
      socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    tunnelled.push(hostPort);
    const at = hostPort.lastIndexOf(":");
    const upstream = connect(Number(hostPort.slice(at + 1)), hostPort.slice(0, at), () => {
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on("error", () => socket.destroy());
    socket.on("close", () => upstream.destroy());
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    tunnelled,
    refused,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** The npm registry npm is configured with (its `host:port`, for the proxy). */
export function npmRegistry() {
  const result = must(runIsolated("npm", ["config", "get", "registry"]));
  const url = new URL(result.stdout.trim());
  return { url: url.href, hostPort: `${url.hostname}:${url.port || (url.protocol === "https:" ? 443 : 80)}` };
}

const MAIN = `import { Session } from "@openrath/core";
import { createDurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import { pgliteStore } from "@openrath/store-postgres";

// Every entry of every package loads at run time as it is installed.
for (const entry of ENTRIES) await import(entry);

const store = await pgliteStore({ dataDir: ".openrath/db" });
const runtime = createDurableRuntime({ store });
const workflow = defineWorkflow("packaged")
  .step("greet", (session: Session) => session.append({ kind: "assistant", content: "hello" }), {
    entry: true,
    next: "close",
  })
  .step("close", (session: Session) => session.append({ kind: "assistant", content: "bye" }));
await runtime.register(workflow);
await runtime.worker().start();
const run = await runtime.submit("packaged", Session.fromUserMessage("hi"));
const result = await runtime.result(run.id);
const status = (await runtime.store.getRun(run.id))?.status;
await runtime.close();
process.stdout.write(\`\${JSON.stringify({ status, replies: result.messages().map((m) => m.content) })}\\n\`);
`;

/**
 * Writes the app: a package.json naming each tarball (no overrides), a tsconfig with
 * `nodenext` and `skipLibCheck: false`, `src/entries.ts` importing the types of every entry, and
 * `src/main.ts` loading every entry and running a two-step durable workflow on PGlite.
 */
export function writeApp(appDir, packages, tarballs, { typescript, typesNode }) {
  mkdirSync(join(appDir, "src"), { recursive: true });
  const dependencies = Object.fromEntries(packages.map((p) => [p.name, `file:${tarballs[p.name]}`]));
  const manifest = {
    name: "openrath-packaging-app",
    private: true,
    type: "module",
    dependencies,
    devDependencies: { typescript, "@types/node": typesNode },
  };
  writeFileSync(join(appDir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  const tsconfig = {
    compilerOptions: {
      target: "es2022",
      module: "nodenext",
      moduleResolution: "nodenext",
      strict: true,
      skipLibCheck: false,
      types: ["node"],
      rootDir: "src",
      outDir: "dist",
    },
    include: ["src"],
  };
  writeFileSync(join(appDir, "tsconfig.json"), `${JSON.stringify(tsconfig, null, 2)}\n`);
  const entries = packages.flatMap((p) => p.entries);
  writeFileSync(
    join(appDir, "src", "entries.ts"),
    `${entries.map((e, i) => `import type * as entry${i} from "${e}";`).join("\n")}\n\nexport type Entries = [${entries.map((_, i) => `typeof entry${i}`).join(", ")}];\n`,
  );
  writeFileSync(
    join(appDir, "src", "main.ts"),
    `const ENTRIES: readonly string[] = ${JSON.stringify(entries)};\n\n${MAIN}`,
  );
  return entries;
}

/** `npm install` in the app, through `proxyUrl`, lifecycle scripts off. */
export async function npmInstall(appDir, proxyUrl) {
  return must(
    await runAsync(
      "npm",
      ["install", "--ignore-scripts", "--no-audit", "--no-fund", "--no-update-notifier"],
      {
        cwd: appDir,
        env: {
          npm_config_proxy: proxyUrl,
          npm_config_https_proxy: proxyUrl,
          npm_config_noproxy: "",
          HTTP_PROXY: proxyUrl,
          HTTPS_PROXY: proxyUrl,
          NO_PROXY: "",
        },
      },
    ),
  );
}

/** Type-checks and compiles the app with its own TypeScript; returns tsc's outcome (0: clean). */
export function typecheckApp(appDir) {
  return runIsolated(
    process.execPath,
    [join(appDir, "node_modules", "typescript", "bin", "tsc"), "-p", appDir],
    {
      cwd: appDir,
    },
  );
}

/** Runs the compiled app; returns what it printed last (`{ status, replies }`). */
export function runApp(appDir) {
  const result = must(runIsolated(process.execPath, [join(appDir, "dist", "main.js")], { cwd: appDir }));
  const last = result.stdout.trim().split("\n").at(-1) ?? "";
  return JSON.parse(last);
}

/**
 * A scratch copy of the repository: its files (tracked, and untracked but not ignored), the built
 * `dist` of each public package, and the workspace's `node_modules` links (root `node_modules`
 * linked, each package's links recreated), so pnpm and changesets run there as in the repository.
 */
export function scratchCopy(dest, packages, root = ROOT) {
  const listed = must(
    runIsolated("git", ["ls-files", "-z", "-c", "-o", "--exclude-standard"], { cwd: root }),
  );
  for (const file of listed.stdout.split("\0").filter(Boolean)) {
    const from = join(root, file);
    if (!existsSync(from) || lstatSync(from).isDirectory()) continue;
    mkdirSync(dirname(join(dest, file)), { recursive: true });
    cpSync(from, join(dest, file), { verbatimSymlinks: true });
  }
  for (const pkg of packages) {
    const dist = join(pkg.dir, "dist");
    if (existsSync(dist)) cpSync(dist, join(dest, relative(root, dist)), { recursive: true });
  }
  symlinkSync(join(root, "node_modules"), join(dest, "node_modules"));
  const workspaces = ["packages", "apps"].flatMap((group) =>
    existsSync(join(root, group)) ? readdirSync(join(root, group)).map((d) => join(group, d)) : [],
  );
  for (const workspace of [...workspaces, "tooling"]) {
    const modules = join(root, workspace, "node_modules");
    if (!existsSync(modules)) continue;
    copyLinks(modules, join(dest, workspace, "node_modules"));
  }
}

/** Recreates the symbolic links of a pnpm `node_modules` (scopes one level down), nothing else. */
function copyLinks(from, to) {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    const path = join(from, name);
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) symlinkSync(readlinkSync(path), join(to, name));
    else if (stat.isDirectory() && name.startsWith("@")) copyLinks(path, join(to, name));
  }
}

/** The changesets waiting in `.changeset/`: their file, the packages they name, their summary. */
export function pendingChangesets(root) {
  const dir = join(root, ".changeset");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".md") && f !== "README.md")
    .map((file) => {
      const text = readFileSync(join(dir, file), "utf8");
      const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
      const bumps = match
        ? [...match[1].matchAll(/^\s*["']?([^"':]+)["']?\s*:\s*(major|minor|patch)\s*$/gm)]
        : [];
      const summary = match ? match[2].trim() : "";
      return { file, packages: bumps.map((m) => m[1]), bumps: bumps.map((m) => m[2]), summary };
    });
}

/**
 * `changeset version`, then `pnpm -r publish --dry-run --no-git-checks`, in `scratch`, isolated;
 * the publish asks only the empty registry on loopback.
 */
export function releaseDryRun(scratch, root = ROOT) {
  const changeset = join(root, "node_modules", "@changesets", "cli", "bin.js");
  const version = must(runIsolated(process.execPath, [changeset, "version"], { cwd: scratch }));
  const publish = must(
    runIsolated(
      process.execPath,
      [OFFLINE_REGISTRY, "pnpm", "-r", "publish", "--dry-run", "--no-git-checks", "--reporter=append-only"],
      { cwd: scratch },
    ),
  );
  const log = publish.stderr.trim().split("\n").at(-1) ?? "";
  const requests = log.startsWith("offline-registry: ")
    ? JSON.parse(log.slice("offline-registry: ".length)).requests
    : [];
  return { version, publish, requests };
}

/** A new temporary directory outside the repository. */
export function scratchDir(label) {
  return mkdtempSync(join(tmpdir(), `openrath-${label}-`));
}

/** Removes a directory made by {@link scratchDir}. */
export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

async function main() {
  const problem = isolationProblem();
  if (problem) throw new Error(`packaging: ${problem} (the steps run in a network namespace)`);
  const work = scratchDir("packaging");
  const packages = publicPackages();
  try {
    build(packages);
    const tarballs = pack(packages, join(work, "tarballs"));
    const registry = npmRegistry();
    const proxy = await registryOnlyProxy([registry.hostPort]);
    const app = join(work, "app");
    writeApp(app, packages, tarballs, toolVersions());
    try {
      await npmInstall(app, proxy.url);
    } finally {
      await proxy.close();
    }
    if (proxy.refused.length > 0) throw new Error(`npm asked for more than the registry: ${proxy.refused}`);
    const tsc = typecheckApp(app);
    if (tsc.status !== 0) throw new Error(`the app does not type-check:\n${tsc.stdout}${tsc.stderr}`);
    process.stdout.write(`packaging: app ran: ${JSON.stringify(runApp(app))}\n`);
    const scratch = join(work, "repo");
    scratchCopy(scratch, packages);
    const release = releaseDryRun(scratch);
    process.stdout.write(
      `packaging: release dry run asked the empty registry ${release.requests.length} times\n`,
    );
    process.stdout.write(`packaging: ${packages.length} packages ok\n`);
  } finally {
    removeDir(work);
  }
}

/** The TypeScript and @types/node versions the repository pins (the app uses the same). */
export function toolVersions(root = ROOT) {
  const catalog = readFileSync(join(root, "pnpm-workspace.yaml"), "utf8");
  const pinned = (name) => {
    const match = new RegExp(`^\\s*"?${name.replace("/", "\\/")}"?:\\s*([^\\s]+)\\s*$`, "m").exec(catalog);
    if (!match) throw new Error(`${name} is not in the pnpm catalog`);
    return match[1];
  };
  return { typescript: pinned("typescript"), typesNode: pinned("@types/node") };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exit(1);
  });
}
