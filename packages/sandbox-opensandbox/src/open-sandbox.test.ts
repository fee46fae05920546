import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { createRegistry, OpenRathError, type SandboxV1, Session } from "@openrath/core";
import { serviceAvailable } from "@openrath/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { describeBody } from "./internal/errors.js";
import { parseEventStream } from "./internal/event-stream.js";
import { endpointUrl } from "./internal/open-remote-sandbox.js";
import { shellJoin } from "./internal/shell.js";
import { DEFAULT_IMAGE } from "./internal/spec.js";
import { openSandbox } from "./open-sandbox.js";
import { bwrapWorks, type FakeOpenSandbox, startFakeOpenSandbox } from "./testing/fake-opensandbox.js";

const bubblewrap = await serviceAvailable("bubblewrap", bwrapWorks);

/** Expects `promise` to reject with an OpenRath error of `code`, and returns it. */
async function rejection(promise: Promise<unknown>, code: string): Promise<OpenRathError> {
  const error = await promise.then(
    (value) => {
      throw new Error(
        `expected a rejection with ${code}, got a value: ${Object.prototype.toString.call(value)}`,
      );
    },
    (e: unknown) => e,
  );
  expect(OpenRathError.isInstance(error), String(error)).toBe(true);
  expect((error as OpenRathError).code, (error as Error).message).toBe(code);
  return error as OpenRathError;
}

