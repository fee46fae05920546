import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnOpenrath, startOpenrath } from "../testing/run-cli.js";

const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Starts `openrath <args>`; killed after the test. */
function start(args: string[], ready: RegExp) {
  const running = startOpenrath(args, ready);
  children.push(running.child);
  return running;
}

const spawnCli = (args: string[]) => spawnOpenrath(args);

function tempState(): string {
  const dir = mkdtempSync(join(tmpdir(), "openrath-serve-"));
  dirs.push(dir);
  return dir;
}

describe("openrath serve", () => {
  it("serves the API with a worker on the embedded store, runs a workflow from --workflows, and stops on SIGTERM with exit 0", async () => {
    const state = tempState();
    const serve = start(
      ["serve", "--port", "0", "--state", state, "--workflows", "src/testing/fixture-workflows.ts"],
      /OpenRath server on (http:\/\/127\.0\.0\.1:\d+)/,
    );
    const base = (await serve.matched)[1];
    expect(serve.stderr()).toContain("workflows  greet");
    const created = await fetch(`${base}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant: "greet", input: "hi" }),
    });
    expect(created.status).toBe(201);
    const run = (await created.json()) as { id: string };
    // The stream ends once the run ends.
    const stream = await (await fetch(`${base}/v1/runs/${run.id}/stream`)).text();
    expect(stream).toContain('"to":"succeeded"');
    const read = (await (await fetch(`${base}/v1/runs/${run.id}`)).json()) as { status: string };
    expect(read.status).toBe("succeeded");
    expect((await fetch(`${base}/health/ready`)).status).toBe(200);
    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
    expect(serve.stderr()).toContain("SIGTERM: stopping");
  });

  it("the operator commands work through the server with --server: runs, the inbox, a decision, events --follow", async () => {
    const state = tempState();
    const serve = start(
      ["serve", "--port", "0", "--state", state],
      /OpenRath server on (http:\/\/127\.0\.0\.1:\d+)/,
    );
    const base = (await serve.matched)[1] ?? "";
    const created = await fetch(`${base}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant: "review", input: "ship it" }),
    });
    const run = (await created.json()) as { id: string };
    const cli = (args: string[]) => spawnCli([...args, "--server", base]);
    let inbox: { id: string; runId: string }[] = [];
    for (let i = 0; i < 50 && inbox.length === 0; i++) {
      const listed = await cli(["interrupts", "list", "--json"]);
      inbox =
        listed.stdout.trim() === ""
          ? []
          : listed.stdout
              .trim()
              .split("\n")
              .map((line) => JSON.parse(line));
      if (inbox.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(inbox).toMatchObject([{ runId: run.id }]);
    const decided = await cli(["interrupts", "decide", inbox[0]?.id ?? "", "--kind", "approve"]);
    expect(decided.stdout).toMatch(/: decided; run .*: queued/);
    const followed = await cli(["runs", "events", run.id, "--follow"]);
    expect(followed.code, followed.stderr).toBe(0);
    expect(followed.stdout).toContain('run.state.changed  {"from":"running","to":"succeeded"');
    const shown = await cli(["runs", "show", run.id]);
    expect(shown.stdout).toContain(`Run ${run.id} (succeeded)`);
    // Straight to the store while the server holds it: a coded error that says what to do.
    const locked = await spawnCli(["runs", "list", "--state", state]);
    expect(locked.code).toBe(1);
    expect(locked.stderr).toMatch(/is openrath serve running on it\? Pass --server .*\[store_locked\]/);
    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
  }, 120_000);

  it("exits 0 on SIGTERM after a run used a local sandbox (whose exit cleanup also listens for the signal)", async () => {
    const serve = start(
      ["serve", "--port", "0", "--state", tempState()],
      /OpenRath server on (http:\/\/127\.0\.0\.1:\d+)/,
    );
    const base = (await serve.matched)[1];
    const created = await fetch(`${base}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant: "durable-mams", input: "count the words" }),
    });
    expect(created.status).toBe(201);
    const run = (await created.json()) as { id: string };
    const stream = await (await fetch(`${base}/v1/runs/${run.id}/stream`)).text();
    expect(stream).toContain('"to":"succeeded"');
    serve.child.kill("SIGTERM");
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      serve.child.once("exit", (c, s) => resolve([c, s])),
    );
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  }, 120_000);

  it("refuses --auth local on a host that is not loopback", async () => {
    const serve = start(
      ["serve", "--port", "0", "--host", "0.0.0.0", "--auth", "local", "--state", tempState()],
      /never/,
    );
    await expect(serve.matched).rejects.toThrow(/--auth local serves a loopback host only/);
    expect(await serve.exited).toBe(2);
  });
});
