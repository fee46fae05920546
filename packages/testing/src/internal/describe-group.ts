import { afterEach, describe, it } from "vitest";

/** What every suite's group body uses to register tests and hand over resources to close. */
export interface GroupBase<T> {
  /**
   * Registers a test. When the caller's `skip` names the test (by title or `"<group> > <title>"`)
   * or its group, it is registered with `it.skip` and the reason is appended to the title.
   */
  test(title: string, fn: () => Promise<void>, timeoutMs?: number): void;
  /** Registers a test the suite cannot check for this backend, skipped with `reason` in its title. */
  skip(title: string, reason: string): void;
  /** Closes `resource` after the test. */
  track(resource: T): T;
}

/** The parts of a suite context a group needs. */
export interface GroupContext {
  readonly timeoutMs: number;
  skipped(title: string): string | undefined;
}

/**
 * Registers `describe(title)` with an `afterEach` that closes every resource the test tracked
 * (sandboxes, stores; `close` is idempotent, so one the test closed itself closes again
 * harmlessly), and hands `body` the API to register tests.
 */
export function describeGroup<T extends { close(): Promise<void> }>(
  context: GroupContext,
  title: string,
  noun: string,
  body: (group: GroupBase<T>) => void,
): void {
  const groupReason = context.skipped(title);
  const opened: T[] = [];
  describe(groupReason === undefined ? title : `${title} (skipped: ${groupReason})`, () => {
    afterEach(async () => {
      const results = await Promise.allSettled(opened.splice(0).map((resource) => resource.close()));
      const errors = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
      if (errors.length > 0) {
        throw new AggregateError(errors, `close() failed for ${errors.length} ${noun}(s) after the test.`);
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
        // Marks the skip keys as used, so a caller's key naming this test is not reported as unknown.
        context.skipped(testTitle);
        context.skipped(`${title} > ${testTitle}`);
        it.skip(`${testTitle} (skipped: ${reason})`, () => {});
      },
      track(resource) {
        opened.push(resource);
        return resource;
      },
    });
  });
}
