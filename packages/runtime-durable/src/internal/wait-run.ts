import { DurableError } from "../contract/durable-error.js";
import type { JournalStoreV1 } from "../contract/journal-store.js";
import type { RunRecord } from "../contract/run-records.js";
import type { RunStoreV1 } from "../contract/run-store.js";
import type { SignalsV1 } from "../contract/signals.js";
import { isTerminal, type RunStatus } from "../contract/status.js";
import type { OperatorScope } from "../interrupts/interrupt-operations.js";
import type { LocalDispatch } from "../worker/local-dispatch.js";

/** Options of `DurableRuntime.wait` and `DurableRuntime.result`. */
export interface WaitOptions extends OperatorScope {
  readonly signal?: AbortSignal;
  /**
   * What a park (`waiting` for an interrupt, `needs_review` for an effect) does to the wait:
   * `"throw"` (default) rejects with `run_parked`, naming the interrupts or effects the run waits
   * on; `"return"` resolves with the parked run (`wait` only); `"wait"` waits through parks until
   * the run ends.
   */
  readonly onPark?: "throw" | "return" | "wait";
}

/** What a parked run waits on, in the details of a `run_parked` error from `wait` or `result`. */
export interface ParkedRunDetails {
  readonly runId: string;
  readonly status: "waiting" | "needs_review";
  /** Pending interrupts: decide them with `runtime.interrupts.decide`. */
  readonly interrupts: readonly { readonly id: string; readonly kind: string; readonly stepId: string }[];
  /** Effects under review: resolve them with `runtime.effects.resolve`. */
  readonly effects: readonly { readonly id: string; readonly tool: string; readonly stepId: string }[];
}

/** What waiting for a run reads: the store, its signals, and what this runtime's workers ended. */
export interface WaitEnv {
  readonly store: RunStoreV1;
  readonly signals: SignalsV1;
  readonly dispatch: LocalDispatch;
  /** The store's journal, for what a parked run waits on. */
  readonly journal: JournalStoreV1 | undefined;
}

const isParked = (status: RunStatus): status is "waiting" | "needs_review" =>
  status === "waiting" || status === "needs_review";

/** A promise that `wake` resolves, or a slow safety re-read after 10 s (a notification lost in a reconnect). */
function nextWake(set: (wake: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    set(resolve);
    setTimeout(resolve, 10_000).unref?.();
  });
}

/**
 * Waits until the run of `tenantId` ends (or parks, by `options.onPark`), woken by its signals
 * and by this runtime's workers, not by polling (ADR 0018 decision 5).
 *
 * @throws {DurableError} `run_not_found`, `run_parked`, `invalid_argument` for an unknown
 *   `onPark`; the signal's reason when `options.signal` fires.
 */
export async function waitRun(
  env: WaitEnv,
  runId: string,
  tenantId: string,
  options: WaitOptions,
): Promise<RunRecord> {
  const { store, signals, dispatch } = env;
  const onPark = options.onPark ?? "throw";
  if (onPark !== "throw" && onPark !== "return" && onPark !== "wait")
    throw new DurableError(
      "invalid_argument",
      `onPark must be "throw", "return" or "wait", got ${String(onPark)}.`,
    );
  const done = (status: RunStatus) => isTerminal(status) || (onPark !== "wait" && isParked(status));
  const settle = async (run: RunRecord): Promise<RunRecord> => {
    if (run.tenantId !== tenantId)
      throw new DurableError("run_not_found", `No run ${runId}.`, { details: { runId } });
    if (onPark === "throw" && isParked(run.status)) throw await parkedError(env, run);
    return run;
  };
  let wake: (() => void) | undefined;
  const setWake = (w: () => void) => {
    wake = w;
  };
  let pending = false;
  let final = false;
  const poke = () => {
    pending = true;
    const w = wake;
    wake = undefined;
    w?.();
  };
  const stop = await signals.subscribe(`run:${runId}`, (signal) => {
    // A live payload changes nothing stored, and a known non-final status needs no read.
    if (
      signal.kind === "event" &&
      (signal.live !== undefined || (signal.status !== undefined && !done(signal.status)))
    )
      return;
    final ||= signal.kind === "event" && signal.status !== undefined && isTerminal(signal.status);
    poke();
  });
  const onAbort = () => wake?.();
  options.signal?.addEventListener("abort", onAbort);
  // A worker of this runtime ending the run wakes the waiter at once, before the end's signal.
  const unwatch = dispatch.onEnd(runId, poke);
  // A run a worker of this runtime ended: its final record, without a read.
  const endedHere = () => {
    const run = dispatch.endedRun(runId);
    return run && done(run.status) ? run : undefined;
  };
  // A run submitted here that the signals heard nothing end or park since: its next signal is
  // awaited without reading it first.
  const since = dispatch.submittedAt(runId);
  const heard = signals.capabilities.heardRuns === true ? signals.heardRuns : undefined;
  let unread = since !== undefined && heard?.heard(runId, since) === null;
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      if (unread && !pending && !endedHere()) {
        unread = false;
        await nextWake(setWake);
        continue;
      }
      unread = false;
      pending = false;
      // An embedded store announces the end before its worker has the record back: let it land.
      if (final) await new Promise((resolve) => setImmediate(resolve));
      final = false;
      const known = endedHere();
      if (known) return await settle(known);
      const run = await store.getRun(runId, tenantId);
      if (!run) throw new DurableError("run_not_found", `No run ${runId}.`, { details: { runId } });
      if (done(run.status)) return await settle(run);
      if (pending) continue;
      // Woken by the run's next event.
      await nextWake(setWake);
    }
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    unwatch();
    await stop();
  }
}

/** The `run_parked` error of a parked run, naming what it waits on (from the journal, when the store has one). */
async function parkedError(env: WaitEnv, run: RunRecord): Promise<DurableError> {
  const status = run.status as ParkedRunDetails["status"];
  const journal = env.store.capabilities.journal ? env.journal : undefined;
  const [interrupts, effects] = journal
    ? await Promise.all([
        journal.listInterrupts({ tenantId: run.tenantId, runId: run.id, status: "pending", limit: 200 }),
        journal.listEffects({ tenantId: run.tenantId, runId: run.id, status: "needs_review", limit: 200 }),
      ])
    : [{ items: [] }, { items: [] }];
  const details: ParkedRunDetails = {
    runId: run.id,
    status,
    interrupts: interrupts.items.map((i) => ({ id: i.id, kind: i.kind, stepId: i.stepId })),
    effects: effects.items.map((e) => ({ id: e.id, tool: e.tool, stepId: e.stepId })),
  };
  const what = [
    ...details.interrupts.map((i) => `${i.kind} interrupt ${i.id} (step "${i.stepId}")`),
    ...details.effects.map((e) => `effect ${e.id} of tool "${e.tool}" under review (step "${e.stepId}")`),
  ];
  const how =
    status === "waiting"
      ? "decide it with runtime.interrupts.decide"
      : "resolve it with runtime.effects.resolve";
  return new DurableError(
    "run_parked",
    `Run ${run.id} is parked (${status})${what.length > 0 ? ` waiting on ${what.join(", ")}` : ""}: ${how}, then wait again (or pass { onPark: "wait" } to wait through parks).`,
    { details: { ...details } },
  );
}
