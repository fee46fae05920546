import type { SandboxV1 } from "@openrath/core";
import { expect } from "vitest";
import { defineGroup } from "./internal/define-group.js";
import { expectSandboxError } from "./internal/expect-sandbox-error.js";
import { sleep } from "./internal/sleep.js";
import type { SandboxSuiteContext } from "./suite-context.js";

/** A command whose background child appends to tick.log every 100 ms while the foreground sleeps. */
const TICKER = "sh -c '(while true; do echo x >> tick.log; sleep 0.1; done) & sleep 30'";

/** Asserts that nothing still appends to tick.log: its size holds still for half a second. */
async function expectTickerDead(sandbox: SandboxV1, how: string): Promise<void> {
  await sleep(400);
  const first = (await sandbox.readFile("tick.log", { encoding: "bytes" })).length;
  expect(first, "the background loop never wrote tick.log").toBeGreaterThan(0);
  await sleep(500);
  const second = (await sandbox.readFile("tick.log", { encoding: "bytes" })).length;
  expect(
    second,
    `tick.log grew from ${first} to ${second} bytes after ${how}: the background process survived`,
  ).toBe(first);
}

/**
 * Timeouts and cancellation: `timeoutMs` and an `AbortSignal` kill the whole process tree and
 * throw `exec_timeout` or `aborted` with the output so far, and the sandbox stays usable.
 */
export function timeoutsSuite(context: SandboxSuiteContext): void {
  defineGroup(context, "timeouts", (group) => {
    group.test("timeoutMs kills a long command and throws exec_timeout", async () => {
      const sandbox = await group.open();
      const started = Date.now();
      await expectSandboxError(
        () => sandbox.exec("sleep 30", { timeoutMs: 300 }),
        "exec_timeout",
        'exec("sleep 30", { timeoutMs: 300 })',
      );
      const elapsed = Date.now() - started;
      expect(elapsed, `exec_timeout came after ${elapsed} ms for timeoutMs 300`).toBeLessThan(5_000);
      expect(elapsed).toBeGreaterThanOrEqual(250);
    });

    group.test("an AbortSignal kills a long command and throws aborted", async () => {
      const sandbox = await group.open();
      const controller = new AbortController();
      const started = Date.now();
      setTimeout(() => controller.abort(), 200);
      await expectSandboxError(
        () => sandbox.exec("sleep 30", { signal: controller.signal }),
        "aborted",
        'exec("sleep 30", { signal }) aborted after 200 ms',
      );
      const elapsed = Date.now() - started;
      expect(elapsed, `aborted came after ${elapsed} ms for an abort at 200 ms`).toBeLessThan(5_000);
    });

    group.test("an already aborted signal rejects at once without running the command", async () => {
      const sandbox = await group.open();
      const controller = new AbortController();
      controller.abort();
      const started = Date.now();
      await expectSandboxError(
        () => sandbox.exec("echo ran > ran.txt", { signal: controller.signal }),
        "aborted",
        "exec with an already aborted signal",
      );
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(await sandbox.exists("ran.txt"), "the command ran although the signal was already aborted").toBe(
        false,
      );
    });

    group.test("a timeout kills the whole process tree", async () => {
      const sandbox = await group.open();
      await expectSandboxError(
        () => sandbox.exec(TICKER, { timeoutMs: 500 }),
        "exec_timeout",
        "exec(ticker, { timeoutMs: 500 })",
      );
      await expectTickerDead(sandbox, "exec_timeout");
    });

    group.test("an abort kills the whole process tree", async () => {
      const sandbox = await group.open();
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 500);
      await expectSandboxError(
        () => sandbox.exec(TICKER, { signal: controller.signal }),
        "aborted",
        "exec(ticker, { signal })",
      );
      await expectTickerDead(sandbox, "aborted");
    });

    group.test("the sandbox is usable after a timeout", async () => {
      const sandbox = await group.open();
      await expectSandboxError(
        () => sandbox.exec("sleep 30", { timeoutMs: 300 }),
        "exec_timeout",
        'exec("sleep 30", { timeoutMs: 300 })',
      );
      const result = await sandbox.exec("echo alive");
      expect(result).toMatchObject({ exitCode: 0, stdout: "alive\n" });
      await sandbox.writeFile("after-timeout.txt", "ok");
      expect(await sandbox.readFile("after-timeout.txt")).toBe("ok");
    });

    group.test("output before a timeout is in the error's details", async () => {
      const sandbox = await group.open();
      const error = await expectSandboxError(
        () => sandbox.exec("echo partial; echo partial-err >&2; sleep 30", { timeoutMs: 1_500 }),
        "exec_timeout",
        'exec("echo partial; …; sleep 30", { timeoutMs: 1500 })',
      );
      expect(error.details.stdout, "details.stdout does not hold the output so far").toBe("partial\n");
      expect(error.details.stderr, "details.stderr does not hold the output so far").toBe("partial-err\n");
    });

    group.test("output before an abort is in the error's details", async () => {
      const sandbox = await group.open();
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 1_500);
      const error = await expectSandboxError(
        () => sandbox.exec("echo partial; sleep 30", { signal: controller.signal }),
        "aborted",
        'exec("echo partial; sleep 30", { signal })',
      );
      expect(error.details.stdout, "details.stdout does not hold the output so far").toBe("partial\n");
    });
  });
}