/** Host processes whose command line contains `needle` (the fake's commands run on this host). */
function hostProcesses(needle: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
      if (cmdline.includes(needle) && !cmdline.includes("bwrap")) found.push(`${pid}: ${cmdline}`);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The descriptor's parseSpec: what `session.to("opensandbox", spec)` and `open` call. */
const parseOpenSandboxSpec = (spec: unknown) => openSandbox().parseSpec!(spec);

describe("spec", () => {
  it("fills in the defaults", () => {
    expect(parseOpenSandboxSpec(undefined)).toEqual({
      image: DEFAULT_IMAGE,
      entrypoint: ["/opt/code-interpreter/code-interpreter.sh"],
      env: {},
      resourceLimits: { cpu: "1", memory: "2Gi" },
      timeoutSeconds: 600,
      metadata: {},
      workspace: "/workspace",
      renewEverySeconds: 300,
      codeInterpreter: true,
    });
    const plain = parseOpenSandboxSpec({
      image: "python:3.12",
      timeoutSeconds: 120,
      workspace: "/home/me/ws/",
    });
    expect(plain).toMatchObject({
      entrypoint: ["tail", "-f", "/dev/null"],
      codeInterpreter: false,
      renewEverySeconds: 60,
      workspace: "/home/me/ws",
    });
    expect(parseOpenSandboxSpec(plain)).toEqual(plain);
  });

  it.each([
    [{ image: "" }, "image"],
    [{ entrypoint: [] }, "entrypoint"],
    [{ env: { A: 1 } }, "env.A"],
    [{ env: { "A=B": "x" } }, "env.A=B"],
    [{ resourceLimits: "big" }, "resourceLimits"],
    [{ timeoutSeconds: 59 }, "timeoutSeconds"],
    [{ timeoutSeconds: 60.5 }, "timeoutSeconds"],
    [{ metadata: { "opensandbox.io/x": "y" } }, "metadata.opensandbox.io/x"],
    [{ workspace: "relative" }, "workspace"],
    [{ workspace: "/" }, "workspace"],
    [{ workspace: "/a/../b" }, "workspace"],
    [{ renewEverySeconds: 600 }, "renewEverySeconds"],
    [{ renewEverySeconds: 0 }, "renewEverySeconds"],
    [{ codeInterpreter: "yes" }, "codeInterpreter"],
    [{ imagee: "typo" }, "imagee"],
  ])("refuses %j naming %s", (spec, field) => {
    let error: unknown;
    try {
      parseOpenSandboxSpec(spec);
    } catch (e) {
      error = e;
    }
    expect(OpenRathError.isInstance(error, "invalid_spec")).toBe(true);
    expect((error as Error).name).toBe("SandboxError");
    expect((error as OpenRathError).message).toContain(`"${field}"`);
    expect((error as OpenRathError).details.field).toBe(field);
  });

  it("is checked when a session is placed", () => {
    const registry = createRegistry({ sandboxes: [openSandbox()] });
    expect(() =>
      Session.fromUserMessage("x").to("opensandbox", { timeoutSeconds: 10 }, { registry }),
    ).toThrow(/timeoutSeconds/);
  });

  it("declares the manifest", () => {
    expect(openSandbox().capabilities).toEqual({
      streaming: true,
      stdin: false,
      network: "none",
      isolation: "remote",
      snapshots: false,
      languages: ["python", "bash"],
      processTree: "best-effort",
    });
    expect(openSandbox({ network: "open" }).capabilities.network).toBe("open");
  });
});

describe("wire helpers", () => {
  it("joins argv with shell quoting", () => {
    expect(shellJoin(["printf", "%s|%s", "a b", "it's", "$HOME", ""])).toBe(
      `'printf' %s'|'%s 'a b' 'it'\\''s' '$HOME' ''`.replace(`%s'|'%s`, `'%s|%s'`),
    );
    expect(shellJoin(["FOO=1"])).toBe("'FOO=1'");
  });

  it("joins an endpoint with or without a scheme and a path prefix", () => {
    expect(endpointUrl("http", "127.0.0.1:9/proxy/44772/")).toBe("http://127.0.0.1:9/proxy/44772");
    expect(endpointUrl("https", "gw.example/sandboxes/x/port/44772")).toBe(
      "https://gw.example/sandboxes/x/port/44772",
    );
    expect(endpointUrl("http", "https://already/set")).toBe("https://already/set");
  });

  it("reads all three error body shapes", () => {
    expect(describeBody({ code: "DOCKER::SANDBOX_NOT_FOUND", message: "Sandbox x not found." })).toEqual({
      code: "DOCKER::SANDBOX_NOT_FOUND",
      message: "Sandbox x not found.",
    });
    expect(
      describeBody('{"detail":[{"type":"missing","loc":["body","resourceLimits"],"msg":"Field required"}]}'),
    ).toEqual({ code: "VALIDATION_ERROR", message: "body.resourceLimits: Field required" });
    expect(describeBody({ error: "Unauthorized: invalid or missing header X-EXECD-ACCESS-TOKEN" })).toEqual({
      message: "Unauthorized: invalid or missing header X-EXECD-ACCESS-TOKEN",
    });
    expect(describeBody("404 page not found")).toEqual({ message: "404 page not found" });
    expect(describeBody("")).toEqual({});
  });

  it("parses raw JSON frames, data: frames and split chunks, skipping comments", async () => {
    const text =
      '{"type":"init","text":"id"}\n\n: keep-alive\nevent: message\nid: 3\nretry: 10\ndata: {"type":"stdout","text":"a"}\n\n' +
      'not json\n{"type":"stdout","text":"é"}\n\n{"type":"execution_complete"}';
    const bytes = new TextEncoder().encode(text);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        // Split inside the multi-byte character and inside a frame.
        for (let i = 0; i < bytes.length; i += 7) controller.enqueue(bytes.subarray(i, i + 7));
        controller.close();
      },
    });
    const events = [];
    for await (const event of parseEventStream(body)) events.push(event);
    expect(events).toEqual([
      { type: "init", text: "id" },
      { type: "stdout", text: "a" },
      { type: "stdout", text: "é" },
      { type: "execution_complete" },
    ]);
  });
});

