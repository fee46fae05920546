import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startOpenrath } from "../testing/run-cli.js";

const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The JSON lines of a process's standard error (the banner's plain lines are skipped). */
function jsonLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Runs `serve` with `env`, submits one `talker` run with a planted input, stops it; its stderr. */
async function serveOnce(
  env: Record<string, string>,
): Promise<{ stderr: string; runId: string; metrics: string }> {
  const state = mkdtempSync(join(tmpdir(), "openrath-logs-"));
  dirs.push(state);
  const serve = startOpenrath(
    ["serve", "--port", "0", "--state", state, "--workflows", "src/testing/fixture-workflows.ts"],
    /OpenRath server on (http:\/\/127\.0\.0\.1:\d+)/,
    env,
  );
  children.push(serve.child);
  const base = (await serve.matched)[1];
  const created = await fetch(`${base}/v1/runs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ assistant: "talker", input: "PLANTED-INPUT-91c2" }),
  });
  expect(created.status).toBe(201);
  const run = (await created.json()) as { id: string };
  await (await fetch(`${base}/v1/runs/${run.id}/stream`)).text();
  const metrics = await (await fetch(`${base}/metrics`)).text();
  serve.child.kill("SIGTERM");
  expect(await serve.exited).toBe(0);
  return { stderr: serve.stderr(), runId: run.id, metrics };
}

describe("openrath serve logs", () => {
  it("writes one JSON object per line with the run, step and worker ids, redacts content and never logs the input", async () => {
    const { stderr, runId, metrics } = await serveOnce({ OPENRATH_LOG_LEVEL: "info" });
    const lines = jsonLines(stderr);
    for (const line of lines) {
      expect(typeof line.time).toBe("string");
      expect(["debug", "info", "warn", "error"]).toContain(line.level);
      expect(typeof line.msg).toBe("string");
    }
    const started = lines.find((line) => line.msg === "worker started");
    expect(started?.workerId).toEqual(expect.any(String));
    const step = lines.find((line) => line.msg === "drafting the answer");
    expect(step).toMatchObject({ level: "info", runId, stepId: "answer", attempt: 1, content: "[redacted]" });
    expect(step?.workerId).toBe(started?.workerId);
    // The server's request lines carry Fastify's request id.
    expect(lines.some((line) => typeof line.reqId === "string" && line.msg === "request completed")).toBe(
      true,
    );
    // Below the level: no debug line.
    expect(lines.some((line) => line.level === "debug")).toBe(false);
    expect(stderr).not.toContain("PLANTED-CONTENT-7f3a");
    expect(stderr).not.toContain("PLANTED-INPUT-91c2");
    // serve's /metrics shows the store's counts and its worker's (one registry).
    const succeeded = metrics
      .split("\n")
      .find(
        (line) =>
          line.startsWith("openrath_runs{") &&
          line.includes('openrath_workflow="talker"') &&
          line.includes('openrath_run_status="succeeded"'),
      );
    expect(succeeded).toMatch(/ 1$/);
    expect(metrics).toMatch(/^openrath_step_duration_count\{[^}]*openrath_workflow="talker"[^}]*\} 1$/m);
  });

  it("OPENRATH_LOG_LEVEL sets the level: warn drops the info lines, debug adds the step's debug line", async () => {
    const quiet = jsonLines((await serveOnce({ OPENRATH_LOG_LEVEL: "warn" })).stderr);
    expect(quiet.filter((line) => line.level === "info" || line.level === "debug")).toEqual([]);
    const loud = jsonLines((await serveOnce({ OPENRATH_LOG_LEVEL: "debug" })).stderr);
    expect(loud.find((line) => line.msg === "a debug detail")).toMatchObject({
      level: "debug",
      stepId: "answer",
    });
  });
});
