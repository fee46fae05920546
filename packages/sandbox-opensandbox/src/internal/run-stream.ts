import { type ExecResult, SandboxError } from "@openrath/core";
import type { OutputBuffer } from "@openrath/core/backend";
import type { ExecdEvent } from "./event-stream.js";
import { within } from "./sleep.js";

/** Why a run was cut short by this side. */
export type Stop = "timeout" | "aborted" | "closed";

/** How a run ended on execd's side. */
export type Outcome = { readonly code: number } | { readonly startError: string };

/** One streamed run (a command or a code cell), as {@link runStream} drives it. */
export interface StreamRun {
  /** For messages: "Command `ls`", "Python code". */
  readonly what: string;
  /** The sandbox id, for details. */
  readonly sandboxId: string;
  /** `Infinity` for none. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Fires when the sandbox closes. */
  readonly lifetime: AbortSignal;
  readonly stdout: OutputBuffer;
  readonly stderr: OutputBuffer;
  /** Starts the request; the events until the stream ends. */
  open(signal: AbortSignal): AsyncIterable<ExecdEvent>;
  /** Handles one event; returns the outcome at the terminal event. */
  onEvent(event: ExecdEvent): Outcome | undefined;
  /**
   * Stops what runs on execd's side, the id of its `init` event given when one came: after a
   * timeout, an abort, and a stream that broke before its terminal event (execd keeps running a
   * command whose client went away).
   */
  interrupt(id: string | undefined): Promise<void>;
  /** Called once the stream is over, before the result or error is built (flushes line buffers). */
  finish?(): void;
}

/** How long to wait, after an interrupt, for the stream's terminal event (execd escalates to SIGKILL after 3 s). */
const INTERRUPT_GRACE_MS = 5000;
/** How long to wait for a run's `init` (its id) before interrupting without one. */
const INIT_WAIT_MS = 2000;

/**
 * Runs one stream to its end with `timeoutMs`, the caller's signal and the sandbox's close: the
 * one path both commands and code cells take. On a stop it interrupts the run and waits (bounded)
 * for execd to confirm; on a stream that breaks before its terminal event it interrupts the run
 * too, then reports `sandbox_transport` — never success.
 *
 * @throws {SandboxError} `exec_timeout`, `aborted`, `sandbox_closed` (the output so far in
 *   `details`), `sandbox_transport`, `sandbox_remote_error`, or what `mapFailure` makes of a
 *   request that failed.
 */
export async function runStream(
  run: StreamRun,
  mapFailure: (error: unknown, what: string) => SandboxError,
): Promise<ExecResult> {
  const started = performance.now();
  if (run.signal?.aborted) throw stopError("aborted", run);
  const controller = new AbortController();
  let initId: string | undefined;
  let gotInit: (id: string | undefined) => void = () => {};
  const init = new Promise<string | undefined>((resolve) => {
    gotInit = resolve;
  });
  let endStream: () => void = () => {};
  const ended = new Promise<void>((resolve) => {
    endStream = resolve;
  });
  let stop: Stop | undefined;
  let stopping: Promise<void> | undefined;
  let outcome: Outcome | undefined;

  const halt = (why: Stop) => {
    if (stop || outcome) return;
    stop = why;
    if (why === "closed") {
      // A closing sandbox is deleted with everything in it: no interrupt to send.
      controller.abort();
      stopping = Promise.resolve();
      return;
    }
    stopping = (async () => {
      await run.interrupt(await within(init, INIT_WAIT_MS)).catch(() => undefined);
      await within(ended, INTERRUPT_GRACE_MS);
      controller.abort();
    })();
  };
  const timer = Number.isFinite(run.timeoutMs) ? setTimeout(() => halt("timeout"), run.timeoutMs) : undefined;
  const onAbort = () => halt("aborted");
  const onClose = () => halt("closed");
  run.signal?.addEventListener("abort", onAbort);
  run.lifetime.addEventListener("abort", onClose);

  let failure: unknown;
  try {
    for await (const event of run.open(controller.signal)) {
      if (event.type === "init") {
        initId = typeof event.text === "string" ? event.text : undefined;
        gotInit(initId);
        continue;
      }
      outcome = run.onEvent(event);
      if (outcome) break;
    }
  } catch (error) {
    failure = error;
  } finally {
    clearTimeout(timer);
    run.signal?.removeEventListener("abort", onAbort);
    run.lifetime.removeEventListener("abort", onClose);
    gotInit(undefined);
    endStream();
    // Frees the connection without waiting out execd's graceful delay after the terminal event.
    if (!stopping) controller.abort();
  }
  run.finish?.();
  if (stop) {
    await stopping;
    throw stopError(stop, run);
  }
  if (!outcome && !run.lifetime.aborted) {
    // The stream broke (or ended) before its terminal event: execd keeps running what the client
    // left, so stop it before reporting.
    await within(
      run.interrupt(initId).catch(() => undefined),
      INTERRUPT_GRACE_MS,
    );
  }
  if (failure !== undefined) {
    const error = mapFailure(failure, run.what);
    throw new SandboxError(error.code, error.message, {
      cause: error.cause ?? failure,
      details: { ...error.details, stdout: run.stdout.text(), stderr: run.stderr.text() },
    });
  }
  if (!outcome) {
    throw new SandboxError(
      "sandbox_transport",
      `${run.what} lost its result: execd's stream ended without execution_complete or error, so the exit code is unknown${initId ? "; it was interrupted" : ""}.`,
      { details: { id: run.sandboxId, stdout: run.stdout.text(), stderr: run.stderr.text() } },
    );
  }
  if ("startError" in outcome) {
    throw new SandboxError("sandbox_remote_error", `${run.what} could not start: ${outcome.startError}`, {
      details: { id: run.sandboxId },
    });
  }
  if (outcome.code === -1 && Number.isFinite(run.timeoutMs)) {
    // execd's own timeout fired first (a slow clock or network): still a timeout.
    throw stopError("timeout", run);
  }
  return {
    exitCode: outcome.code,
    stdout: run.stdout.text(),
    stderr: run.stderr.text(),
    truncated: run.stdout.truncated || run.stderr.truncated,
    durationMs: Math.round(performance.now() - started),
  };
}

/** The error of a run this side stopped, with the output so far. */
export function stopError(
  stop: Stop,
  run: Pick<StreamRun, "what" | "sandboxId" | "timeoutMs" | "signal" | "stdout" | "stderr">,
): SandboxError {
  const details = { id: run.sandboxId, stdout: run.stdout.text(), stderr: run.stderr.text() };
  if (stop === "closed") {
    return new SandboxError(
      "sandbox_closed",
      `${run.what} was cut short: OpenSandbox sandbox ${run.sandboxId} was closed.`,
      { details },
    );
  }
  if (stop === "timeout") {
    return new SandboxError(
      "exec_timeout",
      `${run.what} did not finish within ${run.timeoutMs} ms and was killed. Raise timeoutMs (Infinity turns it off) or make it faster.`,
      { details: { ...details, timeoutMs: run.timeoutMs } },
    );
  }
  return new SandboxError("aborted", `${run.what} was aborted and killed.`, {
    cause: run.signal?.reason,
    details,
  });
}
