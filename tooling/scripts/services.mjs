// Starts the real services the test suite talks to and returns the environment variables that
// point the tests at them. Each service is installed from Debian's packages when missing (the
// machine is fresh in CI) and started on loopback only. With `required`, a service that cannot be
// started is an error; otherwise the tests that need it skip with the reason.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let aptUpdated = false;

/** The repository root (this file lives in tooling/scripts). */
const SCRIPTS_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Whether `command` is on PATH. */
export function have(command) {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}

/** Installs Debian packages (as root, once per run `apt-get update` first). */
export function aptInstall(...packages) {
  if (process.getuid?.() !== 0) throw new Error(`not root, cannot apt-get install ${packages.join(" ")}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  if (!aptUpdated) {
    execFileSync("apt-get", ["update", "-qq"], { stdio: ["ignore", "ignore", "inherit"], env });
    aptUpdated = true;
  }
  execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...packages], {
    stdio: ["ignore", "ignore", "inherit"],
    env,
  });
}

/** Services the suite needs, by name: each installs/starts its service and returns env for the tests. */
const SERVICES = {
  /** zsh and fish, whose completion scripts the CLI tests load into the real shells. */
  async shells() {
    const missing = ["zsh", "fish"].filter((shell) => !have(shell));
    if (missing.length > 0) aptInstall(...missing);
    for (const shell of ["zsh", "fish"]) if (!have(shell)) throw new Error(`${shell} did not install`);
    return { OPENRATH_TEST_SHELLS: "1" };
  },
  /** bubblewrap, for the local sandbox's isolated mode. */
  async bubblewrap() {
    if (!have("bwrap")) aptInstall("bubblewrap");
    const probe = spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-net", "--dev", "/dev", "true"], {
      encoding: "utf8",
    });
    if (probe.status !== 0) throw new Error(`bwrap cannot create a sandbox here: ${probe.stderr.trim()}`);
    return { OPENRATH_TEST_BWRAP: "1" };
  },

  /**
   * A Docker engine on the local socket, for the docker sandbox. Reuses a daemon that already
   * answers; otherwise installs Debian's docker.io and starts `dockerd` detached (no bridge, no
   * iptables: every test container runs with networking off). No registry is reachable, so the
   * test image is imported from a busybox root filesystem built here.
   */
  async docker() {
    if (!dockerAnswers()) {
      if (!have("dockerd")) aptInstall("docker.io");
      await startDetached("dockerd", "dockerd", ["--bridge=none", "--iptables=false"], {
        log: join(tmpdir(), "openrath-dockerd.log"),
        answers: dockerAnswers,
        intervalMs: 500,
      });
    }
    if (spawnSync("docker", ["image", "inspect", DOCKER_TEST_IMAGE], { stdio: "ignore" }).status !== 0) {
      importBusyboxImage();
    }
    removeOrphanedDockerSandboxes();
    return { OPENRATH_TEST_DOCKER: "1", OPENRATH_TEST_DOCKER_IMAGE: DOCKER_TEST_IMAGE };
  },

  /**
   * Chromium for the browser tests (the CLI's lineage viewer), driven by playwright-core. Debian's
   * package only: playwright's own browser downloads are never used.
   */
  async chromium() {
    if (!existsSync("/usr/bin/chromium")) aptInstall("chromium");
    const probe = spawnSync("/usr/bin/chromium", ["--version"], { encoding: "utf8", timeout: 30_000 });
    if (probe.status !== 0) throw new Error(`chromium --version failed: ${(probe.stderr ?? "").trim()}`);
    return { OPENRATH_TEST_CHROMIUM: "/usr/bin/chromium" };
  },

  /**
   * An S3-compatible server for the artifact tests: s3rver (a devDependency of
   * @openrath/artifacts-s3, so `pnpm install` brings it) on 127.0.0.1, a free port and a temp
   * directory, started detached like dockerd. One that an earlier run left answering is reused.
   */
  async s3({ root }) {
    const state = join(tmpdir(), "openrath-s3rver.json");
    const known = await reusable(state, (k) => s3Answers(k.port));
    if (known) return s3Env(known.port);
    const launcher = join(root, "packages", "artifacts-s3", "src", "testing", "serve-s3rver.mjs");
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), "openrath-s3rver-data-"));
    const child = await startDetached(
      "s3rver",
      process.execPath,
      [launcher, "--dir", dir, "--port", String(port)],
      {
        log: join(tmpdir(), "openrath-s3rver.log"),
        answers: () => s3Answers(port),
      },
    );
    writeFileSync(state, JSON.stringify({ port, pid: child.pid, dir }));
    return s3Env(port);
  },

  /**
   * PostgreSQL (Debian's) for the run-store tests: a cluster in a temp directory owned by the
   * `postgres` user (the server refuses to run as root), listening on 127.0.0.1 on a free port,
   * trust auth on loopback only, started detached. One that an earlier run left answering is reused.
   */
  async postgres() {
    const state = join(tmpdir(), "openrath-postgres.json");
    const reused = await reusable(state, postgresAnswers);
    if (reused) return postgresEnv(reused);
    const bin = postgresBin();
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), "openrath-postgres-"));
    const asPostgres = process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--"] : [];
    if (asPostgres.length > 0) execFileSync("chown", ["postgres:postgres", dir]);
    const data = join(dir, "data");
    const init = spawnSync(
      asPostgres[0] ?? join(bin, "initdb"),
      [
        ...asPostgres.slice(1),
        ...(asPostgres.length > 0 ? [join(bin, "initdb")] : []),
        "-D",
        data,
        "-U",
        "postgres",
        "--auth=trust",
        "-E",
        "UTF8",
        "--no-sync",
      ],
      { encoding: "utf8" },
    );
    if (init.status !== 0) throw new Error(`initdb failed: ${(init.stderr || init.stdout).trim()}`);
    const log = join(dir, "server.log");
    const args = [
      join(bin, "postgres"),
      "-D",
      data,
      "-k",
      dir,
      "-p",
      String(port),
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "max_connections=300",
    ];
    const known = { port, dir, bin };
    await startDetached(
      "postgres",
      asPostgres[0] ?? args[0],
      [...asPostgres.slice(1), ...(asPostgres.length > 0 ? args : args.slice(1))],
      { log, answers: () => postgresAnswers(known) },
    );
    writeFileSync(state, JSON.stringify(known));
    return postgresEnv(known);
  },

  /**
   * Redis (Debian's redis-server) for the signals tests: 127.0.0.1 on a free port, no persistence
   * (Redis never holds state here), started detached like dockerd. One that an earlier run left
   * answering is reused.
   */
  async redis() {
    const state = join(tmpdir(), "openrath-redis.json");
    const known = await reusable(state, (k) => redisAnswers(k.port));
    if (known) return redisEnv(known.port);
    if (!have("redis-server")) aptInstall("redis-server");
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), "openrath-redis-"));
    const child = await startDetached(
      "redis-server",
      "redis-server",
      ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no", "--dir", dir],
      { log: join(dir, "redis.log"), answers: () => redisAnswers(port), intervalMs: 100 },
    );
    writeFileSync(state, JSON.stringify({ port, pid: child.pid, dir }));
    return redisEnv(port);
  },
};

/**
 * The state an earlier run wrote to `file` (JSON), when the service it describes still answers;
 * otherwise `undefined`.
 */
async function reusable(file, answers) {
  if (!existsSync(file)) return undefined;
  const known = JSON.parse(readFileSync(file, "utf8"));
  return (await answers(known)) ? known : undefined;
}

/**
 * Starts `command` detached (it outlives this process, like a system service) with its output in
 * `log`, and waits up to 30 s until `answers()` holds. A service that exits at once (a port or pid
 * file taken, a bad flag) is reported with its log instead of waiting out the deadline.
 */
async function startDetached(name, command, args, { log, answers, intervalMs = 200 }) {
  const out = openSync(log, "a");
  const child = spawn(command, args, { detached: true, stdio: ["ignore", out, out] });
  closeSync(out);
  let exited = "";
  child.on("error", (error) => (exited = error.message));
  child.on("exit", (code, signal) => (exited = `${name} exited (${code ?? signal})`));
  child.unref();
  const deadline = Date.now() + 30_000;
  while (!(await answers())) {
    if (exited) throw new Error(`${exited}; see ${log}`);
    if (Date.now() > deadline) throw new Error(`${name} did not answer within 30 s; see ${log}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return child;
}

/** The environment that points the signals tests at the Redis on `port`. */
function redisEnv(port) {
  return { OPENRATH_TEST_REDIS_URL: `redis://127.0.0.1:${port}` };
}

/** Whether a Redis server answers `PING` on 127.0.0.1:`port` (plain RESP, no client library). */
function redisAnswers(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let reply = "";
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.on("data", (data) => {
      reply += data.toString("latin1");
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"));
    });
  });
}

