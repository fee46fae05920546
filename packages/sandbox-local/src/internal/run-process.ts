import { type ChildProcess, spawn } from "node:child_process";
import { constants } from "node:os";
import type { Readable } from "node:stream";
import { type ExecResult, SandboxError } from "@openrath/core";
import { OutputBuffer } from "@openrath/core/backend";
import { type CommandNamespace, namespaceArgs } from "./command-namespace.js";
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
  /**
   * Run the command in a PID namespace of its own (see {@link CommandNamespace}); without it the
   * command is a plain child and a kill is best effort (see {@link killProcessTree}).
   */
  readonly namespace?: CommandNamespace;
  /** Without a namespace: the value of the command's marker variable (already in `env`), to find its descendants by. */
  readonly marker?: string;
  readonly signal?: AbortSignal;
  readonly maxOutputBytes: number;
  readonly onStdout?: (text: string) => void;
  readonly onStderr?: (text: string) => void;
  /**
   * Called right after the spawn, before any output, with the process group id and a function
   * that kills every process of the command (best effort without a namespace).
   */
  readonly onStart?: (pgid: number, kill: () => void) => void;
  /**
   * Called with the process group id when the command is over: in a namespace, when the namespace
   * ended (every process of it gone; background jobs keep it, so this may come after the promise
   * settled); otherwise once the leader exited and its output pipes closed.
   */
  readonly onEnd?: (pgid: number) => void;
}

/** How long to wait for output pipes after a killed leader exited (a process outside its reach may hold them). */
const PIPE_GRACE_MS = 1000;

function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const number = signal ? constants.signals[signal] : undefined;
  return number === undefined ? 128 : 128 + number;
}

function closed(stream: Readable): Promise<void> {
  return new Promise((resolve) => {
    if (stream.closed) resolve();
    else stream.once("close", () => resolve());
  });
}

/**
 * Runs one command as the leader of a new process group and session (`detached`) — in a PID
 * namespace of its own when `namespace` is given — feeding it `stdin` and collecting its output
 * through {@link OutputBuffer}s. On timeout or abort its processes are killed with SIGKILL (the
 * whole namespace, or the best-effort {@link killProcessTree}) and, once they are gone and the
 * pipes closed, the promise rejects with `exec_timeout` or `aborted`, the output so far in the
 * error's details. A command that cannot be started resolves like a shell would: exit code 127
 * (not found) or 126 (not executable).
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
    const namespace = options.namespace;
    let child: ChildProcess;
    try {
      child = namespace
        ? spawn(namespace.unshare, namespaceArgs(namespace, options.file, options.args), {
            cwd: options.cwd,
            env: options.env,
            detached: true,
            // fd 3: reports from the namespace's shell; fd 4: its gate.
            stdio: ["pipe", "pipe", "pipe", "pipe", "pipe"],
          })
        : spawn(options.file, options.args, {
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
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    let settled = false;
    let reason: StopReason | undefined;
    let timer: NodeJS.Timeout | undefined;
    let graceTimer: NodeJS.Timeout | undefined;

    const cleanup = () => {
      if (timer) clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      options.signal?.removeEventListener("abort", onAbort);
    };

    /** The namespace's PID 1 as the host sees it, once reported. */
    let holder: number | undefined;
    const killAll = () => {
      if (pgid === undefined) return;
      if (!namespace) {
        killProcessTree([pgid], new Set(options.marker === undefined ? [] : [options.marker]));
        child.kill("SIGKILL");
        return;
      }
      // Until the shell is gone the holder is its unreaped child, so its pid is still its own.
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        // The holder's death ends the namespace. Before it is known, the process group has both
        // the shell and it (a kill of a group also reaches a fork under way).
        process.kill(holder ?? -pgid, "SIGKILL");
      } catch {
        // Gone already.
      }
    };

    const kill = (why: StopReason) => {
      if (settled || reason) return;
      reason = why;
      killAll();
      // Once the leader is dead, stop waiting for pipes something out of reach may hold open.
      void exited.then(() => {
        if (settled) return;
        graceTimer = setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          child.stdio[3]?.destroy();
          child.stdio[4]?.destroy();
          finish(null, "SIGKILL");
        }, PIPE_GRACE_MS);
      });
    };
    const onAbort = () => kill("aborted");

    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      cleanup();
      // A namespace may outlive its command (background jobs): it must not keep this process alive.
      if (namespace) child.unref();
      else if (pgid !== undefined) options.onEnd?.(pgid);
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
    options.onStart?.(pgid, killAll);

    child.stdout!.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.stdout!.on("error", () => {});
    child.stderr!.on("error", () => {});
    // The command may exit (or close its stdin) before reading it all: EPIPE is not an error here.
    child.stdin!.on("error", () => {});
    if (options.stdin === undefined) child.stdin!.end();
    else child.stdin!.end(typeof options.stdin === "string" ? options.stdin : Buffer.from(options.stdin));

    if (namespace) {
      const reports = child.stdio[3] as Readable;
      const gate = child.stdio[4] as Readable;
      gate.on("error", () => {});
      reports.on("error", () => {});
      void exited.then(() => {
        gate.destroy();
        options.onEnd?.(pgid);
      });
      // Two lines: the holder's pid, then the command's status (which opens the gate).
      let reported = "";
      let status: number | undefined;
      reports.setEncoding("utf8").on("data", (text: string) => {
        reported += text;
        const lines = reported.split("\n");
        if (holder === undefined && /^\d+$/.test(lines[0]!) && lines.length > 1) holder = Number(lines[0]);
        if (status === undefined && /^\d+$/.test(lines[1] ?? "") && lines.length > 2) {
          status = Number(lines[1]);
          gate.destroy();
        }
      });
      // The command ended when its status came and its pipes closed. Without a status (killed, or
      // the namespace could not be set up), and after a kill, the result waits for the shell,
      // whose end proves the namespace gone.
      void Promise.all([closed(child.stdout!), closed(child.stderr!), closed(reports)]).then(async () => {
        if (status === undefined || reason) await exited;
        if (status !== undefined) finish(status, null);
        else finish(child.exitCode, child.signalCode);
      });
    } else {
      child.on("close", (code: number | null, signal: NodeJS.Signals | null) => finish(code, signal));
    }

    if (options.timeoutMs !== undefined && Number.isFinite(options.timeoutMs))
      timer = setTimeout(() => kill("timeout"), options.timeoutMs);
    options.signal?.addEventListener("abort", onAbort, { once: true });
  });
}
