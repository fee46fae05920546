import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("../..", import.meta.url));
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Starts `openrath <args>` from source and resolves once it prints the line matching `ready`. */
function start(args: string[], ready: RegExp) {
  const child = spawn(
    process.execPath,
    ["--conditions=@openrath/source", "--import", "tsx", "src/bin.ts", ...args],
    {
      cwd: packageDir,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(child);
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const matched = new Promise<RegExpExecArray>((resolve, reject) => {
    child.stderr?.on("data", (data: Buffer) => {
      stderr += data.toString();
      const match = ready.exec(stderr);
      if (match) resolve(match);
    });
    exited.then((code) => reject(new Error(`exited ${code} before it was ready:\n${stderr}`)));
  });
  return { child, matched, exited, stderr: () => stderr };
}

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

  it("refuses --auth local on a host that is not loopback", async () => {
    const serve = start(
      ["serve", "--port", "0", "--host", "0.0.0.0", "--auth", "local", "--state", tempState()],
      /never/,
    );
    await expect(serve.matched).rejects.toThrow(/--auth local serves a loopback host only/);
    expect(await serve.exited).toBe(2);
  });
});
