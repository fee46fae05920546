import type { SandboxCapabilities, SandboxV1 } from "@openrath/core";
import { createSkipList } from "../internal/skip-list.js";

/**
 * What every group of the sandbox conformance suite receives: how to open a fresh sandbox, the
 * manifest the backend claims, and the caller's skip list.
 */
export interface SandboxSuiteContext {
  /** Opens a fresh sandbox. The group closes it after the test. */
  readonly create: () => Promise<SandboxV1>;
  /** The backend's capability manifest; the suite checks every claim it makes. */
  readonly capabilities: SandboxCapabilities;
  /** Per-test timeout in milliseconds. */
  readonly timeoutMs: number;
  /**
   * The reason the caller gave for skipping `title` (a group title, a test title, or
   * `"<group> > <test>"`), or `undefined` when it runs. Every title asked about is remembered, so
   * the suite can report skip keys that name nothing.
   */
  skipped(title: string): string | undefined;
}

/** @internal Builds the context {@link describeSandboxConformance} hands to every group. */
export function createSuiteContext(options: {
  readonly create: () => Promise<SandboxV1>;
  readonly capabilities: SandboxCapabilities;
  readonly skip?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}): SandboxSuiteContext & { readonly asked: ReadonlySet<string> } {
  const skips = createSkipList(options.skip);
  return {
    create: options.create,
    capabilities: options.capabilities,
    timeoutMs: options.timeoutMs ?? 30_000,
    asked: skips.asked,
    skipped: skips.skipped,
  };
}
