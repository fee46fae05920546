import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createServer, type Server } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import type { SandboxV1 } from "@openrath/core";
import { serviceAvailable } from "@openrath/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { checkBubblewrap } from "./internal/check-bubblewrap.js";
import { localSandbox } from "./local-sandbox.js";

// The hostile side of bubblewrap isolation: what a command must not reach. Each probe is paired
// with a control (the same probe from the host, or without isolation) so no test passes vacuously.

const check = await serviceAvailable("bubblewrap", () => checkBubblewrap("bwrap").then(() => true));
const DOCKER_SOCKET = "/var/run/docker.sock";

const opened: SandboxV1[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((sandbox) => sandbox.close()));
});

async function open(isolation: "none" | "bubblewrap"): Promise<SandboxV1> {
  const backend = localSandbox({ isolation });
  const sandbox = await backend.open(backend.parseSpec!(undefined));
  opened.push(sandbox);
  return sandbox;
}

/** Node code that connects to the Unix socket `path` and prints `reached` or the error code. */
function connectUnix(path: string, send = ""): string {
  return `const s = require("node:net").connect(${JSON.stringify(path)});
s.on("connect", () => { s.write(${JSON.stringify(send)}); });
s.on("data", (d) => { console.log("reached " + String(d).split("\\r\\n")[0]); process.exit(0); });
s.on("error", (e) => { console.log("error " + e.code); process.exit(0); });
setTimeout(() => { console.log("timeout"); process.exit(0); }, 3000);`;
}

