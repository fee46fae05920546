import { DEFAULT_MAX_OUTPUT_BYTES, truncationMarker } from "@openrath/core/backend";
import { expect } from "vitest";
import { defineGroup } from "./internal/define-group.js";
import { expectSandboxError } from "./internal/expect-sandbox-error.js";
import type { SandboxSuiteContext } from "./suite-context.js";

const UNICODE = "héllo 東京 🚀";
const MARKER = /\n\[output truncated: (\d+) more bytes not shown\]\n$/;

/** Splits capped output into the kept text and the omitted byte count from its marker. */
function splitTruncated(output: string): { kept: string; omitted: number } {
  const match = MARKER.exec(output);
  expect(
    match,
    `output does not end with the truncation marker: …${JSON.stringify(output.slice(-120))}`,
  ).not.toBe(null);
  return { kept: output.slice(0, match!.index), omitted: Number(match![1]) };
}

/**
 * exec: exit codes, argv without a shell, separate streams, stdin, env, cwd confinement, the
 * output cap and its marker, UTF-8 round trips and wall time.
 */
export function execSuite(context: SandboxSuiteContext): void {
  defineGroup(context, "exec", (group) => {
    group.test("a successful command exits 0 with its stdout", async () => {
      const sandbox = await group.open();
      const result = await sandbox.exec("echo hello");
      expect(result).toMatchObject({ exitCode: 0, stdout: "hello\n", stderr: "", truncated: false });
    });

    group.test("a non-zero exit code is a result, not an error", async () => {
      const sandbox = await group.open();
      const result = await sandbox.exec("exit 7");
      expect(result.exitCode).toBe(7);
    });

    group.test("a command killed by a signal reports 128 + the signal number", async () => {
      const sandbox = await group.open();
      const result = await sandbox.exec("kill -9 $$");
      expect(result.exitCode).toBe(137);
    });

    group.test("a string runs through /bin/sh -c", async () => {
      const sandbox = await group.open();
      const result = await sandbox.exec("A=shell; printf '%s-%s' \"$A\" $((6 * 7)) | tr a-z A-Z");
      expect(result.stdout).toBe("SHELL-42");
    });

    group.test("an argv array runs directly, without shell splitting or expansion", async () => {
      const sandbox = await group.open();
      const split = await sandbox.exec(["printf", "%s|%s", "a b", "c"]);
      expect(split).toMatchObject({ exitCode: 0, stdout: "a b|c" });
      const literal = await sandbox.exec(["printf", "%s", "$HOME `id` $(id) * ; exit 3"]);
      expect(literal).toMatchObject({ exitCode: 0, stdout: "$HOME `id` $(id) * ; exit 3" });
    });

    group.test("stdout and stderr are kept apart", async () => {
      const sandbox = await group.open();
      const result = await sandbox.exec("echo out; echo err >&2; echo out2; echo err2 >&2");
      expect(result.stdout).toBe("out\nout2\n");
      expect(result.stderr).toBe("err\nerr2\n");
    });

    if (context.capabilities.stdin) {
      group.test("stdin is piped from a string and closed", async () => {
        const sandbox = await group.open();
        const input = `line one\n${UNICODE}\nno newline at the end`;
        const result = await sandbox.exec(["cat"], { stdin: input });
        expect(result).toMatchObject({ exitCode: 0, stdout: input });
      });

      group.test("stdin is piped from bytes", async () => {
        const sandbox = await group.open();
        const input = new TextEncoder().encode(`bytes ${UNICODE}\n`);
        const result = await sandbox.exec("wc -c", { stdin: input });
        expect(result.stdout.trim()).toBe(String(input.length));
        const echoed = await sandbox.exec(["cat"], { stdin: input });
        expect(echoed.stdout).toBe(`bytes ${UNICODE}\n`);
      });
    } else {
      group.test("stdin is refused with unsupported (the manifest says stdin: false)", async () => {
        const sandbox = await group.open();
        await expectSandboxError(
          () => sandbox.exec(["cat"], { stdin: "x" }),
          "unsupported",
          'exec(["cat"], { stdin })',
        );
        await expectSandboxError(
          () => sandbox.exec("cat", { stdin: new Uint8Array([120]) }),
          "unsupported",
          'exec("cat", { stdin: bytes })',
        );
      });
    }

    group.test("env adds variables to the sandbox's environment", async () => {
      const sandbox = await group.open();
      const result = await sandbox.exec('printf "%s|%s" "$CONFORMANCE_VAR" "$CONFORMANCE_OTHER"', {
        env: { CONFORMANCE_VAR: `a value with spaces and ${UNICODE}`, CONFORMANCE_OTHER: "2" },
      });
      expect(result.stdout).toBe(`a value with spaces and ${UNICODE}|2`);
      const plain = await sandbox.exec('printf "%s" "$PATH"', { env: { CONFORMANCE_VAR: "x" } });
      expect(plain.stdout, "env must be added to the environment, not replace it (PATH is gone)").not.toBe(
        "",
      );
    });

    group.test("env overrides a variable the sandbox already has", async () => {
      const sandbox = await group.open();
      const result = await sandbox.exec('printf "%s" "$HOME"', { env: { HOME: "/conformance-home" } });
      expect(result.stdout).toBe("/conformance-home");
      const argv = await sandbox.exec(["sh", "-c", 'printf "%s" "$HOME"'], { env: { HOME: "/argv-home" } });
      expect(argv.stdout).toBe("/argv-home");
    });

    group.test("env of one command does not leak into the next", async () => {
      const sandbox = await group.open();
      await sandbox.exec("true", { env: { CONFORMANCE_ONCE: "set" } });
      const result = await sandbox.exec('[ -z "$CONFORMANCE_ONCE" ] && printf unset');
      expect(result.stdout).toBe("unset");
    });

    group.test("the default cwd is the workspace", async () => {
      const sandbox = await group.open();
      const result = await sandbox.exec("pwd");
      expect(result.stdout).toBe(`${sandbox.workspace}\n`);
      await sandbox.writeFile("at-root.txt", "root");
      expect((await sandbox.exec("cat at-root.txt")).stdout).toBe("root");
    });

    group.test("cwd is relative to the workspace", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("sub/dir/marker.txt", "marker");
      const result = await sandbox.exec("pwd; cat marker.txt", { cwd: "sub/dir" });
      expect(result.stdout).toBe(`${sandbox.workspace}/sub/dir\nmarker`);
      const argv = await sandbox.exec(["cat", "marker.txt"], { cwd: "./sub/dir/" });
      expect(argv.stdout).toBe("marker");
    });

    group.test("a missing cwd throws file_not_found", async () => {
      const sandbox = await group.open();
      await expectSandboxError(
        () => sandbox.exec("pwd", { cwd: "no/such/dir" }),
        "file_not_found",
        'exec("pwd", { cwd: "no/such/dir" })',
      );
    });

    group.test("a cwd that leaves the workspace throws path_outside_workspace", async () => {
      const sandbox = await group.open();
      const root = sandbox.workspace.replace(/\/+$/, "");
      const inside = (path: string) => path === root || path.startsWith(`${root}/`);
      for (const cwd of ["..", "../..", "sub/../../x", "/", "/etc"].filter((p) => !inside(p))) {
        await expectSandboxError(
          () => sandbox.exec("pwd", { cwd }),
          "path_outside_workspace",
          `exec("pwd", { cwd: ${JSON.stringify(cwd)} })`,
        );
      }
    });

    group.test("output beyond the default cap is cut at maxOutputBytes with the marker", async () => {
      const sandbox = await group.open();
      const total = 3_000_000;
      const result = await sandbox.exec(`head -c ${total} /dev/zero | tr '\\000' x`);
      expect(result.exitCode).toBe(0);
      expect(result.truncated).toBe(true);
      const { kept, omitted } = splitTruncated(result.stdout);
      expect(kept.length).toBeLessThanOrEqual(DEFAULT_MAX_OUTPUT_BYTES);
      expect(kept.length).toBeGreaterThan(0);
      expect(/^x+$/.test(kept), "the kept output is not a prefix of the real output").toBe(true);
      expect(
        kept.length + omitted,
        "the marker's omitted count plus the kept bytes is not the output size",
      ).toBe(total);
      expect(result.stderr).toBe("");
    });

    group.test("a small maxOutputBytes caps stdout and stderr separately", async () => {
      const sandbox = await group.open();
      const result = await sandbox.exec("printf 0123456789abcdef; printf 'short' >&2", {
        maxOutputBytes: 10,
      });
      expect(result.exitCode).toBe(0);
      expect(result.truncated).toBe(true);
      expect(result.stdout).toBe(`0123456789${truncationMarker(6)}`);
      expect(result.stderr).toBe("short");
      const err = await sandbox.exec("head -c 5000 /dev/zero | tr '\\000' e >&2; printf ok", {
        maxOutputBytes: 100,
      });
      expect(err.truncated).toBe(true);
      expect(err.stdout).toBe("ok");
      expect(err.stderr).toBe(`${"e".repeat(100)}${truncationMarker(4900)}`);
    });

    group.test("output within maxOutputBytes is not marked truncated", async () => {
      const sandbox = await group.open();
      const result = await sandbox.exec("printf 0123456789", { maxOutputBytes: 10 });
      expect(result).toMatchObject({ stdout: "0123456789", truncated: false });
    });

    group.test("unicode output round-trips exactly", async () => {
      const sandbox = await group.open();
      const result = await sandbox.exec(`printf '%s\\n' '${UNICODE}'; printf '%s' '${UNICODE}' >&2`);
      expect(result.stdout).toBe(`${UNICODE}\n`);
      expect(result.stderr).toBe(UNICODE);
      const argv = await sandbox.exec(["printf", "%s", UNICODE]);
      expect(argv.stdout).toBe(UNICODE);
    });

    group.test("durationMs is the wall time in milliseconds", async () => {
      const sandbox = await group.open();
      const quick = await sandbox.exec("true");
      expect(Number.isFinite(quick.durationMs)).toBe(true);
      expect(quick.durationMs).toBeGreaterThanOrEqual(0);
      const slow = await sandbox.exec("sleep 0.3");
      expect(slow.durationMs).toBeGreaterThanOrEqual(250);
    });

    group.test("a command that finishes within timeoutMs returns normally", async () => {
      const sandbox = await group.open();
      const result = await sandbox.exec("echo in-time", { timeoutMs: 20_000 });
      expect(result).toMatchObject({ exitCode: 0, stdout: "in-time\n" });
    });
  });
}
