import type { SandboxV1 } from "@openrath/core";
import { expect } from "vitest";
import { defineGroup } from "./internal/define-group.js";
import { expectSandboxError } from "./internal/expect-sandbox-error.js";
import type { SandboxSuiteContext } from "./suite-context.js";

/**
 * Misuse: the same bad call gives the same error on every backend, a `SandboxError` with code
 * `invalid_argument`, as a rejection (never a synchronous throw), before anything runs.
 */
export function misuseSuite(context: SandboxSuiteContext): void {
  defineGroup(context, "misuse", (group) => {
    const cases: [string, (sandbox: SandboxV1) => Promise<unknown>][] = [
      ["exec([])", (s) => s.exec([])],
      ["exec([1])", (s) => s.exec([1] as unknown as string[])],
      ['exec("true", { timeoutMs: 0 })', (s) => s.exec("true", { timeoutMs: 0 })],
      ['exec("true", { timeoutMs: -5 })', (s) => s.exec("true", { timeoutMs: -5 })],
      ['exec("true", { env: { "A=B": "x" } })', (s) => s.exec("true", { env: { "A=B": "x" } })],
      ['writeFile("x", 42)', (s) => s.writeFile("x", 42 as unknown as string)],
      ['readFile("a\\0b")', (s) => s.readFile("a\0b")],
    ];
    const language = context.capabilities.languages[0];
    if (language !== undefined) {
      cases.push([
        `runCode(42, ${JSON.stringify(language)})`,
        (s) => s.runCode(42 as unknown as string, language),
      ]);
    }

    group.test("bad arguments are SandboxError invalid_argument on every backend", async () => {
      const sandbox = await group.open();
      for (const [what, call] of cases) {
        const error = await expectSandboxError(() => call(sandbox), "invalid_argument", what);
        expect(error.name, `${what} rejected with ${error.name}, not SandboxError`).toBe("SandboxError");
      }
      expect((await sandbox.exec("echo still-usable")).stdout).toBe("still-usable\n");
    });
  });
}
