import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect } from "vitest";
import { defineGroup } from "./internal/define-group.js";
import { expectSandboxError } from "./internal/expect-sandbox-error.js";
import type { SandboxSuiteContext } from "./suite-context.js";

/** A function that runs a full garbage collection (V8's, exposed for the measurement only). */
function collector(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/**
 * Concurrency: parallel commands on one sandbox keep their own output, and sandboxes opened at the
 * same time are independent and all close.
 */
export function concurrencySuite(context: SandboxSuiteContext): void {
  defineGroup(context, "concurrency", (group) => {
    group.test(
      "100 parallel execs on one sandbox each get their own output",
      async () => {
        const sandbox = await group.open();
        const script = 'sleep 0.2; printf "out-%s" "$1"; printf "err-%s" "$1" >&2; exit $(($1 % 100))';
        const results = await Promise.all(
          Array.from({ length: 100 }, (_, i) => sandbox.exec(["sh", "-c", script, "sh", String(i)])),
        );
        results.forEach((result, i) => {
          expect(result).toMatchObject({ exitCode: i % 100, stdout: `out-${i}`, stderr: `err-${i}` });
        });
      },
      Math.max(context.timeoutMs, 60_000),
    );

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

    group.test(
      "20 sandboxes open at once are independent and all close",
      async () => {
        const sandboxes = await Promise.all(Array.from({ length: 20 }, () => group.open()));
        expect(new Set(sandboxes.map((s) => s.id)).size, "two sandboxes share an id").toBe(20);
        await Promise.all(sandboxes.map((s, i) => s.writeFile(`only-in-${i}.txt`, String(i))));
        await Promise.all(
          sandboxes.map(async (sandbox, i) => {
            for (const j of [i, (i + 1) % sandboxes.length]) {
              const seen = await sandbox.exists(`only-in-${j}.txt`);
              expect(seen, `sandbox ${i} ${seen ? "sees" : "does not see"} only-in-${j}.txt`).toBe(i === j);
            }
            const shell = await sandbox.exec("ls only-in-*.txt");
            expect(shell.stdout).toBe(`only-in-${i}.txt\n`);
          }),
        );
        await Promise.all(sandboxes.map((s) => s.close()));
        for (const sandbox of sandboxes.slice(0, 3)) {
          await expectSandboxError(
            () => sandbox.exec("true"),
            "sandbox_closed",
            `exec on closed sandbox ${sandbox.id}`,
          );
        }
      },
      Math.max(context.timeoutMs, 120_000),
    );

    group.test(
      "a flood of output keeps this process's memory bounded, callback included",
      async () => {
        const sandbox = await group.open();
        const total = 96 * 1024 * 1024;
        // What is still held, not garbage waiting for a collection: each sample collects first.
        const gc = collector();
        gc();
        const base = process.memoryUsage();
        let peak = 0;
        const sample = setInterval(() => {
          gc();
          const now = process.memoryUsage();
          peak = Math.max(peak, now.heapUsed + now.arrayBuffers - base.heapUsed - base.arrayBuffers);
        }, 500);
        let received = 0;
        let result: Awaited<ReturnType<typeof sandbox.exec>>;
        try {
          result = await sandbox.exec(`head -c ${total} /dev/zero | tr '\\000' x | fold -w 8192`, {
            maxOutputBytes: 1024 * 1024,
            onStdout: (text) => {
              received += text.length;
            },
            timeoutMs: 120_000,
          });
        } finally {
          clearInterval(sample);
        }
        expect(result.truncated).toBe(true);
        expect(result.stdout.length).toBeLessThan(1024 * 1024 + 100);
        expect(received, "the callback got more than the cap (plus the marker)").toBeLessThan(
          1024 * 1024 + 100,
        );
        expect(peak, `${peak} bytes were held during a ${total}-byte flood under a 1 MiB cap`).toBeLessThan(
          total / 3,
        );
      },
      Math.max(context.timeoutMs, 120_000),
    );
  });
}
