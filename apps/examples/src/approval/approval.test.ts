import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const script = fileURLToPath(new URL("./approval.ts", import.meta.url));
const cwd = fileURLToPath(new URL("../..", import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "openrath-approval-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the example with the arguments a user types; collects its output. */
function start(...args: string[]): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  until: (text: string) => Promise<void>;
} {
  const child = spawn(
    process.execPath,
    ["--conditions=@openrath/source", "--import", "tsx", script, "--dir", dir, ...args],
    {
      cwd,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, USER: "tester" },
    },
  );
  let out = "";
  child.stdout!.on("data", (d) => {
    out += String(d);
  });
  child.stderr!.on("data", (d) => {
    out += String(d);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    output: () => out,
    exited,
    until: async (text) => {
      while (!out.includes(text)) {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`the example ended before "${text}":\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

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
  }, 120_000);

  it("a rejection from the one-shot command reaches the model, and nothing is sent", async () => {
    const fresh = await mkdtemp(join(tmpdir(), "openrath-approval-reject-"));
    try {
      const run = (...args: string[]) => {
        const child = spawn(
          process.execPath,
          ["--conditions=@openrath/source", "--import", "tsx", script, "--dir", fresh, ...args],
          {
            cwd,
            stdio: ["pipe", "pipe", "pipe"],
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
          out: () => out,
          exited: new Promise<number | null>((r) => child.once("exit", (code) => r(code))),
        };
      };
      const worker = run();
      while (!worker.out().includes("waiting for approval:")) await new Promise((r) => setTimeout(r, 50));
      worker.child.kill("SIGKILL");
      await worker.exited;
      const reject = run("reject", "wrong", "amount", "--actor", "lee");
      expect(await reject.exited, reject.out()).toBe(0);
      expect(reject.out()).toMatch(/✔ reject by lee/);
      const resumed = run();
      expect(await resumed.exited, resumed.out()).toBe(0);
      expect(resumed.out()).toMatch(
        /finished \(succeeded\): I did not send the invoice\. lee rejected .*wrong amount/,
      );
      expect(resumed.out()).toContain("outbox: 0 email(s) sent");
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  }, 120_000);
});