/** The directory holding PostgreSQL's server binaries, installing Debian's package when missing. */
function postgresBin() {
  const find = () => {
    const root = "/usr/lib/postgresql";
    if (!existsSync(root)) return undefined;
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "postgres")))
      .sort((a, b) => Number(b) - Number(a));
    return versions[0] === undefined ? undefined : join(root, versions[0], "bin");
  };
  const found = find();
  if (found) return found;
  aptInstall("postgresql");
  const installed = find();
  if (!installed) throw new Error("the postgresql package installed no server binaries");
  return installed;
}

/** Whether the test cluster answers (`pg_isready` against 127.0.0.1). */
function postgresAnswers({ port, bin }) {
  const probe = spawnSync(
    join(bin, "pg_isready"),
    ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres"],
    { stdio: "ignore", timeout: 10_000 },
  );
  return probe.status === 0;
}

/** The environment that points the store tests at the cluster. */
function postgresEnv({ port, bin }) {
  return {
    OPENRATH_TEST_POSTGRES_URL: `postgres://postgres@127.0.0.1:${port}/postgres`,
    OPENRATH_TEST_POSTGRES_BIN: bin,
  };
}

/** The environment that points the artifact tests at the s3rver on `port` (its fixed credentials). */
function s3Env(port) {
  return {
    OPENRATH_TEST_S3_ENDPOINT: `http://127.0.0.1:${port}`,
    OPENRATH_TEST_S3_REGION: "us-east-1",
    OPENRATH_TEST_S3_ACCESS_KEY_ID: "S3RVER",
    OPENRATH_TEST_S3_SECRET_ACCESS_KEY: "S3RVER",
  };
}

