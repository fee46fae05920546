import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExample } from "../testing/run-example.js";

const script = fileURLToPath(new URL("./approval.ts", import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "openrath-approval-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the example with the arguments a user types, on the test's data directory. */
const start = (...args: string[]) =>
  startExample(script, ["--dir", dir, ...args], { env: { ...process.env, USER: "tester" } });

describe("the approval example", () => {
  it("killed with -9 while it waits, restarted, approved from the command line: the email is sent once", async () => {
    const first = start();
    await first.until("waiting for approval:");
    const id = /waiting for approval: ([0-9a-f-]{36})/.exec(first.output())![1]!;
    first.child.kill("SIGKILL");
    await first.exited;
    await expect(readFile(join(dir, "outbox.jsonl"), "utf8")).rejects.toThrow();

    // While the restarted worker holds the embedded database, a second process is turned away.
    const second = start();
    await second.until(`waiting for approval: ${id}`);
    expect(second.output()).toMatch(/Resuming run [0-9a-f-]+ \(waiting\)/);
    const intruder = start("approve");
    expect(await intruder.exited).toBe(1);
    expect(intruder.output()).toMatch(/has the embedded database .* open/);

    second.child.stdin!.write("approve\n");
    expect(await second.exited, second.output()).toBe(0);
    const out = second.output();
    expect(out).toContain(`✔ approve by tester: ${id}`);
    expect(out).toContain("finished (succeeded): Sent the invoice to ana@example.com.");
    expect(out).toContain("outbox: 1 email(s) sent");
    const sent = (await readFile(join(dir, "outbox.jsonl"), "utf8")).trim().split("\n");
    expect(sent.map((line) => JSON.parse(line).to)).toEqual(["ana@example.com"]);
  }, 240_000);

  it("a rejection from the one-shot command reaches the model, and nothing is sent", async () => {
    const fresh = await mkdtemp(join(tmpdir(), "openrath-approval-reject-"));
    try {
      const run = (...args: string[]) => startExample(script, ["--dir", fresh, ...args]);
      const worker = run();
      await worker.until("waiting for approval:");
      worker.child.kill("SIGKILL");
      await worker.exited;
      // A mistyped id decides nothing, even with one interrupt waiting.
      const typo = run("approve", "00000000-0000-7000-8000-000000000000");
      expect(await typo.exited).toBe(1);
      expect(typo.output()).toMatch(/No interrupt 00000000-0000-7000-8000-000000000000 is waiting/);
      const reject = run("reject", "wrong", "amount", "--actor", "lee");
      expect(await reject.exited, reject.output()).toBe(0);
      expect(reject.output()).toMatch(/✔ reject by lee/);
      const resumed = run();
      expect(await resumed.exited, resumed.output()).toBe(0);
      expect(resumed.output()).toMatch(
        /finished \(succeeded\): I did not send the invoice\. lee rejected .*wrong amount/,
      );
      expect(resumed.output()).toContain("outbox: 0 email(s) sent");
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  }, 240_000);
});
