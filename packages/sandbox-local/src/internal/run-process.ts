import { type ChildProcess, spawn } from "node:child_process";
import { constants } from "node:os";
import { type ExecResult, SandboxError } from "@openrath/core";
import { OutputBuffer } from "@openrath/core/backend";
import { killProcessTree } from "./process-tree.js";
import { abortedBeforeStart, type StopReason, stopError } from "./stop-error.js";

/** What {@link runProcess} runs and how. */
export interface RunProcessOptions {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly stdin?: string | Uint8Array;
  /** Kill the process tree after this many milliseconds (`Infinity` or absent: never). */
  readonly timeoutMs?: number;
  /** The value of the command's marker variable (already in `env`), to find its descendants by. */
  readonly marker?: string;
  readonly signal?: AbortSignal;
  readonly maxOutputBytes: number;
  readonly onStdout?: (text: string) => void;
  readonly onStderr?: (text: string) => void;
  /** Called with the process group id right after the spawn, before any output. */
  readonly onStart?: (pgid: number) => void;
  /** Called with the process group id once the leader exited and its output pipes closed. */
  readonly onEnd?: (pgid: number) => void;
}

/** How long to wait for output pipes after a killed leader exited (a member that left the group may hold them). */
const PIPE_GRACE_MS = 1000;

function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const number = signal ? constants.signals[signal] : undefined;
  return number === undefined ? 128 : 128 + number;
}

/**
 * Runs one command as the leader of a new process group (`detached`, so `setsid`), feeding it
 * `stdin` and collecting its output through {@link OutputBuffer}s. On timeout or abort its process
 * tree is killed with SIGKILL (see {@link killProcessTree}) and, once the leader's pipes closed,
 * the promise rejects with
 * `exec_timeout` or `aborted`, the output so far in the error's details. A command that cannot
 * be started resolves like a shell would: exit code 127 (not found) or 126 (not executable).
 */
export function runProcess(options: RunProcessOptions): Promise<ExecResult> {
  return new Promise<ExecResult>((resolvePromise, rejectPromise) => {
    if (options.signal?.aborted) {
      rejectPromise(abortedBeforeStart(options.signal));
      return;
    }
    const started = performance.now();
    const stdout = new OutputBuffer(options.maxOutputBytes, options.onStdout);
    const stderr = new OutputBuffer(options.maxOutputBytes, options.onStderr);
    let child: ChildProcess;
    try {
      child = spawn(options.file, options.args, {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (error) {
      // Synchronous spawn failures are bad arguments (a NUL byte in an argument or a variable).
      rejectPromise(
        new SandboxError(
          "invalid_argument",
          `Could not start ${JSON.stringify(options.file)}: ${(error as Error).message}`,
          {
            cause: error,
            details: { file: options.file, args: options.args },
          },
        ),
      );
      return;
    }

    const pgid = child.pid;
    let settled = false;
    let reason: StopReason | undefined;
    let timer: NodeJS.Timeout | undefined;
    let graceTimer: NodeJS.Timeout | undefined;

    const cleanup = () => {
      if (timer) clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      options.signal?.removeEventListener("abort", onAbort);
    };

    const kill = (why: StopReason) => {
      if (settled || reason) return;
      reason = why;
      if (pgid !== undefined) killProcessTree(pgid, options.marker);
      child.kill("SIGKILL");
      // The leader is dead within moments; if something outside the group keeps the pipes open,
      // stop waiting for them after a grace period.
      const destroyLater = () => {
        graceTimer = setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish(null, "SIGKILL");
        }, PIPE_GRACE_MS);
      };
      if (child.exitCode !== null || child.signalCode !== null) destroyLater();
      else child.once("exit", destroyLater);
    };
    const onAbort = () => kill("aborted");

    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      cleanup();
      if (pgid !== undefined) options.onEnd?.(pgid);
      const durationMs = performance.now() - started;
      const out = stdout.text();
      const err = stderr.text();
      if (reason) {
        rejectPromise(
          stopError(
            reason,
            JSON.stringify(options.file),
            options.timeoutMs ?? Number.POSITIVE_INFINITY,
            { stdout: out, stderr: err, durationMs },
            options.signal?.reason,
          ),
        );
        return;
      }
      resolvePromise({
        exitCode: exitCodeOf(code, signal),
        stdout: out,
        stderr: err,
        truncated: stdout.truncated || stderr.truncated,
        durationMs,
      });
    };

    child.on("error", (error: NodeJS.ErrnoException) => {
      // Only a failed spawn leaves no pid; other errors (a failed kill) are not fatal.
      if (child.pid !== undefined || settled) return;
      const notExecutable = error.code === "EACCES" || error.code === "ENOEXEC";
      stderr.push(
        `${options.file}: ${notExecutable ? "permission denied" : "command not found"} (${error.code})\n`,
      );
      finish(notExecutable ? 126 : 127, null);
    });
    if (pgid === undefined) return;
    options.onStart?.(pgid);

    child.stdout!.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.stdout!.on("error", () => {});
    child.stderr!.on("error", () => {});
    // The command may exit (or close its stdin) before reading it all: EPIPE is not an error here.
    child.stdin!.on("error", () => {});
    if (options.stdin === undefined) child.stdin!.end();
    else child.stdin!.end(typeof options.stdin === "string" ? options.stdin : Buffer.from(options.stdin));

    child.on("close", (code: number | null, signal: NodeJS.Signals | null) => finish(code, signal));

    if (options.timeoutMs !== undefined && Number.isFinite(options.timeoutMs))
      timer = setTimeout(() => kill("timeout"), options.timeoutMs);
    options.signal?.addEventListener("abort", onAbort, { once: true });
  });
}