/** Whether an S3-compatible server answers on 127.0.0.1:`port`. */
async function s3Answers(port) {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) });
    const body = await response.text();
    return body.includes("ListAllMyBucketsResult") || body.includes("<Error>");
  } catch {
    return false;
  }
}

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The image the docker sandbox tests run: busybox's applets (sh, awk, find, …) and nothing else. */
const DOCKER_TEST_IMAGE = "openrath-test/busybox:1";

/**
 * Removes the sandbox containers of test processes that died before closing them (a killed
 * run), through the docker backend's own `removeOrphanedSandboxes()`, so one crashed run does
 * not leave containers (and their pids and memory) to the next. Best effort: a failure is
 * reported, not fatal.
 */
function removeOrphanedDockerSandboxes() {
  const result = spawnSync(
    process.execPath,
    [
      "--conditions=@openrath/source",
      "--import",
      "tsx",
      "-e",
      'import("@openrath/sandbox-docker").then(async (m) => { const removed = await m.removeOrphanedSandboxes(); if (removed.length > 0) console.error("removed " + removed.length + " orphaned sandbox container(s)"); })',
    ],
    {
      cwd: join(SCRIPTS_ROOT, "packages", "sandbox-docker"),
      stdio: ["ignore", "inherit", "pipe"],
      encoding: "utf8",
      timeout: 60_000,
    },
  );
  if (result.status !== 0) {
    process.stderr.write(
      `! removeOrphanedSandboxes failed: ${(result.stderr ?? "").trim().split("\n").pop()}\n`,
    );
  }
}

/** Whether a Docker daemon answers on the default socket. */
function dockerAnswers() {
  return spawnSync("docker", ["version"], { stdio: "ignore", timeout: 10_000 }).status === 0;
}

/** Builds a root filesystem from Debian's static busybox and imports it as {@link DOCKER_TEST_IMAGE}. */
function importBusyboxImage() {
  if (!existsSync("/bin/busybox")) aptInstall("busybox-static");
  const root = mkdtempSync(join(tmpdir(), "openrath-busybox-"));
  try {
    for (const dir of ["bin", "tmp", "workspace", "etc", "proc", "dev", "sys", "root"]) {
      mkdirSync(join(root, dir), { recursive: true });
    }
    chmodSync(join(root, "tmp"), 0o1777);
    copyFileSync("/bin/busybox", join(root, "bin", "busybox"));
    chmodSync(join(root, "bin", "busybox"), 0o755);
    const applets = execFileSync("/bin/busybox", ["--list"], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean);
    for (const applet of applets) {
      if (applet !== "busybox") symlinkSync("busybox", join(root, "bin", applet));
    }
    // Many scripts expect /usr/bin/env and /usr/bin/* to exist.
    mkdirSync(join(root, "usr"), { recursive: true });
    symlinkSync("../bin", join(root, "usr", "bin"));
    symlinkSync("bin", join(root, "sbin"));
    writeFileSync(
      join(root, "etc", "passwd"),
      "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
    );
    writeFileSync(join(root, "etc", "group"), "root:x:0:\nnogroup:x:65534:\n");
    execFileSync(
      "sh",
      [
        "-c",
        `tar -C "$1" -c . | docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["/bin/sh"]' - "$2"`,
        "sh",
        root,
        DOCKER_TEST_IMAGE,
      ],
      { stdio: ["ignore", "ignore", "inherit"] },
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * @param {{ root: string, required: boolean }} options
 * @returns {Promise<Record<string, string>>} environment for the test run
 */
export async function ensureServices({ root, required }) {
  const env = {};
  for (const [name, start] of Object.entries(SERVICES)) {
    try {
      Object.assign(env, await start({ root }));
    } catch (error) {
      if (required) throw new Error(`${name} could not be started: ${error.message}`);
      process.stderr.write(`! ${name} unavailable (${error.message}); tests that need it will skip\n`);
    }
  }
  return env;
}
