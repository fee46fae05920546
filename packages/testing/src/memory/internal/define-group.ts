import type { MemoryV1 } from "@openrath/core";
import { afterEach, describe, it } from "vitest";
import type { MemorySuiteContext } from "../suite-context.js";

/** What a group's body uses to register tests and open stores. */
export interface GroupApi {
  /**
   * Registers a test. When the caller's `skip` names the test (by title or `"<group> > <title>"`)
   * or its group, it is registered with `it.skip` and the reason is appended to the title.
   */
  test(title: string, fn: () => Promise<void>, timeoutMs?: number): void;
  /** Registers a test the suite cannot check for this backend, skipped with `reason` in its title. */
  skip(title: string, reason: string): void;
  /** Opens a fresh, empty store through the context's `create`; it is closed after the test. */
  open(): Promise<MemoryV1>;
  /**
   * Opens the store the latest {@link GroupApi.open} made once more, through the context's
   * `reopen`; it is closed after the test.
   *
   * @throws when the caller gave no `reopen`, naming the claim that needs it.
   */
  reopen(claim: "persistence" | "sharedWriters"): Promise<MemoryV1>;
}

/**
 * Registers `describe(title)` with an `afterEach` that closes every store the test opened, and
 * hands `body` the API to register tests.
 */
export function defineGroup(
  context: MemorySuiteContext,
  title: string,
  body: (group: GroupApi) => void,
): void {
  const groupReason = context.skipped(title);
  const opened: MemoryV1[] = [];
  describe(groupReason === undefined ? title : `${title} (skipped: ${groupReason})`, () => {
    afterEach(async () => {
      // close is idempotent, so stores the test closed itself are closed again harmlessly.
      const closing = opened.splice(0).map((memory) => memory.close());
      const results = await Promise.allSettled(closing);
      const errors = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
      if (errors.length > 0) {
        throw new AggregateError(errors, `close() failed for ${errors.length} store(s) after the test.`);
      }
    });
    body({
      test(testTitle, fn, timeoutMs = context.timeoutMs) {
        const byTitle = context.skipped(testTitle);
        const byPath = context.skipped(`${title} > ${testTitle}`);
        const reason = byPath ?? byTitle ?? groupReason;
        if (reason !== undefined) it.skip(`${testTitle} (skipped: ${reason})`, fn);
        else it(testTitle, fn, timeoutMs);
      },
      skip(testTitle, reason) {
        context.skipped(testTitle);
        context.skipped(`${title} > ${testTitle}`);
        it.skip(`${testTitle} (skipped: ${reason})`, () => {});
      },
      async open() {
        const memory = await context.create();
        opened.push(memory);
        return memory;
      },
      async reopen(claim) {
        if (context.reopen === undefined) {
          throw new Error(
            `capabilities.${claim} is true but describeMemoryConformance got no reopen option. Pass reopen: () => Promise<MemoryV1> opening the store the latest create() made, or set ${claim} to false.`,
          );
        }
        const memory = await context.reopen();
        opened.push(memory);
        return memory;
      },
    });
  });
}
