import type { RunStoreCapabilities, RunStoreV1 } from "@openrath/runtime-durable";
import { createSkipList } from "../internal/skip-list.js";

/** What every group of the store conformance suite receives. */
export interface StoreSuiteContext {
  /** Opens a fresh, empty store. The group closes it after the test. */
  readonly create: () => Promise<RunStoreV1>;
  /**
   * Opens a second handle on the store the latest `create` made (another process's view), or
   * `undefined`: concurrency tests then use the one handle.
   */
  readonly peer: (() => Promise<RunStoreV1>) | undefined;
  /** The capabilities the backend claims; the suite checks them. */
  readonly capabilities: RunStoreCapabilities;
  readonly timeoutMs: number;
  /** The caller's skip reason for `title`, or `undefined`; every title asked about is remembered. */
  skipped(title: string): string | undefined;
}

/** @internal Builds the context {@link describeStoreConformance} hands to every group. */
export function createSuiteContext(options: {
  readonly create: () => Promise<RunStoreV1>;
  readonly peer?: () => Promise<RunStoreV1>;
  readonly capabilities: RunStoreCapabilities;
  readonly skip?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}): StoreSuiteContext & { readonly asked: ReadonlySet<string> } {
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