describe("failures without a server", () => {
  it("an unreachable server is sandbox_unavailable", async () => {
    const backend = openSandbox({ domain: `127.0.0.1:${await closedPort()}` });
    const error = await rejection(backend.open(undefined), "sandbox_unavailable");
    expect(error.message).toMatch(/OPEN_SANDBOX_DOMAIN/);
  });

  it("options are checked, with invalid_argument naming the option", () => {
    expect(() => openSandbox({ readyTimeoutMs: -1 })).toThrow(/readyTimeoutMs/);
    expect(() => openSandbox({ network: "wide" as never })).toThrow(/network/);
    for (const options of [{ readyTimeoutMs: -1 }, { network: "wide" }, { domian: "x:1" }]) {
      let error: unknown;
      try {
        openSandbox(options as never);
      } catch (e) {
        error = e;
      }
      expect(OpenRathError.isInstance(error, "invalid_argument"), JSON.stringify(options)).toBe(true);
      expect((error as OpenRathError).details.field).toBe(Object.keys(options)[0]);
    }
  });

  it("never shows the execd access token in an error", () => {
    const token = "execd-token-that-is-secret";
    expect(() => openSandbox({ execdAccessToken: 42 as never })).toThrow(/execdAccessToken/);
    let error: unknown;
    try {
      openSandbox({ execdAccessToken: [token] as never });
    } catch (e) {
      error = e;
    }
    expect(String(error)).not.toContain(token);
    expect(JSON.stringify((error as OpenRathError).details)).not.toContain(token);
  });
});

