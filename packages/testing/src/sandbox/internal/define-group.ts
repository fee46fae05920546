import type { SandboxV1 } from "@openrath/core";
import { afterEach, describe, it } from "vitest";
import type { SandboxSuiteContext } from "../suite-context.js";

/** What a group's body uses to register tests and open sandboxes. */
export interface GroupApi {
  /**
   * Registers a test. When the caller's `skip` names the test (by title or `"<group> > <title>"`)
   * or its group, it is registered with `it.skip` and the reason is appended to the title.
   */
  test(title: string, fn: () => Promise<void>, timeoutMs?: number): void;
  /** Registers a test the suite cannot check for this backend, skipped with `reason` in its title. */
  skip(title: string, reason: string): void;
  /** Opens a fresh sandbox through the context's `create`; it is closed after the test. */
  open(): Promise<SandboxV1>;
  /** Closes `sandbox` after the test (for sandboxes opened another way, such as through a session). */
  track(sandbox: SandboxV1): SandboxV1;
}

/**
 * Registers `describe(title)` with an `afterEach` that closes every sandbox the test opened, and
 * hands `body` the API to register tests.
 */
export function defineGroup(
  context: SandboxSuiteContext,
  title: string,
  body: (group: GroupApi) => void,
): void {
  const groupReason = context.skipped(title);
  const opened: SandboxV1[] = [];
  describe(groupReason === undefined ? title : `${title} (skipped: ${groupReason})`, () => {
    afterEach(async () => {
      const closing = opened.splice(0).map((sandbox) => sandbox.close());
      const results = await Promise.allSettled(closing);
      const errors = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
      if (errors.length > 0) {
        throw new AggregateError(errors, `close() failed for ${errors.length} sandbox(es) after the test.`);
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
        const sandbox = await context.create();
        opened.push(sandbox);
        return sandbox;
      },
      track(sandbox) {
        opened.push(sandbox);
        return sandbox;
      },
    });
  });
}
