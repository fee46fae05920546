import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageDir, spawnSyncOpenrath } from "./testing/run-cli.js";

const openrath = (args: string[], env: Record<string, string> = {}) => spawnSyncOpenrath(args, env);

describe("the openrath binary", () => {
  it("is declared as the package's bin, built from src/bin.ts with a node shebang", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(pkg.bin).toEqual({ openrath: "./dist/bin.js" });
    expect(readFileSync(new URL("./bin.ts", import.meta.url), "utf8")).toMatch(/^#!\/usr\/bin\/env node\n/);
    expect(readFileSync(new URL("../tsup.config.ts", import.meta.url), "utf8")).toContain(
      'bin: "src/bin.ts"',
    );
  });

  it("exits 0 with the version", () => {
    const run = openrath(["--version"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(/^openrath \d+\.\d+\.\d+\n$/);
  });

  it("exits 2 with one line for an unknown command or option", () => {
    const command = openrath(["frobnicate"]);
    expect(command.code).toBe(2);
    expect(command.stdout).toBe("");
    expect(command.stderr).toMatch(/^openrath: unknown command: "frobnicate"; .*\n$/);
    const option = openrath(["sessions", "list", "--colour"]);
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/^openrath: unknown option --colour for openrath sessions list; .*\n$/);
  });

  it("exits 1 with one line naming the error code when the work fails", () => {
    const run = openrath(["replay", "/nonexistent/recording"]);
    expect(run.code).toBe(1);
    expect(run.stderr.trimEnd().split("\n").at(-1)).toBe(
      "openrath: No such file or directory: /nonexistent/recording [not_found]",
    );
  });

  it("colours only when asked: NO_COLOR and pipes get plain text, FORCE_COLOR gets ANSI", () => {
    expect(openrath(["bogus"], { NO_COLOR: "1" }).stderr).not.toContain("\u001b[");
    expect(openrath(["bogus"]).stderr).not.toContain("\u001b[");
    const ESC = "\u001b";
    const forced = openrath(["bogus"], { FORCE_COLOR: "1" }).stderr;
    expect(forced.startsWith(`${ESC}[31mopenrath:${ESC}[39m unknown command`)).toBe(true);
  });
});

describe("Ctrl-C during the in-memory demo", () => {
  it("says it is stopping, cancels the model call in flight and exits 130 at once", async () => {
    // A model server that never answers: the demo waits in its first model call.
    const server = createServer(() => {});
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const child = spawn(
      process.execPath,
      ["--conditions=@openrath/source", "--import", "tsx", "src/bin.ts", "demo", "--in-memory"],
      {
        cwd: packageDir,
        env: {
          PATH: process.env.PATH ?? "",
          OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
          OPENAI_API_KEY: "k",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    const waiting = new Promise<void>((resolve) => server.once("request", () => resolve()));
    child.stderr.on("data", (part) => (stderr += part));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      await waiting;
      const sent = Date.now();
      child.kill("SIGINT");
      const code = await exited;
      expect(code).toBe(130);
      expect(Date.now() - sent, "exit took too long after SIGINT").toBeLessThan(5_000);
      expect(stderr).toContain("Stopping the demo");
      expect(stderr).toMatch(/Stopped\.\n$/);
    } finally {
      child.kill("SIGKILL");
      server.closeAllConnections();
      server.close();
    }
  }, 60_000);
});

describe("Ctrl-C during the durable demo (the default)", () => {
  it("says it is stopping, hands the run back to the queue within the drain deadline and exits 0", async () => {
    const server = createServer(() => {});
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const state = mkdtempSync(join(tmpdir(), "openrath-cli-stop-"));
    const child = spawn(
      process.execPath,
      ["--conditions=@openrath/source", "--import", "tsx", "src/bin.ts", "demo", "--state", state],
      {
        cwd: packageDir,
        env: {
          PATH: process.env.PATH ?? "",
          OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
          OPENAI_API_KEY: "k",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    const waiting = new Promise<void>((resolve) => server.once("request", () => resolve()));
    child.stderr.on("data", (part) => (stderr += part));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      await waiting;
      const sent = Date.now();
      child.kill("SIGINT");
      expect(await exited, stderr).toBe(0);
      expect(Date.now() - sent, "exit took too long after SIGINT").toBeLessThan(8_000);
      expect(stderr).toContain(
        "Stopping: the step in flight may finish and commit, then the run goes back to the queue",
      );
      const listed = openrath(["runs", "list", "--state", state, "--json"]);
      expect(JSON.parse(listed.stdout.trim()).status).toBe("queued");
    } finally {
      child.kill("SIGKILL");
      server.closeAllConnections();
      server.close();
      rmSync(state, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("openrath demo --durable", () => {
  it("killed with -9 mid-run, the same command continues after the last finished step", async () => {
    const state = mkdtempSync(join(tmpdir(), "openrath-cli-durable-"));
    const start = () => {
      const child = spawn(
        process.execPath,
        [
          "--conditions=@openrath/source",
          "--import",
          "tsx",
          "src/bin.ts",
          "demo",
          "--durable",
          "--state",
          state,
        ],
        { cwd: packageDir, env: { PATH: process.env.PATH ?? "" }, stdio: ["ignore", "pipe", "pipe"] },
      );
      let out = "";
      child.stdout.on("data", (part) => (out += part));
      child.stderr.on("data", (part) => (out += part));
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      return { child, exited, output: () => out };
    };
    try {
      const first = start();
      while (!first.output().includes("(checkpoint 2)")) {
        if (first.child.exitCode !== null) throw new Error(first.output());
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      first.child.kill("SIGKILL");
      await first.exited;
      expect(first.output()).not.toContain("Answer:");
      const runId = /Started run ([0-9a-f-]+)/.exec(first.output())?.[1];
      expect(runId).toBeDefined();

      const second = start();
      expect(await second.exited, second.output()).toBe(0);
      expect(second.output()).toMatch(new RegExp(`Resuming run ${runId}: [2-9] step\\(s\\) done`));
      expect(second.output()).not.toContain("(checkpoint 1)");
      expect(second.output()).toContain("Answer: Here is what the team found.");
      expect(second.output()).toContain(`Run ${runId}: succeeded, a durable run on the embedded store`);
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  }, 120_000);
});