describe.skipIf(!bubblewrap.available)(`faults against the fake server (${bubblewrap.reason})`, () => {
  let fake: FakeOpenSandbox;
  const opened: SandboxV1[] = [];
  const open = async (
    spec: Record<string, unknown> = {},
    options: Parameters<typeof openSandbox>[0] = {},
  ) => {
    const backend = openSandbox({ domain: fake.domain, readyTimeoutMs: 15_000, ...options });
    const sandbox = await backend.open(backend.parseSpec!(spec));
    opened.push(sandbox);
    return sandbox;
  };

  beforeAll(async () => {
    fake = await startFakeOpenSandbox();
  });
  afterEach(async () => {
    fake.control.reset();
    await Promise.allSettled(opened.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await fake.close();
  });

  it("a 5xx on create is sandbox_open_failed with the server's code and message, and leaves no sandbox", async () => {
    const before = fake.created.length;
    fake.control.fail({
      method: "POST",
      path: "/v1/sandboxes",
      status: 503,
      body: { code: "DOCKER::UNAVAILABLE", message: "docker daemon is restarting" },
    });
    const error = await rejection(open(), "sandbox_open_failed");
    expect(error.message).toContain("DOCKER::UNAVAILABLE");
    expect(error.message).toContain("docker daemon is restarting");
    expect(error.details).toMatchObject({ status: 503, remoteCode: "DOCKER::UNAVAILABLE" });
    expect(fake.created.length).toBe(before);
  });

  it("a 422 on create reports FastAPI's validation errors", async () => {
    fake.control.fail({
      method: "POST",
      path: "/v1/sandboxes",
      status: 422,
      body: { detail: [{ type: "missing", loc: ["body", "resourceLimits"], msg: "Field required" }] },
    });
    const error = await rejection(open(), "sandbox_open_failed");
    expect(error.message).toContain("body.resourceLimits: Field required");
  });

  it("failed provisioning stops the wait with the reason, and the sandbox is deleted", async () => {
    fake.control.nextSandbox({
      failProvisioning: { afterPolls: 2, message: "image pull failed: no such image" },
    });
    const error = await rejection(open({ image: "missing:latest" }), "sandbox_open_failed");
    expect(error.message).toContain("PROVISIONING_ERROR");
    expect(error.message).toContain("image pull failed: no such image");
    const id = fake.created.at(-1)!;
    expect(error.details.id).toBe(id);
    expect(fake.deleted).toContain(id);
    expect(fake.sandboxes.has(id)).toBe(false);
  });

  it("waits through Pending polls and failing pings", async () => {
    fake.control.nextSandbox({ createState: "Pending", pendingPolls: 3, pingFailures: 3 });
    const sandbox = await open();
    const pings = fake.requests.filter((r) => r.server === sandbox.id && r.path === "/ping");
    expect(pings.map((p) => p.status)).toEqual([503, 503, 503, 200]);
    const polls = fake.requests.filter((r) => r.path === `/v1/sandboxes/${sandbox.id}` && r.method === "GET");
    expect(polls.length).toBeGreaterThanOrEqual(3);
    expect((await sandbox.exec("echo ready")).stdout).toBe("ready\n");
  });

  it("waits through pings whose connection is reset", async () => {
    fake.control.nextSandbox({ pingFailures: 2, pingFailureMode: "reset" });
    const sandbox = await open();
    expect((await sandbox.exec("echo ready")).stdout).toBe("ready\n");
  });

  it("a ready timeout while execd never answers deletes the sandbox", async () => {
    fake.control.nextSandbox({ createState: "Running", pingFailures: 1000 });
    const error = await rejection(open({}, { readyTimeoutMs: 1_000 }), "sandbox_open_failed");
    expect(error.message).toMatch(/did not answer \/ping/);
    expect(fake.deleted).toContain(fake.created.at(-1));
  });

  it("an abort during open deletes the sandbox", async () => {
    fake.control.nextSandbox({ pingFailures: 1000 });
    const controller = new AbortController();
    const backend = openSandbox({ domain: fake.domain });
    const opening = backend.open(undefined, { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    await rejection(opening, "aborted");
    expect(fake.deleted).toContain(fake.created.at(-1));
  });

  it("a stream dropped before its terminal event is sandbox_transport, never exit code 0", async () => {
    const sandbox = await open();
    fake.control.dropStream();
    const reset = await rejection(sandbox.exec("echo a; echo b"), "sandbox_transport");
    expect(reset.message).toMatch(/connection broke/);
    fake.control.dropStream({ mode: "end" });
    const ended = await rejection(sandbox.exec("echo a; echo b"), "sandbox_transport");
    expect(ended.message).toMatch(/without execution_complete or error/);
    fake.control.dropStream({ afterEvents: 1 });
    await rejection(sandbox.exec("echo a; sleep 0.5; echo b"), "sandbox_transport");
    expect((await sandbox.exec("echo fine")).stdout).toBe("fine\n");
  });

  it("interrupts a command whose stream broke, so it does not go on running (and writing) on the server", async () => {
    const sandbox = await open();
    fake.control.dropStream({ afterEvents: 2 });
    await rejection(sandbox.exec("echo started; sleep 2; echo late > late.txt"), "sandbox_transport");
    const execd = fake.sandboxes.get(sandbox.id)!.execd;
    expect(execd.interrupted.length, "the broken command was not interrupted").toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await sandbox.exists("late.txt"), "the command kept running after its stream broke").toBe(false);
  });

  it("caps one huge output line like any output: the event line buffer is bounded", async () => {
    const sandbox = await open();
    let received = 0;
    const result = await sandbox.exec("head -c 12000000 /dev/zero | tr '\\000' x; echo; echo after", {
      maxOutputBytes: 1000,
      onStdout: (text) => {
        received += text.length;
      },
    });
    expect(result.truncated).toBe(true);
    // 12,000,000 x, a newline, "after" and a newline: 12,000,007 bytes, 1000 kept.
    expect(result.stdout).toBe(`${"x".repeat(1000)}\n[output truncated: 11999007 more bytes not shown]\n`);
    expect(received).toBeLessThan(1100);
  });

  it("a dropped /code stream is sandbox_transport too", async () => {
    const sandbox = await open();
    fake.control.dropStream({ route: "/code" });
    await rejection(sandbox.runCode("print(1)", "python"), "sandbox_transport");
  });

  it("a command that never exits is interrupted at timeoutMs and leaves no process", async () => {
    const sandbox = await open();
    const marker = `${7_000_000 + Math.floor(Math.random() * 999_999)}`;
    const started = Date.now();
    const error = await rejection(
      sandbox.exec(`echo started; sleep ${marker}`, { timeoutMs: 700 }),
      "exec_timeout",
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error.details.stdout).toBe("started\n");
    const execd = fake.sandboxes.get(sandbox.id)!.execd;
    expect(execd.interrupted.length).toBe(1);
    const record = execd.commands.get(execd.interrupted[0]!)!;
    expect(record.content).toContain(`sleep ${marker}`);
    expect(record.running).toBe(false);
    expect(fake.running()).toBe(0);
    expect(hostProcesses(`sleep ${marker}`)).toEqual([]);
  });

  it("after a timeout kills what left the process group but carries the command's marker", async () => {
    const sandbox = await open();
    const marker = `openrath-adapter-setsid-${process.pid}-${Date.now()}`;
    await rejection(
      sandbox.exec(`setsid sh -c 'sleep 30' ${marker} & sleep 30`, { timeoutMs: 700 }),
      "exec_timeout",
    );
    const scan = await sandbox.exec(
      `for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline 2>/dev/null; echo; done | grep -c "$M" || true`,
      // A bracket in the pattern keeps grep's own command line from matching it.
      { env: { M: `[${marker[0]}]${marker.slice(1)}` } },
    );
    expect(scan.stdout.trim(), "execd's group signal missed it and the adapter did not kill it").toBe("0");
  });

  it("a 5xx on /command is sandbox_remote_error with the server's code and message", async () => {
    const sandbox = await open();
    fake.control.fail({
      path: "/command",
      status: 500,
      body: { code: "RUNTIME_ERROR", message: "fork failed" },
    });
    const error = await rejection(sandbox.exec("true"), "sandbox_remote_error");
    expect(error.message).toContain("RUNTIME_ERROR");
    expect(error.message).toContain("fork failed");
  });

  it("bad arguments are invalid_argument, refused before any call", async () => {
    const sandbox = await open();
    const before = fake.requests.length;
    await rejection(sandbox.exec([]), "invalid_argument");
    await rejection(sandbox.exec([1] as unknown as string[]), "invalid_argument");
    await rejection(sandbox.exec("true", { timeoutMs: 0 }), "invalid_argument");
    await rejection(sandbox.exec("true", { maxOutputBytes: Number.NaN }), "invalid_argument");
    await rejection(sandbox.exec("true", { env: { "A=B": "x" } }), "invalid_argument");
    await rejection(sandbox.writeFile("x", 42 as unknown as string), "invalid_argument");
    await rejection(sandbox.runCode("1", "cobol", { cwd: "nowhere" }), "unsupported_language");
    expect(fake.requests.length).toBe(before);
    expect((await sandbox.exec("")).exitCode).toBe(0);
  });

  it("an execd that went away is sandbox_unavailable", async () => {
    const sandbox = await open();
    const server = fake.sandboxes.get(sandbox.id)!.execdServer!;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    // A pooled keep-alive connection may still be tried first: that one breaks (sandbox_transport).
    await sandbox.exec("true").catch(() => undefined);
    const error = await rejection(sandbox.exec("true"), "sandbox_unavailable");
    expect(error.message).toMatch(/expired or been deleted/);
    await rejection(sandbox.readFile("x.txt"), "sandbox_unavailable");
  });

  it("renewal pushes expiresAt forward while the sandbox is open, and stops at close", async () => {
    const sandbox = await open({ timeoutSeconds: 600, renewEverySeconds: 0.2 });
    const held = fake.sandboxes.get(sandbox.id)!;
    const first = held.expiresAt!.getTime();
    for (let i = 0; i < 100 && held.renewals.length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(held.renewals.length).toBeGreaterThanOrEqual(2);
    expect(held.expiresAt!.getTime()).toBeGreaterThan(first);
    expect(held.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 590_000);
    await sandbox.close();
    const count = held.renewals.length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(held.renewals.length).toBe(count);
  });

  it("close deletes the sandbox even after errors, retrying a failing delete", async () => {
    const sandbox = await open();
    fake.control.fail({ path: "/command", status: 500 });
    await rejection(sandbox.exec("true"), "sandbox_remote_error");
    fake.control.fail({ method: "DELETE", path: `/v1/sandboxes/${sandbox.id}`, status: 503, times: 2 });
    await sandbox.close();
    expect(fake.sandboxes.has(sandbox.id)).toBe(false);
    const deletes = fake.requests.filter(
      (r) => r.method === "DELETE" && r.path === `/v1/sandboxes/${sandbox.id}`,
    );
    expect(deletes.map((d) => d.status)).toEqual([503, 503, 204]);
    await sandbox.close();
    await rejection(sandbox.exec("true"), "sandbox_closed");
  });

  it("close of a sandbox that is already gone resolves", async () => {
    const sandbox = await open();
    const response = await fetch(`${fake.url}/v1/sandboxes/${sandbox.id}`, { method: "DELETE" });
    expect(response.status).toBe(204);
    await sandbox.close();
  });

  it("close that keeps failing rejects, and a later close tries again", async () => {
    const sandbox = await open();
    fake.control.fail({ method: "DELETE", path: `/v1/sandboxes/${sandbox.id}`, status: 500, times: 4 });
    await rejection(sandbox.close(), "sandbox_remote_error");
    expect(fake.sandboxes.has(sandbox.id)).toBe(true);
    await sandbox.close();
    expect(fake.sandboxes.has(sandbox.id)).toBe(false);
  });

  it("close during a running command ends it with sandbox_closed", async () => {
    const sandbox = await open();
    const running = sandbox.exec("sleep 30");
    // Handled below, after close; mark it handled now so the early rejection is not reported.
    running.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await sandbox.close();
    await rejection(running, "sandbox_closed");
  });

  it("execd's 404 for /directories/list (execd < 1.0.19) falls back to /files/search", async () => {
    const old = await startFakeOpenSandbox({ directoriesList: false });
    try {
      const backend = openSandbox({ domain: old.domain });
      const sandbox = await backend.open(undefined);
      try {
        await sandbox.writeFile("tree/a/b.txt", "b");
        await sandbox.writeFile("tree/c.txt", "cc");
        expect(await sandbox.listFiles("tree")).toEqual([
          { name: "a", path: "tree/a", type: "directory", size: 0 },
          { name: "c.txt", path: "tree/c.txt", type: "file", size: 2 },
        ]);
        expect((await sandbox.listFiles("tree", { recursive: true })).map((e) => e.path)).toEqual([
          "tree/a",
          "tree/a/b.txt",
          "tree/c.txt",
        ]);
        expect(old.requests.some((r) => r.path === "/directories/list" && r.status === 404)).toBe(true);
      } finally {
        await sandbox.close();
      }
    } finally {
      await old.close();
    }
  });

  it("works through the server proxy and with endpoint headers", async () => {
    const gateway = await startFakeOpenSandbox({
      endpointHeaders: { "OpenSandbox-Secure-Access": "s3cret" },
    });
    try {
      for (const useServerProxy of [false, true]) {
        const backend = openSandbox({ domain: gateway.url, useServerProxy });
        const sandbox = await backend.open(undefined);
        try {
          expect((await sandbox.exec("echo via")).stdout).toBe("via\n");
          expect((await sandbox.runCode("print('py')", "python")).stdout).toBe("py\n");
          await sandbox.writeFile("x.txt", "x");
          expect(await sandbox.readFile("x.txt")).toBe("x");
        } finally {
          await sandbox.close();
        }
      }
      expect(
        gateway.requests.some((r) => r.server === "lifecycle" && r.path.includes("/proxy/44772/command")),
      ).toBe(true);
    } finally {
      await gateway.close();
    }
  });

  it("a wrong API key is refused with a clear error", async () => {
    const guarded = await startFakeOpenSandbox({ apiKey: "right-key" });
    try {
      const wrong = await rejection(
        openSandbox({ domain: guarded.domain, apiKey: "wrong-key" }).open(undefined),
        "sandbox_open_failed",
      );
      expect(wrong.message).toContain("HTTP 401 INVALID_API_KEY");
      expect(wrong.message).toContain("OPEN_SANDBOX_API_KEY");
      const missing = await rejection(
        openSandbox({ domain: guarded.domain }).open(undefined),
        "sandbox_open_failed",
      );
      expect(missing.message).toContain("MISSING_API_KEY");
      expect(guarded.created).toEqual([]);
      const sandbox = await openSandbox({ domain: guarded.domain, apiKey: "right-key" }).open(undefined);
      expect((await sandbox.exec("echo in")).stdout).toBe("in\n");
      await sandbox.close();
      expect(guarded.sandboxes.size).toBe(0);
    } finally {
      await guarded.close();
    }
  });

  it("an execd access token is sent, and its absence is a clear error", async () => {
    const guarded = await startFakeOpenSandbox({ execdAccessToken: "tok" });
    try {
      const error = await rejection(
        openSandbox({ domain: guarded.domain, readyTimeoutMs: 30_000 }).open(undefined),
        "sandbox_open_failed",
      );
      expect(error.message).toContain("X-EXECD-ACCESS-TOKEN");
      expect(error.message).toContain("execdAccessToken");
      expect(guarded.sandboxes.size).toBe(0);
      const sandbox = await openSandbox({ domain: guarded.domain, execdAccessToken: "tok" }).open(undefined);
      expect((await sandbox.exec("echo in")).stdout).toBe("in\n");
      expect((await sandbox.runCode("print(3)", "python")).stdout).toBe("3\n");
      await sandbox.close();
    } finally {
      await guarded.close();
    }
  });

  it("passes the spec to the server", async () => {
    const sandbox = await open({
      image: "python:3.12",
      env: { SPEC_VAR: "from-spec" },
      metadata: { team: "rath" },
      resourceLimits: { cpu: "500m", memory: "512Mi" },
      timeoutSeconds: 120,
    });
    const held = fake.sandboxes.get(sandbox.id)!;
    expect(held.image).toEqual({ uri: "python:3.12" });
    expect(held.entrypoint).toEqual(["tail", "-f", "/dev/null"]);
    expect(held.metadata).toEqual({ team: "rath" });
    expect(held.resourceLimits).toEqual({ cpu: "500m", memory: "512Mi" });
    expect(held.expiresAt!.getTime() - held.createdAt.getTime()).toBe(120_000);
    expect((await sandbox.exec('printf %s "$SPEC_VAR"')).stdout).toBe("from-spec");
    // A plain image has no code interpreter: Python runs through /command.
    expect((await sandbox.runCode("print(2)", "python")).stdout).toBe("2\n");
    expect(fake.requests.some((r) => r.server === sandbox.id && r.path.startsWith("/code"))).toBe(false);
  });

  it("keeps output exact: no trailing newline, empty lines, sh and runCode languages", async () => {
    const sandbox = await open();
    expect((await sandbox.exec("printf 'a\\n\\nb'")).stdout).toBe("a\n\nb");
    expect((await sandbox.exec("printf '\\n\\n'")).stdout).toBe("\n\n");
    expect((await sandbox.exec("true")).stdout).toBe("");
    expect((await sandbox.runCode("printf 'x'; exit 4", "sh")).exitCode).toBe(4);
    expect((await sandbox.runCode("echo $BASH_VERSION | cut -c1", "bash")).stdout).toMatch(/^\d\n$/);
  });

  it("runCode python keeps no state between calls and applies env", async () => {
    const sandbox = await open();
    await sandbox.runCode("leaked = 1", "python");
    const next = await sandbox.runCode("print('leaked' in globals())", "python");
    expect(next.stdout).toBe("False\n");
    const env = await sandbox.runCode("import os\nprint(os.environ['ONLY_HERE'])", "python", {
      env: { ONLY_HERE: "yes" },
    });
    expect(env.stdout).toBe("yes\n");
    expect(fake.sandboxes.get(sandbox.id)!.execd.contexts.size).toBe(0);
  });

  it("the official SDK drives the fake: create, commands, files, renew, kill", async () => {
    const { Sandbox } = await import("@alibaba-group/opensandbox");
    const sbx = await Sandbox.create({
      connectionConfig: { domain: fake.domain, disableMetrics: true },
      image: "python:3.12",
      timeoutSeconds: 600,
      readyTimeoutSeconds: 20,
    });
    try {
      expect(fake.sandboxes.get(sbx.id)?.image).toEqual({ uri: "python:3.12" });
      expect(await sbx.getEndpointUrl(44772)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/proxy\/44772$/);

      const failed = await sbx.commands.run("printf 'a\\nb\\n'; echo e >&2; exit 3", {
        workingDirectory: "/workspace",
      });
      expect(failed.exitCode).toBe(3);
      expect(failed.logs.stdout.map((m) => m.text)).toEqual(["a", "b"]);
      expect(failed.logs.stderr.map((m) => m.text)).toEqual(["e"]);
      expect(failed.error).toMatchObject({
        name: "CommandExecError",
        value: "3",
        traceback: ["exit status 3"],
      });
      expect(failed.complete).toBeUndefined();

      const ok = await sbx.commands.run("echo hi; pwd", { workingDirectory: "/workspace", envs: { X: "1" } });
      expect(ok.exitCode).toBe(0);
      expect(ok.logs.stdout.map((m) => m.text)).toEqual(["hi", "/workspace"]);
      expect(ok.complete?.executionTimeMs).toBeGreaterThanOrEqual(0);
      expect(ok.id).toMatch(/^[0-9a-f-]{36}$/);

      await sbx.files.writeFiles([{ path: "/workspace/sdk/file.txt", data: "from the sdk" }]);
      expect(await sbx.files.readFile("/workspace/sdk/file.txt")).toBe("from the sdk");
      const info = await sbx.files.getFileInfo(["/workspace/sdk/file.txt"]);
      expect(info["/workspace/sdk/file.txt"]).toMatchObject({ type: "file", size: 12 });
      expect(String(info["/workspace/sdk/file.txt"]!.mode)).toMatch(/^[0-7]{3}$/);
      expect((await sbx.files.search({ path: "/workspace", pattern: "*.txt" })).map((f) => f.path)).toEqual([
        "/workspace/sdk/file.txt",
      ]);
      expect((await sbx.files.listDirectory({ path: "/workspace" })).map((f) => [f.path, f.type])).toEqual([
        ["/workspace/sdk", "directory"],
      ]);

      const bg = await sbx.commands.run(
        "while [ ! -e /workspace/go ]; do sleep 0.05; done; echo background",
        {
          background: true,
        },
      );
      expect(bg.id).toBeTruthy();
      expect((await sbx.commands.getCommandStatus(bg.id!)).running).toBe(true);
      await sbx.files.writeFiles([{ path: "/workspace/go", data: "" }]);
      let status = await sbx.commands.getCommandStatus(bg.id!);
      for (let i = 0; i < 60 && status.running; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = await sbx.commands.getCommandStatus(bg.id!);
      }
      expect(status).toMatchObject({ running: false, exitCode: 0 });
      const logs = await sbx.commands.getBackgroundCommandLogs(bg.id!, 0);
      expect(logs).toEqual({ content: "background\n", cursor: 1 });

      let initId: string | undefined;
      const long = sbx.commands.run("sleep 30", undefined, {
        onInit: (init) => {
          initId = init.id;
        },
      });
      while (!initId) await new Promise((resolve) => setTimeout(resolve, 20));
      await sbx.commands.interrupt(initId);
      const interrupted = await long;
      expect(interrupted.error?.value).toBe("-1");
      expect(interrupted.exitCode).toBe(-1);

      const before = fake.sandboxes.get(sbx.id)!.expiresAt!.getTime();
      await sbx.renew(1200);
      expect(fake.sandboxes.get(sbx.id)!.expiresAt!.getTime()).toBeGreaterThan(before);
      expect((await sbx.getInfo()).status.state).toBe("Running");
    } finally {
      await sbx.kill();
      await sbx.close();
    }
    expect(fake.sandboxes.has(sbx.id)).toBe(false);
  });
});
