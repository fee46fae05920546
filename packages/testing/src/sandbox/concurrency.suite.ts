import { expect } from "vitest";
import { defineGroup } from "./internal/define-group.js";
import { expectSandboxError } from "./internal/expect-sandbox-error.js";
import type { SandboxSuiteContext } from "./suite-context.js";

/**
 * Concurrency: parallel commands on one sandbox keep their own output, and sandboxes opened at the
 * same time are independent and all close.
 */
export function concurrencySuite(context: SandboxSuiteContext): void {
  defineGroup(context, "concurrency", (group) => {
    group.test("8 parallel execs on one sandbox each get their own output", async () => {
      const sandbox = await group.open();
      const script = 'sleep 0.2; printf "out-%s" "$1"; printf "err-%s" "$1" >&2; exit "$1"';
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => sandbox.exec(["sh", "-c", script, "sh", String(i)])),
      );
      results.forEach((result, i) => {
        expect(result).toMatchObject({ exitCode: i, stdout: `out-${i}`, stderr: `err-${i}` });
      });
    });

    group.test("parallel file writes on one sandbox each land", async () => {
      const sandbox = await group.open();
      await Promise.all(
        Array.from({ length: 8 }, (_, i) => sandbox.writeFile(`parallel/${i}.txt`, `file ${i}`)),
      );
      const texts = await Promise.all(
        Array.from({ length: 8 }, (_, i) => sandbox.readFile(`parallel/${i}.txt`)),
      );
      expect(texts).toEqual(Array.from({ length: 8 }, (_, i) => `file ${i}`));
      expect((await sandbox.listFiles("parallel")).length).toBe(8);
    });

    group.test("4 sandboxes opened at once are independent and all close", async () => {
      const sandboxes = await Promise.all(Array.from({ length: 4 }, () => group.open()));
      expect(new Set(sandboxes.map((s) => s.id)).size, "two sandboxes share an id").toBe(4);
      await Promise.all(sandboxes.map((s, i) => s.writeFile(`only-in-${i}.txt`, String(i))));
      for (const [i, sandbox] of sandboxes.entries()) {
        for (let j = 0; j < sandboxes.length; j++) {
          const seen = await sandbox.exists(`only-in-${j}.txt`);
          expect(seen, `sandbox ${i} ${seen ? "sees" : "does not see"} only-in-${j}.txt`).toBe(i === j);
        }
        const shell = await sandbox.exec("ls only-in-*.txt");
        expect(shell.stdout).toBe(`only-in-${i}.txt\n`);
      }
      await Promise.all(sandboxes.map((s) => s.close()));
      for (const sandbox of sandboxes) {
        await expectSandboxError(
          () => sandbox.exec("true"),
          "sandbox_closed",
          `exec on closed sandbox ${sandbox.id}`,
        );
      }
    });
  });
}
