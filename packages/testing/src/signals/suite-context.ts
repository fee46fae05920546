import type { RunStoreV1, SignalsCapabilities, SignalsV1 } from "@openrath/runtime-durable";
import { createSkipList } from "../internal/skip-list.js";

/** A store and the signals under test over it (the store's own, or another backend beside it). */
export interface SignalsFixture {
  readonly store: RunStoreV1;
  readonly signals: SignalsV1;
}

/** What every group of the signals conformance suite receives. */
export interface SignalsSuiteContext {
  /** Opens a fresh store and the signals under test. The group closes both after the test. */
  readonly create: () => Promise<SignalsFixture>;
  /**
   * Another process's view of the fixture the latest `create` made (a second store handle and its
   * own signals instance), or `undefined`: cross-process tests are then skipped.
   */
  readonly peer: (() => Promise<SignalsFixture>) | undefined;
  /** The capabilities the backend claims; the suite checks them. */
  readonly capabilities: SignalsCapabilities;
  readonly timeoutMs: number;
  /** The caller's skip reason for `title`, or `undefined`; every title asked about is remembered. */
  skipped(title: string): string | undefined;
}

/** @internal Builds the context {@link describeSignalsConformance} hands to every group. */
export function createSuiteContext(options: {
  readonly create: () => Promise<SignalsFixture>;
  readonly peer?: () => Promise<SignalsFixture>;
  readonly capabilities: SignalsCapabilities;
  readonly skip?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}): SignalsSuiteContext & { readonly asked: ReadonlySet<string> } {
  const skips = createSkipList(options.skip);
  return {
    create: options.create,
    peer: options.peer,
    capabilities: options.capabilities,
    timeoutMs: options.timeoutMs ?? 30_000,
    asked: skips.asked,
    skipped: skips.skipped,
  };
}

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
