/** The abort signal and idle deadline of one provider call. */
export interface CallControl {
  /** Aborts when the caller's signal aborts or the deadline passes; hand it to the SDK. */
  readonly signal: AbortSignal;
  /** Whether the deadline (not the caller) ended the call. */
  readonly timedOut: boolean;
  /** Restarts the deadline: the server just sent something. */
  touch(): void;
  /** Stops the deadline while the caller, not the server, holds things up. */
  pause(): void;
  /** Releases the timer and the listener on the caller's signal. */
  done(): void;
}

/**
 * Starts the control of one call: a signal that follows the caller's `signal` and fires on its own
 * once `timeoutMs` pass without a {@link CallControl.touch}.
 */
export function callControl(signal: AbortSignal | undefined, timeoutMs: number): CallControl {
  const controller = new AbortController();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onAbort = () => controller.abort(signal?.reason);
  const pause = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  const touch = () => {
    pause();
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`No answer from the server within ${timeoutMs} ms.`));
    }, timeoutMs);
  };
  if (signal?.aborted) controller.abort(signal.reason);
  else signal?.addEventListener("abort", onAbort, { once: true });
  touch();
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    touch,
    pause,
    done: () => {
      pause();
      signal?.removeEventListener("abort", onAbort);
    },
  };
}
