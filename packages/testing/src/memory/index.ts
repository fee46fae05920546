import type { MemoryCapabilities, MemoryV1 } from "@openrath/core";
import { describe } from "vitest";
import { checkSkipKeys } from "../internal/skip-list.js";
import { capabilitiesSuite } from "./capabilities.suite.js";
import { commitSuite } from "./commit.suite.js";
import { concurrencySuite } from "./concurrency.suite.js";
import { crashSuite } from "./crash.suite.js";
import { deletionSuite } from "./deletion.suite.js";
import { failedWritesSuite } from "./failed-writes.suite.js";
import { idsSuite } from "./ids.suite.js";
import { largeEntriesSuite } from "./large-entries.suite.js";
import { lifecycleSuite } from "./lifecycle.suite.js";
import { persistenceSuite } from "./persistence.suite.js";
import { rankingSuite } from "./ranking.suite.js";
import { rememberRecallSuite } from "./remember-recall.suite.js";
import { scopesSuite } from "./scopes.suite.js";
import { type CrashWriterCommand, createSuiteContext, type MemoryParaphrase } from "./suite-context.js";
import { unicodeSuite } from "./unicode.suite.js";

export type { CrashWriterCommand, MemoryParaphrase, MemorySuiteContext } from "./suite-context.js";

/** Options of {@link describeMemoryConformance}. */
export interface MemoryConformanceOptions {
  /** Names the backend in the suite's title: `memory conformance: <name>`. */
  readonly name: string;
  /**
   * Opens a fresh, empty store (a new directory, database or namespace). Called once per test; the
   * suite closes every store it opened after the test.
   */
  readonly create: () => Promise<MemoryV1>;
  /**
   * Opens the store the latest `create` made once more: after it was closed (persistence), or while
   * it is still open, as a second handle (shared writers). Required when `capabilities.persistence`
   * or `capabilities.sharedWriters` is claimed.
   */
  readonly reopen?: () => Promise<MemoryV1>;
  /**
   * The backend's capability manifest, normally the descriptor's `capabilities`. The suite checks
   * every claim; a claim set to `false` is not required.
   */
  readonly capabilities: MemoryCapabilities;
  /**
   * An entry and a query that means the same but shares no word with it, for checking a
   * `vectorSearch` claim. Only a backend configured with an embedder can pass, so the check is
   * skipped (with the reason shown) when this is absent.
   */
  readonly paraphrase?: MemoryParaphrase;
  /**
   * Required when `capabilities.persistence` is claimed: the command that starts a process
   * writing to the store the latest `create` made, by calling `runMemoryWriter(open)` from
   * `@openrath/testing/memory-writer`. The suite kills it with SIGKILL mid-write and checks that
   * every entry it acknowledged is there after `reopen`.
   */
  readonly crashWriter?: () => CrashWriterCommand;
  /**
   * Tests to skip, with the reason: a key is a group title (`"unicode"`), a test title, or
   * `"<group> > <test title>"`. A skipped test is registered with `it.skip` and the reason is shown
   * in its title. A key that names no group or test fails the suite, so typos do not go unnoticed.
   */
  readonly skip?: Readonly<Record<string, string>>;
  /** Timeout of each test in milliseconds (default 30 000). Raise it for remote stores. */
  readonly timeoutMs?: number;
}

/**
 * Registers the memory conformance suite for one backend: a `describe` block with one group per
 * behaviour (lifecycle, remember and recall, scope isolation, persistence, crash survival, id
 * semantics, failed writes, concurrent writers, ranking, unicode, deletion, large entries, commit,
 * capabilities), each test on a fresh store. Call
 * it at the top level of a `*.conformance.test.ts` file.
 *
 * @example
 * ```ts
 * // src/acme-memory.conformance.test.ts
 * import { mkdtempSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { describeMemoryConformance } from "@openrath/testing/memory";
 * import { acmeMemory } from "./acme-memory.js";
 *
 * const backend = acmeMemory();
 * let dir = "";
 * describeMemoryConformance({
 *   name: "acme",
 *   create: () => {
 *     dir = mkdtempSync(join(tmpdir(), "acme-memory-"));
 *     return backend.open({ dir });
 *   },
 *   reopen: () => backend.open({ dir }),
 *   capabilities: backend.capabilities,
 *   skip: { "Japanese: \"東京タワー\" is found by \"東京\"": "no CJK segmentation yet" },
 * });
 * ```
 */
export function describeMemoryConformance(options: MemoryConformanceOptions): void {
  const context = createSuiteContext(options);
  describe(`memory conformance: ${options.name}`, () => {
    lifecycleSuite(context);
    rememberRecallSuite(context);
    scopesSuite(context);
    persistenceSuite(context);
    crashSuite(context);
    idsSuite(context);
    failedWritesSuite(context);
    concurrencySuite(context);
    rankingSuite(context);
    unicodeSuite(context);
    deletionSuite(context);
    largeEntriesSuite(context);
    commitSuite(context);
    capabilitiesSuite(context);

    checkSkipKeys(options.skip, context);
  });
}
