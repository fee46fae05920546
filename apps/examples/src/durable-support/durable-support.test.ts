import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExample } from "../testing/run-example.js";

const script = fileURLToPath(new URL("./durable-support.ts", import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "openrath-support-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the script to its end (it must exit by itself: `runtime.close()`); its exit code and output. */
async function run(): Promise<{ code: number | null; out: string }> {
  const example = startExample(script, [dir]);
  const code = await example.exited;
  return { code, out: example.output() };
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
  }, 240_000);
});
