import { expect } from "vitest";
import { defineGroup } from "./internal/define-group.js";
import { expectSandboxError } from "./internal/expect-sandbox-error.js";
import { findMarked, hostileCommand, hostProcesses, processMarker } from "./internal/process-table.js";
import { sleep } from "./internal/sleep.js";
import type { SandboxSuiteContext } from "./suite-context.js";

/**
 * Processes: after a timeout, an abort or `close()`, no descendant of the command is left in the
 * process table. Each test plants a descendant in the command's process group and a hostile one
 * (double-forked, `setsid`, `env -i`, SIGTERM ignored) and looks for both by their marker. With
 * `processTree: "contained"` neither may survive; otherwise (best effort) the one in the group may
 * not, and the hostile one is allowed to (it ends by itself after about 15 s).
 */
export function processesSuite(context: SandboxSuiteContext): void {
  const contained = context.capabilities.processTree === "contained";
  defineGroup(context, "processes", (group) => {
    async function survivors(sandbox: Parameters<typeof findMarked>[0], marker: string): Promise<string[]> {
      // A kill pass may still be finishing: look twice before calling anything a survivor.
      let found = await findMarked(sandbox, marker);
      if (found.length > 0) {
        await sleep(500);
        found = await findMarked(sandbox, marker);
      }
      return contained ? found : found.filter((line) => line.includes(`${marker}-child`));
    }

    const claim = contained ? "not even a detached one" : "(best effort: those in its process group)";

    group.test(`a timeout leaves no descendant in the process table, ${claim}`, async () => {
      const sandbox = await group.open();
      const marker = processMarker("timeout");
      await expectSandboxError(
        () => sandbox.exec(hostileCommand(marker), { timeoutMs: 1_000 }),
        "exec_timeout",
        "exec(hostile, { timeoutMs: 1000 })",
      );
      expect(await survivors(sandbox, marker), "processes of the command survived its timeout").toEqual([]);
    });

    group.test(`an abort leaves no descendant in the process table, ${claim}`, async () => {
      const sandbox = await group.open();
      const marker = processMarker("abort");
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 1_000);
      await expectSandboxError(
        () => sandbox.exec(hostileCommand(marker), { signal: controller.signal }),
        "aborted",
        "exec(hostile, { signal })",
      );
      expect(await survivors(sandbox, marker), "processes of the command survived its abort").toEqual([]);
    });

    group.test("close() leaves no process of the sandbox on this machine", async () => {
      const sandbox = await group.open();
      const marker = processMarker("close");
      const running = sandbox.exec(hostileCommand(marker)).catch(() => undefined);
      await sleep(1_000);
      const before = hostProcesses(marker);
      await sandbox.close();
      await running;
      if (before.length === 0) return; // A remote backend: nothing of it runs on this machine to look at.
      let after = hostProcesses(marker);
      for (let i = 0; i < 10 && after.length > 0; i++) {
        await sleep(200);
        after = hostProcesses(marker);
      }
      const left = contained ? after : after.filter((line) => line.includes(`${marker}-child`));
      expect(left, "processes of the sandbox survived close()").toEqual([]);
    });
  });
}
