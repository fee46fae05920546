import { SandboxError } from "@openrath/core";

/** Why a command was stopped before it ended by itself. */
export type StopReason = "timeout" | "aborted";

/**
 * The error of a command stopped by its timeout or its caller's AbortSignal, with the output so
 * far in `details`. One place, so both local modes word and shape it the same.
 */
export function stopError(
  reason: StopReason,
  what: string,
  timeoutMs: number,
  output: { stdout: string; stderr: string; durationMs: number },
  cause?: unknown,
): SandboxError {
  const timedOut = reason === "timeout";
  return new SandboxError(
    timedOut ? "exec_timeout" : "aborted",
    timedOut
      ? `The command ${what} ran longer than its ${timeoutMs} ms timeout; every process it started was killed. Raise timeoutMs (Infinity turns it off) or make the command finish sooner.`
      : `The command ${what} was aborted by the caller's AbortSignal; every process it started was killed.`,
    {
      cause: timedOut ? undefined : cause,
      details: {
        stdout: output.stdout,
        stderr: output.stderr,
        durationMs: output.durationMs,
        ...(Number.isFinite(timeoutMs) ? { timeoutMs } : {}),
      },
    },
  );
}

/** The error of a command whose signal had fired before it started. */
export function abortedBeforeStart(signal: AbortSignal): SandboxError {
  return new SandboxError(
    "aborted",
    "The command was not started: the caller's AbortSignal had already fired.",
    {
      cause: signal.reason,
      details: { stdout: "", stderr: "" },
    },
  );
}
