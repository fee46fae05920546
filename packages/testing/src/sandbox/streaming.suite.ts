import type { ExecResult } from "@openrath/core";
import { expect } from "vitest";
import { defineGroup } from "./internal/define-group.js";
import type { SandboxSuiteContext } from "./suite-context.js";

/** Chunks a callback received, each with the time it arrived. */
interface Recorded {
  readonly chunks: string[];
  firstAt: number | undefined;
  readonly callback: (text: string) => void;
}

function recorder(): Recorded {
  const recorded: Recorded = {
    chunks: [],
    firstAt: undefined,
    callback: (text: string) => {
      recorded.firstAt ??= Date.now();
      recorded.chunks.push(text);
    },
  };
  return recorded;
}

/** A shell loop printing many multi-byte lines, so chunk boundaries fall inside characters. */
const MANY_LINES = "i=0; while [ $i -lt 3000 ]; do printf 'é東🚀 line %d\\n' $i; i=$((i+1)); done";

function expectedManyLines(): string {
  let text = "";
  for (let i = 0; i < 3000; i++) text += `é東🚀 line ${i}\n`;
  return text;
}

/**
 * Streaming: with `capabilities.streaming`, `onStdout`/`onStderr` deliver output while the command
 * still runs; either way, whatever the callbacks receive concatenates to the result's output.
 */
export function streamingSuite(context: SandboxSuiteContext): void {
  defineGroup(context, "streaming", (group) => {
    if (context.capabilities.streaming) {
      for (const stream of ["stdout", "stderr"] as const) {
        const callback = stream === "stdout" ? "onStdout" : "onStderr";
        const redirect = stream === "stdout" ? "" : " >&2";
        group.test(`${callback} receives the first line before the command ends`, async () => {
          const sandbox = await group.open();
          const recorded = recorder();
          const result: ExecResult = await sandbox.exec(
            `echo first${redirect}; sleep 1.5; echo second${redirect}`,
            {
              [callback]: recorded.callback,
            },
          );
          const settledAt = Date.now();
          expect(result.exitCode).toBe(0);
          expect(result[stream]).toBe("first\nsecond\n");
          expect(recorded.firstAt, `${callback} was never called`).not.toBe(undefined);
          expect(recorded.chunks[0]?.startsWith("first"), `the first ${callback} chunk was not "first"`).toBe(
            true,
          );
          expect(
            settledAt - recorded.firstAt!,
            `${callback} delivered "first" only ${settledAt - recorded.firstAt!} ms before exec settled; the command sleeps 1.5 s after printing it`,
          ).toBeGreaterThanOrEqual(700);
          expect(recorded.chunks.join("")).toBe(result[stream]);
        });
      }
    }

    group.test("onStdout and onStderr chunks concatenate to stdout and stderr", async () => {
      const sandbox = await group.open();
      const out = recorder();
      const err = recorder();
      const result = await sandbox.exec(`${MANY_LINES}; echo done >&2`, {
        onStdout: out.callback,
        onStderr: err.callback,
      });
      expect(result.exitCode).toBe(0);
      expect(result.truncated).toBe(false);
      expect(result.stdout).toBe(expectedManyLines());
      expect(result.stderr).toBe("done\n");
      if (context.capabilities.streaming) {
        expect(out.chunks.length, "a streaming backend never called onStdout").toBeGreaterThan(0);
        expect(err.chunks.length, "a streaming backend never called onStderr").toBeGreaterThan(0);
      }
      for (const chunk of [...out.chunks, ...err.chunks]) expect(typeof chunk).toBe("string");
      if (out.chunks.length > 0) expect(out.chunks.join("")).toBe(result.stdout);
      if (err.chunks.length > 0) expect(err.chunks.join("")).toBe(result.stderr);
    });
  });
}
