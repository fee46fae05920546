import { expect } from "vitest";
import { CODE_SNIPPETS } from "./internal/code-snippets.js";
import { defineGroup } from "./internal/define-group.js";
import { expectSandboxError } from "./internal/expect-sandbox-error.js";
import type { SandboxSuiteContext } from "./suite-context.js";

/** Languages a manifest commonly lists; those it does not list must be refused. */
const COMMON_LANGUAGES = ["python", "javascript", "bash"];

/**
 * Code: every language of the manifest runs, runtime errors show as a non-zero exit code with the
 * error on stderr, unlisted languages are refused with `unsupported_language`, and `timeoutMs`,
 * `signal` and `env` apply as they do for `exec`.
 */
export function codeSuite(context: SandboxSuiteContext): void {
  const languages = context.capabilities.languages;
  defineGroup(context, "code", (group) => {
    for (const language of languages) {
      const snippets = CODE_SNIPPETS[language];
      if (snippets) {
        group.test(`runCode runs ${language}`, async () => {
          const sandbox = await group.open();
          const result = await sandbox.runCode(snippets.print, language);
          expect(result, `${language}: ${snippets.print}`).toMatchObject({
            exitCode: 0,
            stdout: "2\n",
            truncated: false,
          });
          expect(result.durationMs).toBeGreaterThanOrEqual(0);
        });

        group.test(`a runtime error in ${language} exits non-zero with the error on stderr`, async () => {
          const sandbox = await group.open();
          const result = await sandbox.runCode(snippets.fail, language);
          expect(result.exitCode, `${language}: ${snippets.fail} exited 0`).not.toBe(0);
          expect(result.stderr).toContain("boom");
          if (language.startsWith("python")) expect(result.stderr).toContain("ValueError");
        });
      } else {
        group.test(`runCode accepts ${language}`, async () => {
          const sandbox = await group.open();
          // The suite knows no snippet for this language, so it only checks that the claim is not refused.
          const outcome = await sandbox.runCode("", language).then(
            () => undefined,
            (error: unknown) => error,
          );
          expect(
            (outcome as { code?: unknown } | undefined)?.code,
            `runCode("", ${JSON.stringify(language)}) was refused although the manifest lists ${language}`,
          ).not.toBe("unsupported_language");
        });
      }
    }

    group.test("a language outside the manifest throws unsupported_language", async () => {
      const sandbox = await group.open();
      for (const language of ["cobol", ...COMMON_LANGUAGES.filter((l) => !languages.includes(l))]) {
        await expectSandboxError(
          () => sandbox.runCode("1", language),
          "unsupported_language",
          `runCode("1", ${JSON.stringify(language)}) with languages ${JSON.stringify(languages)}`,
        );
      }
    });

    const known = languages.find((language) => CODE_SNIPPETS[language] !== undefined);
    if (known === undefined) return;
    const snippets = CODE_SNIPPETS[known]!;

    group.test("runCode respects timeoutMs", async () => {
      const sandbox = await group.open();
      const started = Date.now();
      await expectSandboxError(
        () => sandbox.runCode(snippets.sleep, known, { timeoutMs: 500 }),
        "exec_timeout",
        `runCode(sleep 30, ${JSON.stringify(known)}, { timeoutMs: 500 })`,
      );
      expect(Date.now() - started).toBeLessThan(6_000);
      expect((await sandbox.runCode(snippets.print, known)).stdout).toBe("2\n");
    });

    group.test("runCode respects an AbortSignal", async () => {
      const sandbox = await group.open();
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      await expectSandboxError(
        () => sandbox.runCode(snippets.sleep, known, { signal: controller.signal }),
        "aborted",
        `runCode(sleep 30, ${JSON.stringify(known)}, { signal })`,
      );
    });

    group.test("runCode passes env and runs in the workspace", async () => {
      const sandbox = await group.open();
      const env = await sandbox.runCode(snippets.env, known, { env: { CONFORMANCE_VAR: "from env" } });
      expect(env.stdout).toBe("from env\n");
      await sandbox.writeFile("code-input.txt", "from workspace");
      const read = await sandbox.runCode(snippets.read, known);
      expect(read).toMatchObject({ exitCode: 0, stdout: "from workspace\n" });
    });
  });
}
