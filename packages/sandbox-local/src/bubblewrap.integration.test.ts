import { spawn } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { OpenRathError, type SandboxV1 } from "@openrath/core";
import { serviceAvailable } from "@openrath/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { checkBubblewrap } from "./internal/check-bubblewrap.js";
import { localSandbox } from "./local-sandbox.js";

const check = await serviceAvailable("bubblewrap", () => checkBubblewrap("bwrap").then(() => true));

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "openrath-local-test-")));
const opened: SandboxV1[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((sandbox) => sandbox.close()));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function open(
  isolation: "none" | "bubblewrap",
  spec: Record<string, unknown> = {},
): Promise<SandboxV1> {
  const backend = localSandbox({ isolation });
  const sandbox = await backend.open(backend.parseSpec!(spec));
  opened.push(sandbox);
  return sandbox;
}

/** Pids of live processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
      const state = /^\d+ \(.*\) (\w)/.exec(readFileSync(`/proc/${entry}/stat`, "utf8"))?.[1];
      if (cmdline.includes(marker) && state !== "Z" && Number(entry) !== process.pid)
        found.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** Connects from inside the sandbox to 127.0.0.1:port with this Node.js; prints reached, refused or timeout. */
function connectScript(port: number): string {
  return `const socket = require("node:net").connect(${port}, "127.0.0.1");
socket.on("connect", () => { console.log("reached"); process.exit(0); });
socket.on("error", (error) => { console.log("error " + error.code); process.exit(0); });
setTimeout(() => { console.log("timeout"); process.exit(0); }, 3000);`;
}

describe.skipIf(!check.available)(`bubblewrap isolation (${check.reason})`, () => {
  let server: Server;
  let port = 0;
  let connections = 0;
  beforeAll(async () => {
    server = createServer((socket) => {
      connections++;
      socket.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("makes the host root read-only while the workspace stays writable", async () => {
    const sandbox = await open("bubblewrap");
    const name = `openrath-bwrap-${process.pid}-${Date.now()}`;
    const result = await sandbox.exec(`touch /usr/${name}`);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toMatch(/Read-only file system/);
    expect(existsSync(`/usr/${name}`)).toBe(false);
    expect((await sandbox.exec("echo inside > made-inside.txt")).exitCode).toBe(0);
    expect(readFileSync(join(sandbox.workspace, "made-inside.txt"), "utf8")).toBe("inside\n");
  });

  it("drops every capability, so even a root caller cannot remount the root read-write", async () => {
    const sandbox = await open("bubblewrap");
    const caps = await sandbox.exec("grep CapEff /proc/self/status");
    expect(caps.stdout).toMatch(/CapEff:\s+0+\n/);
    const remount = await sandbox.exec("mount -o remount,rw / 2>&1; touch /openrath-remounted");
    expect(remount.exitCode).not.toBe(0);
    expect(existsSync("/openrath-remounted")).toBe(false);
  });

  it("gives the sandbox a private /tmp, kept across its commands and removed on close", async () => {
    const sandbox = await open("bubblewrap");
    const name = `openrath-bwrap-tmp-${process.pid}-${Date.now()}`;
    expect((await sandbox.exec(`echo private > /tmp/${name}`)).exitCode).toBe(0);
    expect(existsSync(join("/tmp", name)), "the file written to /tmp inside is on the host's /tmp").toBe(
      false,
    );
    expect((await sandbox.exec(`cat /tmp/${name}`)).stdout).toBe("private\n");
    const other = await open("bubblewrap");
    expect((await other.exec(`cat /tmp/${name}`)).exitCode, "another sandbox sees this one's /tmp").not.toBe(
      0,
    );
    expect((await sandbox.exec('printf %s "$TMPDIR"')).stdout).toBe("/tmp");
  });

  it("cuts the network: a listener on the host's 127.0.0.1 is unreachable inside, reachable without isolation", async () => {
    const before = connections;
    const isolated = await open("bubblewrap");
    const inside = await isolated.runCode(connectScript(port), "javascript");
    expect(inside.stdout.trim()).not.toBe("reached");
    expect(connections).toBe(before);
    const plain = await open("none");
    const outside = await plain.runCode(connectScript(port), "javascript");
    expect(outside.stdout.trim()).toBe("reached");
    await sleep(50);
    expect(connections).toBe(before + 1);
  });

  it("does not pass the host environment in by default", async () => {
    process.env.OPENRATH_BWRAP_TEST_SECRET = "secret";
    try {
      const sandbox = await open("bubblewrap", { env: { GIVEN: "yes" } });
      const result = await sandbox.exec(
        `printf "%s|%s|%s" "\${OPENRATH_BWRAP_TEST_SECRET:-unset}" "$GIVEN" "$HOME"`,
      );
      expect(result.stdout).toBe(`unset|yes|${sandbox.workspace}`);
      const inherited = await open("bubblewrap", { inheritEnv: true });
      expect((await inherited.exec('printf %s "$OPENRATH_BWRAP_TEST_SECRET"')).stdout).toBe("secret");
    } finally {
      delete process.env.OPENRATH_BWRAP_TEST_SECRET;
    }
  });

  it("lets a spec of an unisolated backend tighten to bubblewrap", async () => {
    const backend = localSandbox();
    const sandbox = await backend.open(backend.parseSpec!({ isolation: "bubblewrap" }));
    opened.push(sandbox);
    const probe = await sandbox.runCode(connectScript(port), "javascript");
    expect(probe.stdout.trim()).not.toBe("reached");
  });

  it.each(["none", "bubblewrap"] as const)(
    "a timeout leaves no process of the tree behind (%s)",
    async (isolation) => {
      const sandbox = await open(isolation);
      const marker = `31.${process.pid % 1000}${isolation.length}7`;
      const error = await sandbox
        .exec(`(while true; do echo x >> tick.log; sleep 0.05; done) & sleep ${marker}`, { timeoutMs: 500 })
        .catch((e: unknown) => e);
      expect(OpenRathError.isInstance(error, "exec_timeout")).toBe(true);
      const size = statSync(join(sandbox.workspace, "tick.log")).size;
      await sleep(300);
      expect(statSync(join(sandbox.workspace, "tick.log")).size).toBe(size);
      expect(processesWith(`sleep ${marker}`)).toEqual([]);
    },
  );

  it("kills the sandboxed tree when the host process dies by SIGKILL (no exit handler runs)", async () => {
    const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
    const workspace = join(scratch, "killed-parent");
    const script = join(scratch, "killed-parent.mts");
    writeFileSync(
      script,
      `import { localSandbox } from ${JSON.stringify(join(packageDir, "src", "index.ts"))};
const backend = localSandbox({ isolation: "bubblewrap" });
const sandbox = await backend.open(backend.parseSpec({ workspace: ${JSON.stringify(workspace)} }));
sandbox.exec("(while true; do echo x >> tick.log; sleep 0.05; done) & echo started; sleep 60", {
  onStdout: () => console.log("started"),
});
`,
    );
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@openrath/source", script], {
      cwd: packageDir,
      // The child cannot clean up after a SIGKILL: its private directory goes to the scratch dir.
      env: { ...process.env, TMPDIR: scratch },
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", () => resolve());
      child.on("close", (code) => reject(new Error(`child exited early with ${code}`)));
    });
    await sleep(200);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.on("close", resolve));
    await sleep(200);
    const size = statSync(join(workspace, "tick.log")).size;
    expect(size).toBeGreaterThan(0);
    await sleep(400);
    expect(statSync(join(workspace, "tick.log")).size, "the sandboxed loop survived its parent's death").toBe(
      size,
    );
  });
});
