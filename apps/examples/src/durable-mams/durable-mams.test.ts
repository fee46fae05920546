import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExample } from "../testing/run-example.js";

const script = fileURLToPath(new URL("./durable-mams.ts", import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "openrath-durable-mams-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts the example with the same command a user types. */
const start = () => startExample(script, ["--dir", dir, "--pause-ms", "300"]);

describe("the durable MAMS example", () => {
  it("stopped with SIGTERM mid-run, it finishes and commits the step in flight, exits 0, and the same command continues after it", async () => {
    const own = await mkdtemp(join(tmpdir(), "openrath-durable-mams-term-"));
    try {
      const run = () => startExample(script, ["--dir", own, "--pause-ms", "300"]);
      const first = run();
      await first.until("wordsmith (checkpoint 2)");
      first.child.kill("SIGTERM");
      expect(await first.exited, first.output()).toBe(0);
      expect(first.output()).not.toContain("Answer:");

      const second = run();
      expect(await second.exited, second.output()).toBe(0);
      const out = second.output();
      const done = Number(/Resuming run [0-9a-f-]+: (\d+) step\(s\) done/.exec(out)?.[1]);
      // The step that was running at the SIGTERM (the analyst, in its pause) was finished and committed.
      expect(done).toBeGreaterThanOrEqual(3);
      for (let k = 1; k <= done; k++) expect(out).not.toContain(`(checkpoint ${k})`);
      expect(out).toContain(`(checkpoint ${done + 1})`);
      expect(out).toContain("The sentence has 9 words.");
    } finally {
      await rm(own, { recursive: true, force: true });
    }
  }, 180_000);

  it("killed with -9 mid-run, the same command continues where it stopped", async () => {
    const first = start();
    await first.until("wordsmith (checkpoint 2)");
    first.child.kill("SIGKILL");
    await first.exited;
    expect(first.output()).not.toContain("Answer:");

    const second = start();
    expect(await second.exited, second.output()).toBe(0);
    const out = second.output();
    expect(out).toMatch(/Resuming run [0-9a-f-]+: [2-9] step\(s\) done/);
    expect(out).not.toContain("✔ plan (checkpoint 1)");
    expect(out).not.toContain("✔ wordsmith (checkpoint 2)");
    expect(out).toContain("✔ statistician (checkpoint 4)");
    expect(out).toContain(
      'Answer: Here is what the team found. The sentence has 9 words. The longest word is "quick".',
    );

    const third = start();
    expect(await third.exited).toBe(0);
    expect(third.output()).toMatch(/already finished/);
    expect(third.output()).toContain("The sentence has 9 words.");
  }, 180_000);
});
