import { OpenRathError, Session } from "@openrath/core";
import { createRunScope } from "@openrath/core/backend";
import { DurableError } from "../contract/durable-error.js";
import type { StepJournalState } from "../contract/journal-records.js";
import type { JournalStoreV1 } from "../contract/journal-store.js";
import type { RunStoreV1 } from "../contract/run-store.js";
import type { StepContext, StepMiddleware } from "../contract/step-context.js";
import { JournalAttempt, type StepJournal } from "./journal-attempt.js";

/** The key of the journal in `ctx.extensions`. */
export const JOURNAL_EXTENSION = "journal";

/**
 * The step journal as a {@link StepMiddleware}: every step attempt opens its visit's journal and
 * gets a context whose `calls` journal every model and tool call of the agents, selectors,
 * compressors and workflows it runs with `ctx` (and whose `scope` numbers their branches),
 * whose `interrupt` asks a human durably, and whose `extensions.journal` is the
 * {@link StepJournal}. `createDurableRuntime` installs it on every worker of a store with the
 * `journal` capability.
 *
 * A resumed attempt answers recorded calls from the journal and continues live from the first
 * unrecorded one. When the attempt parks the run (an interrupt, an effect under review) or fails
 * closed (a divergence, a stale fence), the step's own result is discarded and the coded error is
 * what the worker sees.
 *
 * @throws {DurableError} `not_supported` when the store has no journal.
 */
export function journalMiddleware(
  store: Pick<RunStoreV1, "name" | "capabilities" | "journal">,
): StepMiddleware {
  const journal = store.journal;
  if (!store.capabilities.journal || !journal) {
    throw new DurableError(
      "not_supported",
      `The ${store.name} store has no step journal (capabilities.journal is false); use a store that has one, such as @openrath/store-postgres.`,
    );
  }
  return {
    name: JOURNAL_EXTENSION,
    async around<T>(ctx: StepContext, next: (context: StepContext) => Promise<T>): Promise<T> {
      const state = await openStep(journal, ctx);
      const attempt = new JournalAttempt(journal, ctx, state);
      const inner: StepContext = {
        ...ctx,
        calls: attempt.hooks,
        scope: createRunScope(),
        interrupt: (request) => attempt.interrupt(request),
        extensions: { ...ctx.extensions, [JOURNAL_EXTENSION]: attempt.handle },
      };
      let result: T | undefined;
      let thrown: unknown;
      let ok = false;
      try {
        result = await next(inner);
        ok = true;
      } catch (error) {
        thrown = error;
      }
      await attempt.settle();
      // Replies still on their way to the journal land before the step's result is committed (or retried).
      if (!attempt.failure && !attempt.parked) await attempt.flush().catch(() => {});
      if (attempt.failure) throw attempt.failure;
      if (attempt.parked) {
        throw new DurableError("run_parked", `Run ${ctx.runId} is parked by step "${ctx.stepId}".`, {
          details: { runId: ctx.runId, stepId: ctx.stepId },
        });
      }
      if (!ok) throw thrown;
      if (attempt.evidence.length > 0 && result instanceof Session) {
        return result.append(
          ...attempt.evidence.map((e) => ({
            kind: "event" as const,
            name: "effect.resolved",
            author: ctx.stepId,
            data: { ...e },
          })),
        ) as T;
      }
      return result as T;
    },
  };
}

/**
 * Opens the attempt's journal, retried while the store is unreachable and the step's signal has
 * not fired (the lease may still be ours; the worker's heartbeat aborts the signal once it is not),
 * as the worker retries its own writes.
 */
async function openStep(journal: JournalStoreV1, ctx: StepContext): Promise<StepJournalState> {
  let delay = 25;
  for (;;) {
    try {
      return await journal.openStep(ctx.fence);
    } catch (error) {
      if (!OpenRathError.isInstance(error, "store_unavailable") || ctx.signal.aborted) throw error;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 1000);
    }
  }
}

/**
 * The journal of a step (`ctx.extensions.journal`), or `undefined` outside a journaled runtime.
 *
 * @example
 * ```ts
 * const order = await journalOf(ctx)!.run("create order", () => shop.createOrder(cart));
 * ```
 */
export function journalOf(ctx: Pick<StepContext, "extensions">): StepJournal | undefined {
  return ctx.extensions[JOURNAL_EXTENSION] as StepJournal | undefined;
}
