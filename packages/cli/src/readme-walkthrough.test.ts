import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");

/** The shell block after the `server-walkthrough` marker, exactly as the README shows it. */
function walkthrough(): string {
  const marker = readme.indexOf("<!-- server-walkthrough -->");
  expect(marker, "the README has the server walkthrough").toBeGreaterThan(0);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(marker));
  return block?.[1] ?? "";
}

let serve: ChildProcess | undefined;
const state = mkdtempSync(join(tmpdir(), "openrath-readme-"));
afterAll(() => {
  serve?.kill("SIGKILL");
  rmSync(state, { recursive: true, force: true });
});

describe("the README's Agent Server walkthrough", () => {
  it("runs as written against `openrath serve`: a durable run, its events, an approval, its end", async () => {
    // `pnpm openrath serve` as the README says, with the state kept out of the checkout.
    serve = spawn(
      process.execPath,
      ["--conditions=@openrath/source", "--import", "tsx", "src/bin.ts", "serve", "--state", state],
      {
        cwd: packageDir,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    await new Promise<void>((resolve, reject) => {
      serve?.stderr?.on("data", (data: Buffer) => {
        stderr += data.toString();
        if (stderr.includes("OpenRath server on http://127.0.0.1:8787")) resolve();
      });
      serve?.once("exit", (code) =>
        reject(new Error(`serve exited ${code} (is port 8787 taken?):\n${stderr}`)),
      );
    });
    const script = walkthrough();
    // From the checkout's root, where the README's `pnpm openrath` lines are typed.
    const run = spawnSync("bash", ["-euo", "pipefail", "-c", script], {
      cwd: fileURLToPath(new URL("../../..", import.meta.url)),
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const out = run.stdout;
    // The first stream ends at the park, the decision requeues the run, the second stream runs to the end.
    expect(out).toContain("event: run.interrupt.created");
    expect(out).toContain('"queued"');
    expect(out).toMatch(/"to":"succeeded"/);
    expect(out.split("\n")).toContain("Published the reply.");
    // The operator commands list the run and show it, through the server.
    const runId = /^Run ([0-9a-f-]+) \(succeeded\)$/m.exec(out)?.[1];
    expect(runId, out).toBeDefined();
    expect(out).toMatch(new RegExp(`^${runId}\\s+succeeded\\s+review\\s`, "m"));
    // Ids are the events' sequences: each stream starts at 1 with no gap, the second goes further.
    const ids = [...out.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    const restart = ids.indexOf(1, 1);
    const [first, second] = [ids.slice(0, restart), ids.slice(restart)];
    expect(first).toEqual(first.map((_, i) => i + 1));
    expect(second).toEqual(second.map((_, i) => i + 1));
    expect(second.length).toBeGreaterThan(first.length);
    serve.kill("SIGTERM");
    expect(await new Promise((resolve) => serve?.once("exit", resolve))).toBe(0);
  }, 120_000);
});
