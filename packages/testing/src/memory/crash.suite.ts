import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { expect } from "vitest";
import { showHits } from "./internal/corpus.js";
import { defineGroup } from "./internal/define-group.js";
import type { MemorySuiteContext } from "./suite-context.js";
import { CRASH_SCOPE } from "./writer.js";

/** Acknowledged entries to wait for before the kill. */
const ACKS_BEFORE_KILL = 120;
const TITLE = "acknowledged remember calls survive a kill -9 of the writing process";

/**
 * Crash survival (when `capabilities.persistence` is claimed): a child process started with the
 * caller's `crashWriter` command remembers entries one at a time (see `runMemoryWriter`); after
 * {@link ACKS_BEFORE_KILL} acknowledgements it is killed with SIGKILL, mid-write, and every entry
 * it reported as acknowledged must be in the store when it is reopened.
 */
export function crashSuite(context: MemorySuiteContext): void {
  defineGroup(context, "crash survival", (group) => {
    if (!context.capabilities.persistence) {
      group.skip(TITLE, "capabilities.persistence is false, so nothing needs to survive a crash");
      return;
    }
    group.test(
      TITLE,
      async () => {
        const writer = context.crashWriter;
        if (writer === undefined) {
          throw new Error(
            "capabilities.persistence is true but describeMemoryConformance got no crashWriter option. Pass crashWriter: () => ({ command, args, env? }) starting a process that calls runMemoryWriter() from @openrath/testing/memory-writer on the store the latest create() made.",
          );
        }
        // A fresh location the child writes to; this process lets go of it first.
        await (await group.open()).close();
        const { command, args, cwd, env } = writer();
        const child = spawn(command, [...args], {
          cwd,
          env: { ...process.env, ...env },
          stdio: ["ignore", "pipe", "pipe"],
        });
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
          child.once("exit", (code, signal) => resolve({ code, signal }));
        });
        let stderr = "";
        child.stderr!.on("data", (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        const acked: string[] = [];
        let killed = false;
        for await (const line of createInterface({ input: child.stdout! })) {
          if (line.startsWith("ack ")) acked.push(line.slice(4));
          if (!killed && (acked.length >= ACKS_BEFORE_KILL || line === "done")) {
            killed = true;
            child.kill("SIGKILL");
          }
        }
        const { signal } = await exited;
        expect(signal, `the writer exited on its own before the kill; its stderr:\n${stderr}`).toBe(
          "SIGKILL",
        );
        expect(
          acked.length,
          `the writer acknowledged too few entries; its stderr:\n${stderr}`,
        ).toBeGreaterThanOrEqual(ACKS_BEFORE_KILL);
        const store = await group.reopen("persistence");
        const hits = await store.recall("survivor entry acknowledged crash", {
          scope: CRASH_SCOPE,
          topK: 10_000,
        });
        const found = new Set(hits.map((hit) => hit.entry.id));
        const lost = acked.filter((id) => !found.has(id));
        expect(
          lost,
          `${lost.length} of ${acked.length} acknowledged entries were lost; found ${showHits(hits.slice(0, 5))}`,
        ).toEqual([]);
      },
      Math.max(context.timeoutMs, 60_000),
    );
  });
}
