import { Worker } from "node:worker_threads";
import type { JsonValue, SessionJSON } from "@openrath/core";
import { DurableError } from "../contract/durable-error.js";

// Evaluated as a CommonJS script in the thread: it imports the step's module, calls its export
// with the session JSON and a plain context, and posts back the result's JSON.
const THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
(async () => {
  try {
    const mod = await import(workerData.module);
    const fn = workerData.export === "default" ? (mod.default ?? mod) : mod[workerData.export];
    if (typeof fn !== "function") throw Object.assign(new Error("export " + JSON.stringify(workerData.export) + " of " + workerData.module + " is not a function"), { code: "invalid_definition" });
    const out = await fn(workerData.session, workerData.context);
    const json = out && typeof out.toJSON === "function" ? out.toJSON() : out;
    parentPort.postMessage({ ok: true, json: JSON.stringify(json === undefined ? null : json) });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String(error && error.message || error), code: error && error.code });
  }
})();
`;

/** What an isolated step's module export receives as its second argument. */
export interface IsolatedContext {
  readonly runId: string;
  readonly stepId: string;
  readonly attempt: number;
  readonly tenantId: string;
  readonly deadline: number | null;
  readonly metadata: Readonly<Record<string, JsonValue>>;
}

/**
 * Runs an isolated step in a fresh worker thread and terminates the thread when `timeoutMs`
 * passes or `signal` fires — a step that ignores its signal (a busy loop, a blocking call) is
 * stopped all the same.
 *
 * @returns the JSON the step returned (checked by the caller).
 * @throws {DurableError} `step_timeout` at the timeout; the signal's reason when it fires; `step_failed`
 *   when the step throws.
 */
export function runIsolated(
  step: { readonly module: string; readonly export: string },
  session: SessionJSON,
  context: IsolatedContext,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const thread = new Worker(THREAD, {
      eval: true,
      workerData: { module: step.module, export: step.export, session, context },
    });
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      fn();
      // Terminating after a result is harmless; before one, it is what stops a runaway step.
      thread.terminate().catch(() => {});
    };
    const timer = setTimeout(
      () =>
        finish(() =>
          reject(
            new DurableError(
              "step_timeout",
              `Step "${context.stepId}" ran past its ${timeoutMs} ms timeout and was stopped.`,
              {
                details: { stepId: context.stepId, timeoutMs, retryable: true },
              },
            ),
          ),
        ),
      timeoutMs,
    );
    const onAbort = () => finish(() => reject(signal.reason));
    signal.addEventListener("abort", onAbort, { once: true });
    thread.once("message", (message: { ok: boolean; json?: string; message?: string; code?: string }) => {
      if (message.ok) finish(() => resolve(JSON.parse(message.json ?? "null")));
      else
        finish(() =>
          reject(
            new DurableError("step_failed", `Step "${context.stepId}" failed: ${message.message}`, {
              details: { stepId: context.stepId, ...(message.code ? { causeCode: message.code } : {}) },
            }),
          ),
        );
    });
    thread.once("error", (error) =>
      finish(() =>
        reject(
          new DurableError("step_failed", `Step "${context.stepId}" crashed its thread: ${error.message}`, {
            cause: error,
          }),
        ),
      ),
    );
    thread.once("exit", (code) => {
      if (!settled)
        finish(() =>
          reject(
            new DurableError(
              "step_failed",
              `Step "${context.stepId}"'s thread exited with code ${code} before answering.`,
            ),
          ),
        );
    });
  });
}
