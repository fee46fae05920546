import type { SignalsCapabilities } from "@openrath/runtime-durable/store";
import { describe } from "vitest";
import { checkSkipKeys } from "../internal/skip-list.js";
import { deliverySuite } from "./delivery.suite.js";
import { runtimeSuite } from "./runtime.suite.js";
import { createSuiteContext, type SignalsFixture } from "./suite-context.js";

export type { SignalsFixture, SignalsSuiteContext } from "./suite-context.js";

/** Options of {@link describeSignalsConformance}. */
export interface SignalsConformanceOptions {
  /** Names the backend in the suite's title: `signals conformance: <name>`. */
  readonly name: string;
  /**
   * Opens a fresh store and the signals under test over it: the store's own (`store.signals`) or
   * another backend (Redis) beside it. Called once per test; both are closed after it.
   */
  readonly create: () => Promise<SignalsFixture>;
  /**
   * Opens another process's view of the latest `create`: a second store handle on the same
   * database and a second signals instance (its own connections). Cross-process tests need it.
   */
  readonly peer?: () => Promise<SignalsFixture>;
  /** The capabilities the backend claims (normally `signals.capabilities`); the suite checks them. */
  readonly capabilities: SignalsCapabilities;
  /** Tests to skip with the reason: a group title, a test title, or `"<group> > <test>"`. Unknown keys fail. */
  readonly skip?: Readonly<Record<string, string>>;
  /** Per-test timeout in milliseconds (default 30 000). */
  readonly timeoutMs?: number;
}

/**
 * Registers the signals conformance suite for one backend: delivery on every topic, per-run
 * channels, fan-out to every subscriber, live payloads (when claimed), unsubscribe, cross-process
 * delivery (when claimed and a peer is given) and close; and in the runtime: wake-ups without
 * polling, cancel as a kill switch, late subscribers with no gap and no duplicate, live fan-out.
 *
 * @example
 * ```ts
 * // src/acme-signals.conformance.test.ts
 * import { describeSignalsConformance } from "@openrath/testing/signals";
 *
 * describeSignalsConformance({
 *   name: "acme",
 *   create: async () => {
 *     const store = await pgliteStore();
 *     return { store, signals: acmeSignals({ fallback: store.signals }) };
 *   },
 *   capabilities: { crossProcess: true, livePayloads: true },
 * });
 * ```
 */
export function describeSignalsConformance(options: SignalsConformanceOptions): void {
  const context = createSuiteContext(options);
  describe(`signals conformance: ${options.name}`, () => {
    deliverySuite(context);
    runtimeSuite(context);

    checkSkipKeys(options.skip, context);
  });
}
