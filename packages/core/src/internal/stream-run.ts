import type { RunEvent, RunOptions } from "../agent-options.js";
import { OpenRathError } from "../errors.js";
import type { Session } from "../session.js";
import { linkedController, unracedSignal } from "./abort.js";
import { AsyncQueue } from "./async-queue.js";

/**
 * A run as an async iterable (`agent.stream`, `workflow.stream`): `start` runs with a signal of
 * the stream's own, chained to the caller's, and an `onEvent` that hands each event kept by `keep`
 * (every event without one) to the caller's `onEvent` and to the consumer; then `{ type: "session" }`,
 * or the run's error. Leaving the loop early (`break`, `return`, a throw) aborts the run.
 */
export function streamRun<E extends RunEvent>(
  options: RunOptions,
  start: (options: RunOptions) => Promise<Session>,
  keep?: (event: RunEvent) => event is E,
): AsyncIterable<E> {
  const { controller, unlink } = linkedController(options.signal);
  // Without the caller's signal only the consumer leaving fires ours, and then nobody waits:
  // calls in flight get the abort but are not raced, and the run stops before its next call.
  if (!options.signal) unracedSignal(controller.signal);
  const queue = new AsyncQueue<E>(() =>
    controller.abort(new OpenRathError("aborted", "The stream's consumer stopped reading.")),
  );
  const onEvent = (event: RunEvent) => {
    if (keep && !keep(event)) return;
    options.onEvent?.(event);
    queue.push(event as E);
  };
  start({ ...options, signal: controller.signal, onEvent }).then(
    (out) => {
      unlink();
      queue.push({ type: "session", session: out } as E);
      queue.end();
    },
    (error) => {
      unlink();
      queue.fail(error);
    },
  );
  return queue;
}
