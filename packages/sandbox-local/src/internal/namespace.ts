import { type ChildProcess, spawn } from "node:child_process";
import { constants } from "node:os";
import { type ExecResult, SandboxError } from "@openrath/core";
import { OutputBuffer } from "@openrath/core/backend";
import { abortedBeforeStart, type StopReason, stopError } from "./stop-error.js";
import {
  type ExitReport,
  FRAME_EXIT,
  FRAME_HEADER_BYTES,
  FRAME_KILL,
  FRAME_READY,
  FRAME_START,
  FRAME_STDERR,
  FRAME_STDIN,
  FRAME_STDIN_END,
  FRAME_STDOUT,
  MAX_FRAME_BYTES,
  type StartRequest,
  SUPERVISOR_SOURCE,
} from "./supervisor.js";

/** How to start a sandbox's namespace. */
export interface NamespaceOptions {
  readonly bwrapPath: string;
  /** bubblewrap's arguments for the sandbox (see `bwrapArgs`), without the command. */
  readonly args: readonly string[];
  /** The Node.js executable, visible at the same path inside. */
  readonly node: string;
  /** The `unshare` executable (util-linux), visible at the same path inside. */
  readonly unshare: string;
}

/** One command, as {@link Namespace.run} takes it. */
export interface NamespaceRun {
  readonly argv: readonly string[];
  /** Working directory as the sandbox sees it. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly stdin?: string | Uint8Array;
  /** `Infinity` for none. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly maxOutputBytes: number;
  readonly onStdout?: (text: string) => void;
  readonly onStderr?: (text: string) => void;
}

interface Pending {
  readonly stdout: OutputBuffer;
  readonly stderr: OutputBuffer;
  readonly exit: (report: ExitReport) => void;
  readonly fail: (error: SandboxError) => void;
}

/** How long the supervisor may take to come up (a cold Node.js start on a loaded machine). */
const READY_TIMEOUT_MS = 20_000;
/** After a kill, how long to wait for the supervisor's EXIT before giving up on it. */
const KILL_GRACE_MS = 2_000;

/** Bytes of bubblewrap's stderr kept for error messages. */
const STDERR_KEEP = 4096;

/**
 * The host side of one bubblewrap sandbox: a long-lived namespace with a supervisor in it (see
 * `supervisor.ts`) that starts every command in a PID namespace of its own. One namespace per
 * sandbox instead of one per command makes a warm exec cost one `unshare` instead of a whole
 * bubblewrap setup (and, with the supervisor's spares, not even that on its path), with the same
 * isolation: the sandbox's mounts, network and user namespace are shared by its commands (as a
 * container's are), while no command can outlive its kill.
 */
export class Namespace {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private buffered: Buffer = Buffer.alloc(0);
  private stderr = "";
  private dead: SandboxError | undefined;
  private readonly exited: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => child.once("close", () => resolve()));
    child.stderr!.setEncoding("utf8").on("data", (text: string) => {
      this.stderr = (this.stderr + text).slice(-STDERR_KEEP);
    });
    child.stdin!.on("error", () => {});
    child.once("close", (code, signal) => {
      this.fail(
        new SandboxError(
          "sandbox_transport",
          `The sandbox's namespace ended (bubblewrap exited with ${code ?? signal})${this.stderr.trim() ? `: ${this.stderr.trim()}` : ""}. Its running commands were killed.`,
          { details: { stderr: this.stderr.trim() } },
        ),
      );
    });
  }

  /**
   * Starts bubblewrap with the supervisor and waits until it answers.
   *
   * @throws {SandboxError} `sandbox_unavailable` when the namespace cannot be set up.
   */
  static start(options: NamespaceOptions): Promise<Namespace> {
    const child = spawn(
      options.bwrapPath,
      [...options.args, "--", options.node, "-e", SUPERVISOR_SOURCE, options.unshare],
      {
        // The sandbox leads a process group of its own, so a signal to the caller's terminal group
        // does not reach it, and the host can kill it (and bwrap) as one.
        detached: true,
        stdio: ["pipe", "pipe", "pipe"],
        env: { PATH: "/usr/bin:/bin" },
      },
    );
    const namespace = new Namespace(child);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        namespace.kill();
        reject(
          unavailable(`the supervisor did not start within ${READY_TIMEOUT_MS / 1000} s`, namespace.stderr),
        );
      }, READY_TIMEOUT_MS);
      const onFrame = (type: number) => {
        if (type !== FRAME_READY) return;
        clearTimeout(timer);
        child.stdout!.off("close", onClose);
        resolve(namespace);
      };
      const onClose = () => {
        clearTimeout(timer);
        reject(unavailable("bubblewrap exited before the supervisor started", namespace.stderr));
      };
      child.on("error", (error) => {
        clearTimeout(timer);
        reject(unavailable(`bubblewrap could not start (${error.message})`, ""));
      });
      child.stdout!.once("close", onClose);
      child.stdout!.on("data", (chunk: Buffer) => namespace.read(chunk, onFrame));
    });
  }

  /** Whether the namespace ended (crashed or was closed); a new one must be started. */
  get isDead(): boolean {
    return this.dead !== undefined || this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** The host pid of bubblewrap, which leads the sandbox's process group. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * Runs one command in its own PID namespace. Output goes through {@link OutputBuffer}s; on
   * timeout or abort the command's namespace is killed (every descendant with it) and the promise
   * rejects with `exec_timeout` or `aborted`, the output so far in the error's details.
   */
  run(options: NamespaceRun): Promise<ExecResult> {
    if (options.signal?.aborted) return Promise.reject(abortedBeforeStart(options.signal));
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    const started = performance.now();
    const stdout = new OutputBuffer(options.maxOutputBytes, options.onStdout);
    const stderr = new OutputBuffer(options.maxOutputBytes, options.onStderr);
    return new Promise<ExecResult>((resolve, reject) => {
      let stopped: StopReason | undefined;
      let timer: NodeJS.Timeout | undefined;
      let graceTimer: NodeJS.Timeout | undefined;
      const output = () => ({
        stdout: stdout.text(),
        stderr: stderr.text(),
        durationMs: performance.now() - started,
      });
      const cleanup = () => {
        clearTimeout(timer);
        clearTimeout(graceTimer);
        options.signal?.removeEventListener("abort", onAbort);
        this.pending.delete(id);
      };
      const what = JSON.stringify(options.argv[0]);
      const settleStopped = () => {
        cleanup();
        reject(stopError(stopped!, what, options.timeoutMs, output(), options.signal?.reason));
      };
      const stop = (why: StopReason) => {
        if (stopped) return;
        stopped = why;
        this.send(FRAME_KILL, id);
        graceTimer = setTimeout(settleStopped, KILL_GRACE_MS);
      };
      const onAbort = () => stop("aborted");
      this.pending.set(id, {
        stdout,
        stderr,
        exit: (report) => {
          if (stopped) return settleStopped();
          cleanup();
          if (report.error !== undefined) {
            stderr.push(`${options.argv[0]}: could not start (${report.error})\n`);
            resolve({ exitCode: 127, truncated: false, ...output() });
            return;
          }
          stdout.skip(report.omitted[0]);
          stderr.skip(report.omitted[1]);
          resolve({
            exitCode: exitCodeOf(report.code, report.signal),
            truncated: stdout.truncated || stderr.truncated,
            ...output(),
          });
        },
        fail: (error) => {
          if (stopped) return settleStopped();
          cleanup();
          const { stdout: out, stderr: err } = output();
          reject(
            new SandboxError(error.code, error.message, {
              cause: error.cause,
              details: { ...error.details, stdout: out, stderr: err },
            }),
          );
        },
      });
      const request: StartRequest = {
        argv: options.argv,
        cwd: options.cwd,
        env: options.env,
        stdin: options.stdin !== undefined,
        maxBytes: options.maxOutputBytes,
      };
      this.send(FRAME_START, id, Buffer.from(JSON.stringify(request)));
      if (options.stdin !== undefined) {
        const bytes =
          typeof options.stdin === "string" ? Buffer.from(options.stdin) : Buffer.from(options.stdin);
        for (let at = 0; at < bytes.length; at += 64 * 1024) {
          this.send(FRAME_STDIN, id, bytes.subarray(at, at + 64 * 1024));
        }
        this.send(FRAME_STDIN_END, id);
      }
      if (Number.isFinite(options.timeoutMs)) timer = setTimeout(() => stop("timeout"), options.timeoutMs);
      options.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Kills the whole sandbox (bubblewrap's process group) and waits until it is gone. */
  async close(): Promise<void> {
    this.kill();
    await this.exited;
  }

  /** Kills the sandbox at once, synchronously (for process exit). */
  kill(): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }

  private fail(error: SandboxError): void {
    this.dead ??= error;
    // Commands waiting for their EXIT will not get one: they died with the sandbox.
    for (const entry of [...this.pending.values()]) entry.fail(this.dead);
  }

  private send(type: number, id: number, payload: Buffer = Buffer.alloc(0)): void {
    if (this.isDead || !this.child.stdin!.writable) return;
    const head = Buffer.alloc(FRAME_HEADER_BYTES);
    head[0] = type;
    head.writeUInt32BE(id, 1);
    head.writeUInt32BE(payload.length, 5);
    this.child.stdin!.write(Buffer.concat([head, payload]));
  }

  /**
   * Parses frames from the supervisor. It shares a namespace with untrusted commands, so every
   * frame is checked: an oversized or unknown one ends the sandbox instead of growing a buffer.
   */
  private read(chunk: Buffer, onFrame: (type: number) => void): void {
    this.buffered = this.buffered.length > 0 ? Buffer.concat([this.buffered, chunk]) : chunk;
    while (this.buffered.length >= FRAME_HEADER_BYTES) {
      const type = this.buffered[0]!;
      const id = this.buffered.readUInt32BE(1);
      const length = this.buffered.readUInt32BE(5);
      if (length > MAX_FRAME_BYTES) {
        this.protocolError(`a frame of ${length} bytes`);
        return;
      }
      if (this.buffered.length < FRAME_HEADER_BYTES + length) break;
      const payload = this.buffered.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + length);
      this.buffered = this.buffered.subarray(FRAME_HEADER_BYTES + length);
      onFrame(type);
      const entry = this.pending.get(id);
      if (type === FRAME_READY) continue;
      if (!entry) continue;
      if (type === FRAME_STDOUT) entry.stdout.push(payload);
      else if (type === FRAME_STDERR) entry.stderr.push(payload);
      else if (type === FRAME_EXIT) {
        let report: ExitReport;
        try {
          report = parseExit(JSON.parse(payload.toString("utf8")));
        } catch {
          this.protocolError("an unreadable EXIT frame");
          return;
        }
        entry.exit(report);
      } else {
        this.protocolError(`a frame of unknown type ${type}`);
        return;
      }
    }
  }

  private protocolError(what: string): void {
    this.fail(
      new SandboxError("sandbox_transport", `The sandbox's supervisor sent ${what}; the sandbox was killed.`),
    );
    this.kill();
  }
}

function parseExit(value: unknown): ExitReport {
  const v = value as Partial<ExitReport>;
  const count = (n: unknown) => (typeof n === "number" && Number.isSafeInteger(n) && n >= 0 ? n : 0);
  const omitted = Array.isArray(v.omitted) ? v.omitted : [];
  return {
    code: typeof v.code === "number" ? v.code : null,
    signal: typeof v.signal === "string" ? v.signal : null,
    omitted: [count(omitted[0]), count(omitted[1])],
    ...(typeof v.error === "string" ? { error: v.error.slice(0, 500) } : {}),
  };
}

function exitCodeOf(code: number | null, signal: string | null): number {
  if (code !== null) return code;
  const number = signal ? constants.signals[signal as NodeJS.Signals] : undefined;
  return number === undefined ? 128 : 128 + number;
}

function unavailable(why: string, stderr: string): SandboxError {
  return new SandboxError(
    "sandbox_unavailable",
    `The local sandbox could not start its bubblewrap namespace: ${why}${stderr.trim() ? ` (${stderr.trim()})` : ""}. It needs bubblewrap with user namespaces and util-linux unshare 2.38 or later.`,
    { details: { stderr: stderr.trim() } },
  );
}
