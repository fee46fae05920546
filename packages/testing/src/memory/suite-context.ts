import type { MemoryCapabilities, MemoryV1 } from "@openrath/core";
import { createSkipList } from "../internal/skip-list.js";

/** How to start the process the crash-survival test kills: see `describeMemoryConformance`'s `crashWriter`. */
export interface CrashWriterCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  /** Added to this process's environment. */
  readonly env?: Readonly<Record<string, string>>;
}

/** A paraphrase that shares no term with the text it should find, for checking a `vectorSearch` claim. */
export interface MemoryParaphrase {
  /** The entry to store, such as `"My car needs new tyres before winter."`. */
  readonly text: string;
  /** A query that means the same and shares no word with `text`, such as `"automobile maintenance"`. */
  readonly query: string;
}

/**
 * What every group of the memory conformance suite receives: how to open a fresh store and reopen
 * it, the manifest the backend claims, and the caller's skip list.
 */
export interface MemorySuiteContext {
  /** Opens a fresh, empty store. The group closes it after the test. */
  readonly create: () => Promise<MemoryV1>;
  /** Opens the store the latest `create` made once more, or `undefined` when the caller gave none. */
  readonly reopen: (() => Promise<MemoryV1>) | undefined;
  /** The backend's capability manifest; the suite checks every claim it makes. */
  readonly capabilities: MemoryCapabilities;
  /** The caller's paraphrase for the `vectorSearch` claim, if any. */
  readonly paraphrase: MemoryParaphrase | undefined;
  /** The command starting a writer process on the store the latest `create` made, if given. */
  readonly crashWriter: (() => CrashWriterCommand) | undefined;
  /** Per-test timeout in milliseconds. */
  readonly timeoutMs: number;
  /**
   * The reason the caller gave for skipping `title` (a group title, a test title, or
   * `"<group> > <test>"`), or `undefined` when it runs. Every title asked about is remembered, so
   * the suite can report skip keys that name nothing.
   */
  skipped(title: string): string | undefined;
}

/** @internal Builds the context {@link describeMemoryConformance} hands to every group. */
export function createSuiteContext(options: {
  readonly create: () => Promise<MemoryV1>;
  readonly reopen?: () => Promise<MemoryV1>;
  readonly capabilities: MemoryCapabilities;
  readonly paraphrase?: MemoryParaphrase;
  readonly crashWriter?: () => CrashWriterCommand;
  readonly skip?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}): MemorySuiteContext & { readonly asked: ReadonlySet<string> } {
  const skips = createSkipList(options.skip);
  return {
    create: options.create,
    reopen: options.reopen,
    capabilities: options.capabilities,
    paraphrase: options.paraphrase,
    crashWriter: options.crashWriter,
    timeoutMs: options.timeoutMs ?? 30_000,
    asked: skips.asked,
    skipped: skips.skipped,
  };
}
