import type { RunStoreV1, SignalsCapabilities, SignalsV1 } from "@openrath/runtime-durable/store";
import { type ConformanceContext, conformanceContext } from "../internal/suite-context.js";

/** A store and the signals under test over it (the store's own, or another backend beside it). */
export interface SignalsFixture {
  readonly store: RunStoreV1;
  readonly signals: SignalsV1;
}

/**
 * What every group of the signals conformance suite receives. `create` opens a fresh store and the
 * signals under test; `peer` another process's view of it (a second store handle and its own
 * signals instance), without which cross-process tests are skipped.
 */
export interface SignalsSuiteContext extends ConformanceContext<SignalsFixture, SignalsCapabilities> {}

/** @internal Builds the context {@link describeSignalsConformance} hands to every group. */
export const createSuiteContext = conformanceContext<SignalsFixture, SignalsCapabilities>;

/** A fixture as one closeable resource: the signals first (when they are not the store's own), then the store. */
export function closeable(fixture: SignalsFixture): SignalsFixture & { close(): Promise<void> } {
  return {
    ...fixture,
    async close() {
      if (fixture.signals !== fixture.store.signals) await fixture.signals.close();
      await fixture.store.close();
    },
  };
}

/** Resolves once `check` holds, polling every 5 ms; rejects with `what` after `ms`. */
export async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
