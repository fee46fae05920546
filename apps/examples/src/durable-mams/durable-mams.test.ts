import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const script = fileURLToPath(new URL("./durable-mams.ts", import.meta.url));
const cwd = fileURLToPath(new URL("../..", import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "openrath-durable-mams-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts the example with the same command a user types; collects its output. */
function start(): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(
    process.execPath,
    ["--conditions=@openrath/source", "--import", "tsx", script, "--dir", dir, "--pause-ms", "300"],
    {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  child.stdout!.on("data", (d) => {
    out += String(d);
  });
  child.stderr!.on("data", (d) => {
    out += String(d);
  });
  return {
    child,
    output: () => out,
    exited: new Promise((resolve) => child.once("exit", (code) => resolve(code))),
  };
}

describe("the durable MAMS example", () => {
  it("killed with -9 mid-run, the same command continues where it stopped", async () => {
    const first = start();
    while (!first.output().includes("wordsmith (checkpoint 2)")) {
      if (first.child.exitCode !== null) throw new Error(`the example ended early:\n${first.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
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
