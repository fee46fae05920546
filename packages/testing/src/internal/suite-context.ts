import { createSkipList } from "./skip-list.js";

/**
 * What every group of a durable-plane conformance suite (store, signals) receives: how to open a
 * fresh fixture `F` and, where the backend has one, another process's view of it; the
 * capabilities `C` the backend claims; and the caller's skip list.
 */
export interface ConformanceContext<F, C> {
  /** Opens a fresh fixture. The group closes it after the test. */
  readonly create: () => Promise<F>;
  /**
   * Another process's view of the fixture the latest `create` made, or `undefined`: tests that
   * need a second process then use the one handle or are skipped.
   */
  readonly peer: (() => Promise<F>) | undefined;
  /** The capabilities the backend claims; the suite checks them. */
  readonly capabilities: C;
  readonly timeoutMs: number;
  /** The caller's skip reason for `title`, or `undefined`; every title asked about is remembered. */
  skipped(title: string): string | undefined;
}

/** Builds a {@link ConformanceContext} from a suite's options (default timeout 30 s). */
export function conformanceContext<F, C>(options: {
  readonly create: () => Promise<F>;
  readonly peer?: () => Promise<F>;
  readonly capabilities: C;
  readonly skip?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}): ConformanceContext<F, C> & { readonly asked: ReadonlySet<string> } {
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
