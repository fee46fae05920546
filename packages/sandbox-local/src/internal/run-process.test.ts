import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpenRathError, SandboxError } from "@openrath/core";
import { afterAll, describe, expect, it } from "vitest";
import { type RunProcessOptions, runProcess } from "./run-process.js";

const dir = mkdtempSync(join(tmpdir(), "openrath-local-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

function sh(script: string, more: Partial<RunProcessOptions> = {}) {
  return runProcess({ file: "/bin/sh", args: ["-c", script], cwd: dir, env, maxOutputBytes: 1024, ...more });
}

async function rejection(promise: Promise<unknown>): Promise<SandboxError> {
  try {
    await promise;
  } catch (error) {
    return error as SandboxError;
  }
  throw new Error("expected a rejection");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("runProcess", () => {
  it("returns exit code, output and wall time", async () => {
    const result = await sh("echo out; echo err >&2; exit 4");
    expect(result).toMatchObject({ exitCode: 4, stdout: "out\n", stderr: "err\n", truncated: false });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("reports death by signal as 128 + n", async () => {
    expect((await sh("kill -TERM $$")).exitCode).toBe(143);
    expect((await sh("kill -KILL $$")).exitCode).toBe(137);
  });

  it("runs the command as the leader of its own process group and session", async () => {
    const result = await runProcess({
      file: "/bin/sh",
      args: ["-c", "ps -o pid=,pgid=,sid= -p $$"],
      cwd: dir,
      env,
      maxOutputBytes: 1024,
    });
    const [pid, pgid, sid] = result.stdout.trim().split(/\s+/);
    expect(pgid).toBe(pid);
    expect(sid).toBe(pid);
  });

  it("answers a missing executable like a shell: exit 127 with a message", async () => {
    const result = await runProcess({
      file: "no-such-command-xyz",
      args: [],
      cwd: dir,
      env,
      maxOutputBytes: 1024,
    });
    expect(result.exitCode).toBe(127);
    expect(result.stderr).toMatch(/no-such-command-xyz: command not found/);
  });

  it("ignores EPIPE when the command does not read its stdin", async () => {
    const result = await sh("exit 0", { stdin: "x".repeat(4 * 1024 * 1024) });
    expect(result.exitCode).toBe(0);
  });

  it("on timeout kills the whole group and rejects with the output so far and the timeout", async () => {
    const tick = join(dir, "tick-timeout");
    const started = Date.now();
    const error = await rejection(
      sh(`echo before; (while true; do echo x >> ${tick}; sleep 0.05; done) & sleep 30`, { timeoutMs: 300 }),
    );
    expect(Date.now() - started).toBeLessThan(3000);
    expect(SandboxError.isInstance(error, "exec_timeout")).toBe(true);
    expect(error.details).toMatchObject({ stdout: "before\n", stderr: "", timeoutMs: 300 });
    const size = readFileSync(tick).length;
    await sleep(300);
    expect(readFileSync(tick).length).toBe(size);
  });

  it("on abort kills the group and rejects with aborted and the signal's reason as cause", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop")), 100);
    const error = await rejection(sh("echo started; sleep 30", { signal: controller.signal }));
    expect(SandboxError.isInstance(error, "aborted")).toBe(true);
    expect(error.details.stdout).toBe("started\n");
    expect((error.cause as Error).message).toBe("stop");
  });

  it("stops waiting for pipes a process outside the group holds open", async () => {
    // setsid moves the child into its own session (and group): the group kill cannot reach it.
    const pidFile = join(dir, "escaped.pid");
    const started = Date.now();
    const error = await rejection(
      sh(`setsid sh -c 'echo $$ > ${pidFile}; exec sleep 5' & sleep 30`, { timeoutMs: 200 }),
    );
    expect(SandboxError.isInstance(error, "exec_timeout")).toBe(true);
    expect(Date.now() - started).toBeLessThan(4000);
    // Under load the timeout can fire before setsid ran, and then the group kill took the child too.
    try {
      process.kill(Number(readFileSync(pidFile, "utf8")), "SIGKILL");
    } catch {
      // Already gone (or never written).
    }
  });

  it("reports the group to onStart and onEnd", async () => {
    const seen: string[] = [];
    await sh("true", {
      onStart: (pgid) => seen.push(`start ${pgid}`),
      onEnd: (pgid) => seen.push(`end ${pgid}`),
    });
    expect(seen).toHaveLength(2);
    expect(seen[0]!.replace("start", "end")).toBe(seen[1]);
  });

  it("refuses arguments with NUL bytes with invalid_argument", async () => {
    const error = await rejection(
      runProcess({ file: "echo", args: ["a\0b"], cwd: dir, env, maxOutputBytes: 10 }),
    );
    expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
  });

  it("does not start the command when the signal already fired", async () => {
    const controller = new AbortController();
    controller.abort();
    const marker = join(dir, "never");
    const started: number[] = [];
    const error = await rejection(
      sh(`touch ${marker}`, { signal: controller.signal, onStart: (p) => started.push(p) }),
    );
    expect(SandboxError.isInstance(error, "aborted")).toBe(true);
    expect(started).toEqual([]);
    await sleep(100);
    expect(existsSync(marker)).toBe(false);
  });
});
