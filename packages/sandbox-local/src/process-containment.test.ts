import type { SandboxV1 } from "@openrath/core";
import { serviceAvailable } from "@openrath/testing";
import { describe, expect, it } from "vitest";
import { commandNamespace } from "./internal/command-namespace.js";
import { findExecutable } from "./internal/find-executable.js";
import { localSandbox, localSandboxWith } from "./local-sandbox.js";
import { processesWith } from "./testing/process-table.js";

// Unisolated commands that try every way to outlive their command and their sandbox: a new
// session, a new session through a shell with its output redirected, a double fork with a new
// session, a cleared environment and SIGTERM ignored, nohup, a new process group without a new
// session, and setsid's own fork. After close() (or the command's timeout) none may be in this
// machine's process table, in any of 50 rounds. Each process is found by a sleep duration no
// other process has.

const ROUNDS = 50;
const perl = findExecutable("perl", process.env.PATH ?? "");

let made = 0;
/** A sleep duration unique to this run, and the prefix its round's processes share. */
function roundTag(): string {
  return `40.${process.pid}${String(++made).padStart(3, "0")}`;
}

/** The escaping commands of one round, each sleeping for `tag` plus its own digit. */
function escapes(tag: string): { script: string; words: string[] } {
  const lines = [
    `setsid sleep ${tag}1 >/dev/null 2>&1 &`,
    `setsid sh -c 'sleep ${tag}2' </dev/null >/dev/null 2>&1 &`,
    `(setsid env -i /bin/sh -c 'trap "" TERM HUP INT; sleep ${tag}3' </dev/null >/dev/null 2>&1 &)`,
    `nohup sleep ${tag}4 >/dev/null 2>&1 &`,
    `env -i ${findExecutable("setsid", "/usr/bin:/bin")} -f sleep ${tag}5 </dev/null >/dev/null 2>&1`,
    ...(perl ? [`${perl} -e 'setpgrp(0, 0); exec @ARGV' sleep ${tag}6 </dev/null >/dev/null 2>&1 &`] : []),
  ];
  return { script: lines.join("\n"), words: lines.map((_, i) => `${tag}${i + 1}`) };
}

/** Waits (bounded) until a process with each word runs; returns the words never seen. */
async function waitForAll(words: readonly string[]): Promise<string[]> {
  let missing = [...words];
  for (let i = 0; i < 200 && missing.length > 0; i++) {
    missing = missing.filter((word) => processesWith(word).length === 0);
    if (missing.length > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return missing;
}

const namespaces = await serviceAvailable("PID namespaces for unisolated commands", () =>
  Boolean(commandNamespace()),
);

describe.skipIf(!namespaces.available)(`isolation none, contained (${namespaces.reason})`, () => {
  const backend = localSandbox();

  it("claims a contained process tree", () => {
    expect(backend.capabilities.processTree).toBe("contained");
  });

  it(`close() leaves no process a command started, however it left, in ${ROUNDS} rounds`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const sandbox = await backend.open(undefined);
      const tag = roundTag();
      const { script, words } = escapes(tag);
      try {
        const result = await sandbox.exec(script, { timeoutMs: 20_000 });
        expect(result.exitCode, result.stderr).toBe(0);
        // They outlive their command, as they would on the host.
        expect(await waitForAll(words), `round ${round}: never started`).toEqual([]);
      } finally {
        await sandbox.close();
      }
      expect(processesWith(tag), `round ${round}: survived close()`).toEqual([]);
    }
  });

  it(`a timeout leaves no process of the command, however it left, in ${ROUNDS} rounds`, async () => {
    const sandbox = await backend.open(undefined);
    try {
      let seen = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const tag = roundTag();
        const { script, words } = escapes(tag);
        let started: Promise<string[]> | undefined;
        const run = sandbox.exec(`${script}\necho started\nsleep 30`, {
          timeoutMs: 250,
          onStdout: () => {
            started ??= waitForAll(words);
          },
        });
        const error = await run.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error, `round ${round}`).toMatchObject({ code: "exec_timeout" });
        // Seen alive before the timeout, unless a loaded machine was too slow to get there.
        if (started && (await started).length === 0) seen++;
        expect(processesWith(tag), `round ${round}: survived the timeout`).toEqual([]);
      }
      expect(seen, "no round got its processes started before the timeout").toBeGreaterThan(0);
      // The sandbox still works after all those kills.
      expect((await sandbox.exec("echo ok")).stdout).toBe("ok\n");
    } finally {
      await sandbox.close();
    }
  });
});

describe("isolation none without PID namespaces (best effort)", () => {
  const backend = localSandboxWith({}, () => undefined);

  it("claims a best-effort process tree", () => {
    expect(backend.capabilities.processTree).toBe("best-effort");
  });

  it("close() still kills a background job that left its group but kept its environment", async () => {
    const sandbox: SandboxV1 = await backend.open(undefined);
    const tag = roundTag();
    try {
      await sandbox.exec(
        `setsid sleep ${tag}1 >/dev/null 2>&1 & setsid sh -c 'sleep ${tag}2' </dev/null >/dev/null 2>&1 &`,
      );
      expect(await waitForAll([`${tag}1`, `${tag}2`])).toEqual([]);
    } finally {
      await sandbox.close();
    }
    expect(processesWith(tag)).toEqual([]);
  });
});