/** A Unix socket server on the host that counts connections and answers "pong". */
async function plantSocket(path: string): Promise<{ server: Server; connections: () => number }> {
  let count = 0;
  const server = createServer((socket) => {
    count++;
    socket.end("pong\r\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  return { server, connections: () => count };
}

function dockerPing(): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ socketPath: DOCKER_SOCKET, path: "/_ping", timeout: 3000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", () => resolve(0));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

describe.skipIf(!check.available)(`bubblewrap against hostile commands (${check.reason})`, () => {
  const planted: { path: string; server: Server; connections: () => number }[] = [];
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "openrath-hostile-")));
  const homeDir = join(homedir(), `.openrath-hostile-${process.pid}`);
  const runDir = join("/run", `openrath-hostile-${process.pid}`);

  beforeAll(async () => {
    mkdirSync(homeDir, { recursive: true });
    writeFileSync(join(homeDir, "secret.txt"), "host secret\n");
    const paths = [join(scratch, "tmp.sock"), join(homeDir, "home.sock")];
    try {
      mkdirSync(runDir, { recursive: true });
      paths.push(join(runDir, "run.sock"));
    } catch {
      // /run not writable here: the /tmp and home sockets still cover the claim.
    }
    for (const path of paths) planted.push({ path, ...(await plantSocket(path)) });
  });
  afterAll(async () => {
    // Not awaited: close() waits for connections a killed probe may leave half-open.
    for (const { server } of planted) server.close();
    rmSync(scratch, { recursive: true, force: true });
    rmSync(homeDir, { recursive: true, force: true });
    rmSync(runDir, { recursive: true, force: true });
  });

  it("cannot connect to Unix sockets planted on the host in /tmp, the home directory or /run", async () => {
    const plain = await open("none");
    const isolated = await open("bubblewrap");
    for (const socket of planted) {
      const control = await plain.runCode(connectUnix(socket.path, "ping\r\n"), "javascript");
      expect(control.stdout.trim(), `control: the host reaches ${socket.path}`).toBe("reached pong");
      const before = socket.connections();
      const probe = await isolated.runCode(connectUnix(socket.path, "ping\r\n"), "javascript");
      expect(probe.stdout.trim(), `the sandbox reached ${socket.path}`).toMatch(
        /^error (ENOENT|ECONNREFUSED|EACCES)$/,
      );
      expect(socket.connections()).toBe(before);
      expect(
        (await isolated.exec(["ls", "-la", socket.path])).exitCode,
        `${socket.path} is visible inside`,
      ).not.toBe(0);
    }
  });

  it("cannot reach an abstract Unix socket of the host (the network namespace holds those)", async () => {
    const name = `\0openrath-hostile-${process.pid}`;
    const socket = await plantSocket(name);
    try {
      const plain = await open("none");
      const control = await plain.runCode(connectUnix(name, "ping\r\n"), "javascript", { timeoutMs: 10_000 });
      expect(control.stdout.trim(), control.stderr).toBe("reached pong");
      const isolated = await open("bubblewrap");
      const probe = await isolated.runCode(connectUnix(name, "ping\r\n"), "javascript", {
        timeoutMs: 10_000,
      });
      expect(probe.stdout.trim()).toMatch(/^error /);
      expect(socket.connections()).toBe(1);
    } finally {
      socket.server.close();
    }
  });

  it.skipIf(!existsSync(DOCKER_SOCKET))("cannot talk to the Docker daemon through its socket", async () => {
    expect(await dockerPing(), "control: the Docker socket answers /_ping on the host").toBe(200);
    const isolated = await open("bubblewrap");
    const probe = await isolated.runCode(
      connectUnix(DOCKER_SOCKET, "GET /_ping HTTP/1.0\r\n\r\n"),
      "javascript",
    );
    expect(probe.stdout.trim()).toMatch(/^error (ENOENT|ECONNREFUSED|EACCES)$/);
    const listing = await isolated.exec(
      "ls -la /var/run/ /run/; [ -e /var/run/docker.sock ] && echo present || echo absent",
    );
    expect(listing.stdout.trim().split("\n").pop()).toBe("absent");
  });

  it("sees no host home directory, no host account and no /etc/shadow", async () => {
    const isolated = await open("bubblewrap");
    const home = await isolated.exec([
      "sh",
      "-c",
      'ls -A /home /root; cat "$1" 2>&1; cat /etc/shadow 2>&1; cat /etc/passwd',
      "sh",
      join(homeDir, "secret.txt"),
    ]);
    expect(home.stdout).not.toContain("host secret");
    // A shadow line is root:<hash or * or !>:…, never root:x:.
    expect(home.stdout).not.toMatch(/^root:[^x:]/m);
    expect(home.stdout).toMatch(/No such file or directory/);
    const accounts = home.stdout
      .split("\n")
      .filter((line) => /^[^:\s]+:x:\d+:/.test(line))
      .map((l) => l.split(":")[0]);
    expect(accounts.sort()).toEqual(["nobody", "root", "sandbox"]);
  });

  it("sees no host process: only its own namespace's", async () => {
    const marker = `openrath-host-only-${process.pid}-${Date.now()}`;
    const host = spawn("sh", ["-c", "sleep 20", marker], { stdio: "ignore" });
    try {
      const isolated = await open("bubblewrap");
      const scan = await isolated.exec(
        "for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline 2>/dev/null; echo; done",
      );
      expect(scan.exitCode).toBe(0);
      expect(scan.stdout).not.toContain(marker);
      const count = await isolated.exec("ls -d /proc/[0-9]* | wc -l");
      // bwrap's init, the supervisor, two spares (unshare and init shell each), and this command's
      // unshare, init shell, shell, ls and wc.
      expect(Number(count.stdout.trim()), count.stdout).toBeLessThan(14);
      const plain = await open("none");
      const control = await plain.exec(
        "for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline 2>/dev/null; echo; done",
      );
      expect(control.stdout, "control: the host's process table shows the marker").toContain(marker);
    } finally {
      host.kill("SIGKILL");
    }
  });

  it("cannot open the supervisor's pipes or environment (it lives in the parent user namespace)", async () => {
    const isolated = await open("bubblewrap");
    const probe = await isolated.exec(
      `for d in /proc/[0-9]*; do case "$(tr '\\0' ' ' < $d/cmdline 2>/dev/null)" in *"use strict"*) s=\${d#/proc/} ;; esac; done
echo "supervisor=$s"; readlink /proc/$s/fd/1 2>&1; cat /proc/$s/environ 2>&1; echo forged > /proc/$s/fd/1 2>&1 || echo write-refused`,
    );
    expect(probe.stdout).toMatch(/^supervisor=\d+\n/);
    expect(probe.stdout + probe.stderr).not.toMatch(/pipe:\[/);
    expect(probe.stdout + probe.stderr).toMatch(/Permission denied/);
    expect(probe.stdout).toContain("write-refused");
    expect((await isolated.exec("echo still-fine")).stdout).toBe("still-fine\n");
  });

  it("cannot reach a spare (the next command's namespace, started ahead) through /proc", async () => {
    const isolated = await open("bubblewrap");
    // Leaves a spare for commands with this environment; the probe (another environment) does not take it.
    await isolated.exec("true", { env: { OPENRATH_SPARE_FOR: "another command" } });
    // Finds spare inits (no operands yet) and its own init; tries each one's stdin, memory and environment.
    const probe = await isolated.runCode(
      `const fs = require("node:fs");
const argvOf = (pid) => { try { return fs.readFileSync("/proc/" + pid + "/cmdline", "utf8").split("\\0").slice(0, -1); } catch { return []; } };
const isInit = (argv) => argv[0] === "/bin/sh" && String(argv[2]).includes("read -r openrath_line");
const ancestors = new Set();
for (let pid = Number(fs.readlinkSync("/proc/self")); pid > 1; ) {
  ancestors.add(pid);
  pid = Number(fs.readFileSync("/proc/" + pid + "/stat", "utf8").replace(/^.*\\) /s, "").split(" ")[1]);
}
const attempt = (f) => { try { f(); return "ok"; } catch (e) { return e.code; } };
const tryAll = (pid) => ({
  stdin: attempt(() => fs.readlinkSync("/proc/" + pid + "/fd/0")),
  write: attempt(() => fs.writeFileSync("/proc/" + pid + "/fd/0", "'touch' '/tmp/forged'\\n")),
  mem: attempt(() => fs.closeSync(fs.openSync("/proc/" + pid + "/mem", "r+"))),
  environ: attempt(() => fs.readFileSync("/proc/" + pid + "/environ")),
});
let spares = [];
for (let i = 0; i < 250 && spares.length === 0; i++) {
  spares = fs.readdirSync("/proc").filter((p) => /^\\d+$/.test(p) && !ancestors.has(Number(p))).filter((p) => { const a = argvOf(p); return isInit(a) && a.length === 4; });
  if (spares.length === 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
}
const own = [...ancestors].find((pid) => isInit(argvOf(pid)));
console.log(JSON.stringify({ spares: spares.map(tryAll), own: own === undefined ? null : tryAll(own) }));`,
      "javascript",
    );
    expect(probe.exitCode, probe.stderr).toBe(0);
    const seen = JSON.parse(probe.stdout) as {
      spares: Record<string, string>[];
      own: Record<string, string> | null;
    };
    expect(seen.spares.length, "a spare waits after a command").toBeGreaterThan(0);
    for (const spare of seen.spares) {
      expect(spare).toEqual({ stdin: "EACCES", write: "EACCES", mem: "EACCES", environ: "EACCES" });
    }
    // Control: the same probes reach the command's own init (same user namespace).
    expect(seen.own?.stdin).toBe("ok");
    expect(seen.own?.mem).toBe("ok");
    const next = await isolated.exec("test -e /tmp/forged && echo forged; echo next", {
      env: { OPENRATH_SPARE_FOR: "another command" },
    });
    expect(next.stdout).toBe("next\n");
  });

  it("holds no capability and cannot create a device or mount anything", async () => {
    const isolated = await open("bubblewrap");
    const result = await isolated.exec(
      "grep -E 'Cap(Eff|Prm|Inh|Amb)|NoNewPrivs' /proc/self/status; mount -t tmpfs none /tmp 2>&1 && echo MOUNTED; mknod /tmp/x c 1 3 2>&1 && echo NODE",
    );
    const caps = result.stdout.split("\n").filter((l) => l.startsWith("Cap"));
    expect(caps).toHaveLength(4);
    for (const line of caps) expect(line).toMatch(/:\s+0+$/);
    // No exec can gain capabilities back (setuid and file capabilities are inert).
    expect(result.stdout).toMatch(/NoNewPrivs:\s+1/);
    expect(result.stdout).not.toMatch(/MOUNTED|NODE/);
  });
});
