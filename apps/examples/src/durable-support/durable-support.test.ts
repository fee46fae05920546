import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const script = fileURLToPath(new URL("./durable-support.ts", import.meta.url));
const cwd = fileURLToPath(new URL("../..", import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "openrath-support-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the script to its end (it must exit by itself: `runtime.close()`); its exit code and output. */
function run(): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ["--conditions=@openrath/source", "--import", "tsx", script, dir], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => {
    out += String(d);
  });
  child.stderr.on("data", (d) => {
    out += String(d);
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    }),
  );
}

describe("the runtime-durable README example", () => {
  it("routes a refund request to the refund step, exits on its own, and the same key returns the same run", async () => {
    const first = await run();
    expect(first.code, first.out).toBe(0);
    const [id, answer] = first.out.trim().split("\n").at(-1)!.split(" ");
    expect(answer).toBe("refunded");
    const second = await run();
    expect(second.code, second.out).toBe(0);
    expect(second.out.trim().split("\n").at(-1)).toBe(`${id} refunded`);
  }, 120_000);
});
