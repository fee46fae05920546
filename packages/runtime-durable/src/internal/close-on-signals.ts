import type { StopOptions } from "../worker/worker.js";

/** Options of `DurableRuntime.closeOnSignals`. */
export interface CloseOnSignalsOptions extends StopOptions {
  readonly signals?: readonly NodeJS.Signals[];
  /** Exit the process once closed (default true), with code 0, or 1 when closing failed. */
  readonly exit?: boolean;
}

/**
 * Calls `close` on the first of `options.signals` (default SIGTERM and SIGINT), then exits; a
 * second signal exits at once. Returns a function that removes the handlers.
 */
export function closeOnSignals(
  close: (options: StopOptions) => Promise<void>,
  options: CloseOnSignalsOptions,
): () => void {
  const signals = options.signals ?? ["SIGTERM", "SIGINT"];
  let received = false;
  const onSignal = (name: NodeJS.Signals) => {
    if (received) process.exit(130);
    received = true;
    close(options).then(
      () => {
        if (options.exit !== false) process.exit(0);
      },
      (error: unknown) => {
        process.stderr.write(`openrath: closing on ${name} failed: ${(error as Error)?.message ?? error}\n`);
        if (options.exit !== false) process.exit(1);
      },
    );
  };
  for (const name of signals) process.on(name, onSignal);
  return () => {
    for (const name of signals) process.off(name, onSignal);
  };
}
