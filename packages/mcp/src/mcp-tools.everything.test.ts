import {
  Agent,
  type JsonValue,
  OpenRathError,
  type RunEvent,
  ScriptedProvider,
  Session,
  type ToolContext,
  type ToolResultChunk,
} from "@openrath/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpToolError, type McpToolset, mcpTools } from "./index.js";
import {
  canCountProcesses,
  childProcesses,
  EVERYTHING_BIN,
  PACKAGE_DIR,
  tsxArgs,
} from "./test-fixtures/servers.js";

const everything = { command: process.execPath, args: [EVERYTHING_BIN, "stdio"] };
/** The command line of the stdio server-everything processes this file starts. */
const EVERYTHING_STDIO = `${EVERYTHING_BIN} stdio`;

function context(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    session: Session.empty(),
    agent: "test",
    callId: "call_test",
    signal: new AbortController().signal,
    sandbox: () => Promise.reject(new Error("no sandbox")),
    emit: () => {},
    ...overrides,
  };
}

/** The error a call fails with (a tool's execute may return a value or a promise). */
async function errorOf(result: unknown): Promise<unknown> {
  try {
    await result;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to fail");
}

function toolOf(set: McpToolset, name: string) {
  const found = set.tools.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name} in ${set.tools.map((t) => t.name).join(", ")}`);
  return found;
}

const results = (session: Session) =>
  session.chunks.filter((c): c is ToolResultChunk => c.kind === "tool_result");

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("mcpTools over stdio: @modelcontextprotocol/server-everything", () => {
  let set: McpToolset;

  beforeAll(async () => {
    set = await mcpTools(everything);
  });
  afterAll(() => set?.close());

  it("reports the server and lists its tools with their schemas", () => {
    expect(set.server).toMatchObject({
      name: "mcp-servers/everything",
      serverName: "mcp-servers/everything",
      transport: "stdio",
      connections: 1,
    });
    expect(set.server.instructions).toBeTypeOf("string");
    const names = set.tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "echo",
        "get-sum",
        "get-tiny-image",
        "get-structured-content",
        "get-resource-links",
      ]),
    );
    expect(toolOf(set, "echo").parameters).toMatchObject({
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    });
    // A tool declared with no arguments still gets an object schema.
    expect(toolOf(set, "get-tiny-image").parameters).toEqual({ type: "object", properties: {} });
  });

  it("maps text results to { text } and keeps structured content as { structured }", async () => {
    expect(await toolOf(set, "echo").execute({ message: "héllo" }, context())).toEqual({
      text: "Echo: héllo",
    });
    expect(await toolOf(set, "get-sum").execute({ a: 2, b: 40 }, context())).toEqual({
      text: "The sum of 2 and 40 is 42.",
    });
    const weather = await toolOf(set, "get-structured-content").execute({ location: "Chicago" }, context());
    expect(weather).toEqual({
      text: JSON.stringify({ temperature: 36, conditions: "Light rain / drizzle", humidity: 82 }),
      structured: { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 },
    });
  });

  it("describes images, resources and resource links without their base64 data", async () => {
    const image = await toolOf(set, "get-tiny-image").execute({}, context());
    expect(image).toMatchObject({
      text: expect.stringContaining("image"),
      content: [{ type: "image", mimeType: "image/png", size: expect.any(Number), note: expect.any(String) }],
    });
    const json = JSON.stringify(image);
    expect(json.length).toBeLessThan(1000);
    expect(json).not.toMatch(/iVBORw0KGgo/); // the PNG signature in base64

    const links = await toolOf(set, "get-resource-links").execute({ count: 2 }, context());
    expect(links).toMatchObject({
      content: [
        { type: "resource_link", uri: expect.stringMatching(/^demo:\/\//), name: expect.any(String) },
        { type: "resource_link", uri: expect.stringMatching(/^demo:\/\//) },
      ],
    });

    const blob = await toolOf(set, "get-resource-reference").execute(
      { resourceType: "Blob", resourceId: 2 },
      context(),
    );
    expect(blob).toMatchObject({
      content: [{ type: "resource", uri: "demo://resource/dynamic/blob/2", size: expect.any(Number) }],
    });
    expect(JSON.stringify(blob)).toContain("binary data omitted");
    const text = await toolOf(set, "get-resource-reference").execute(
      { resourceType: "Text", resourceId: 1 },
      context(),
    );
    expect(text).toMatchObject({
      content: [{ type: "resource", uri: "demo://resource/dynamic/text/1", text: expect.any(String) }],
    });
  });

  it("records an isError result as a structured mcp_tool_error result in the transcript", async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "get-resource-reference", arguments: { resourceId: 0 } }] },
      { toolCalls: [{ name: "echo", arguments: { message: "still here" } }] },
      { text: "done" },
    ]);
    const out = await new Agent({ name: "a", provider, tools: set.tools }).run(Session.fromUserMessage("go"));
    const [failed, echoed] = results(out);
    expect(failed!.isError).toBe(true);
    expect(JSON.parse(failed!.content)).toEqual({
      ok: false,
      error_kind: "mcp_tool_error",
      message: "Invalid resourceId: 0. Must be a finite positive integer.",
      detail: JSON.stringify({ server: "mcp-servers/everything", tool: "get-resource-reference" }),
    });
    expect(JSON.parse(echoed!.content)).toEqual({ text: "Echo: still here" });
    expect(out.text()).toBe("done");
  });

  it("forwards the server's progress notifications as tool_progress events", async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "trigger-long-running-operation", arguments: { duration: 0.6, steps: 3 } }] },
      { text: "finished" },
    ]);
    const events: RunEvent[] = [];
    const out = await new Agent({ name: "a", provider, tools: set.tools }).run(
      Session.fromUserMessage("go"),
      {
        onEvent: (e) => events.push(e),
      },
    );
    const progress = events
      .filter((e) => e.type === "tool_progress")
      .map((e) => (e as { data: JsonValue }).data);
    // The last notification races the result (the SDK settles the call first), so it may not show.
    expect(progress.slice(0, 2)).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
    ]);
    expect(JSON.parse(results(out)[0]!.content)).toEqual({
      text: "Long running operation completed. Duration: 0.6 seconds, Steps: 3.",
    });
  });

  it("puts every call to one server in one lane by default", () => {
    const echo = toolOf(set, "echo");
    expect(echo.resourceKey({ message: "a" })).toBe("mcp:mcp-servers/everything");
    expect(toolOf(set, "get-sum").resourceKey({ a: 1, b: 2 })).toBe("mcp:mcp-servers/everything");
  });

  it("re-lists the tools on refresh()", async () => {
    const before = set.tools;
    const after = await set.refresh();
    expect(after).toBe(set.tools);
    expect(after).not.toBe(before);
    expect(after.map((t) => t.name).sort()).toEqual(before.map((t) => t.name).sort());
  });
});

describe("one connection per server", () => {
  it.skipIf(!canCountProcesses())(
    "serves many calls across two sessions and two agents from one server process",
    async () => {
      const set = await mcpTools(everything, { name: "shared" });
      try {
        const pid = set.server.pid!;
        expect(childProcesses(EVERYTHING_STDIO)).toEqual([pid]);
        const script = (n: number) =>
          new ScriptedProvider([
            {
              toolCalls: [
                { name: "echo", arguments: { message: `one ${n}` } },
                { name: "get-sum", arguments: { a: n, b: 1 } },
                { name: "echo", arguments: { message: `two ${n}` } },
              ],
            },
            { toolCalls: [{ name: "get-sum", arguments: { a: n, b: 2 } }] },
            { text: `answer ${n}` },
          ]);
        const first = await new Agent({ name: "first", provider: script(1), tools: set.tools }).run(
          Session.fromUserMessage("session one"),
        );
        const second = await new Agent({ name: "second", provider: script(2), tools: set.tools }).run(
          Session.fromUserMessage("session two"),
        );
        expect(first.id).not.toBe(second.id);
        expect(results(first).map((r) => JSON.parse(r.content).text)).toEqual([
          "Echo: one 1",
          "The sum of 1 and 1 is 2.",
          "Echo: two 1",
          "The sum of 1 and 2 is 3.",
        ]);
        expect(results(second).every((r) => !r.isError)).toBe(true);
        expect(set.server.connections).toBe(1);
        expect(set.server.pid).toBe(pid);
        expect(childProcesses(EVERYTHING_STDIO)).toEqual([pid]);
      } finally {
        await set.close();
      }
      expect(childProcesses(EVERYTHING_STDIO)).toEqual([]);
    },
  );

  it("gives each call its own lane with parallel: true, and runs them at once on the one connection", async () => {
    const set = await mcpTools(everything, { parallel: true });
    try {
      const op = toolOf(set, "trigger-long-running-operation");
      const keys = new Set([op.resourceKey({}), op.resourceKey({}), toolOf(set, "echo").resourceKey({})]);
      expect(keys.size).toBe(3);
      const provider = new ScriptedProvider([
        {
          toolCalls: [
            { name: "trigger-long-running-operation", arguments: { duration: 1, steps: 1 } },
            { name: "trigger-long-running-operation", arguments: { duration: 1, steps: 1 } },
            { name: "trigger-long-running-operation", arguments: { duration: 1, steps: 1 } },
          ],
        },
        { text: "ok" },
      ]);
      const started = Date.now();
      const out = await new Agent({ name: "a", provider, tools: set.tools }).run(
        Session.fromUserMessage("go"),
      );
      const elapsed = Date.now() - started;
      expect(results(out).every((r) => !r.isError)).toBe(true);
      // Three 1 s calls in one lane would take 3 s at least.
      expect(elapsed).toBeLessThan(2500);
      expect(set.server.connections).toBe(1);
    } finally {
      await set.close();
    }
  });
});

describe("failures", () => {
  it("gives mcp_server_exited when the server is killed mid-call, and the next call reconnects", async () => {
    const set = await mcpTools(everything);
    try {
      const firstPid = set.server.pid!;
      const provider = new ScriptedProvider([
        { toolCalls: [{ name: "trigger-long-running-operation", arguments: { duration: 5, steps: 5 } }] },
        { toolCalls: [{ name: "echo", arguments: { message: "after the crash" } }] },
        { text: "recovered" },
      ]);
      const agent = new Agent({ name: "a", provider, tools: set.tools });
      const out = await agent.run(Session.fromUserMessage("go"), {
        onEvent: (event) => {
          if (event.type === "tool_start" && event.name === "trigger-long-running-operation") {
            setTimeout(() => process.kill(firstPid, "SIGKILL"), 300);
          }
        },
      });
      const [killed, echoed] = results(out);
      expect(killed!.isError).toBe(true);
      const error = JSON.parse(killed!.content);
      expect(error).toMatchObject({ ok: false, error_kind: "mcp_server_exited" });
      expect(error.message).toContain("SIGKILL");
      expect(JSON.parse(echoed!.content)).toEqual({ text: "Echo: after the crash" });
      expect(out.text()).toBe("recovered");
      expect(set.server.connections).toBe(2);
      expect(set.server.pid).not.toBe(firstPid);
      expect(alive(firstPid)).toBe(false);
    } finally {
      await set.close();
    }
  });

  it("reconnects and sends a call that finds the server already gone", async () => {
    const set = await mcpTools(everything);
    try {
      const firstPid = set.server.pid!;
      process.kill(firstPid, "SIGKILL");
      await waitFor(() => set.server.pid === undefined);
      expect(await toolOf(set, "echo").execute({ message: "again" }, context())).toEqual({
        text: "Echo: again",
      });
      expect(set.server.connections).toBe(2);
    } finally {
      await set.close();
    }
  });

  it("times a slow call out with mcp_timeout and keeps the connection", async () => {
    const set = await mcpTools(everything, { timeoutMs: 1000 });
    try {
      const pid = set.server.pid;
      await expect(
        toolOf(set, "trigger-long-running-operation").execute({ duration: 5, steps: 1 }, context()),
      ).rejects.toMatchObject({ code: "mcp_timeout", message: expect.stringContaining("1000 ms") });
      expect(await toolOf(set, "echo").execute({ message: "quick" }, context())).toEqual({
        text: "Echo: quick",
      });
      expect(set.server.pid).toBe(pid);
      expect(set.server.connections).toBe(1);
    } finally {
      await set.close();
    }
  });

  it("cancels the call when the run is aborted", async () => {
    const set = await mcpTools(everything);
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      const started = Date.now();
      await expect(
        toolOf(set, "trigger-long-running-operation").execute(
          { duration: 5, steps: 1 },
          context({ signal: controller.signal }),
        ),
      ).rejects.toMatchObject({ code: "aborted" });
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await set.close();
    }
  });

  it("fails calls after close() with mcp_closed, and stops the server process", async () => {
    const set = await mcpTools(everything);
    const pid = set.server.pid!;
    await set[Symbol.asyncDispose]();
    expect(alive(pid)).toBe(false);
    const error = await errorOf(toolOf(set, "echo").execute({ message: "late" }, context()));
    expect(error).toBeInstanceOf(McpToolError);
    expect(error).toMatchObject({ code: "mcp_closed" });
    await set.close(); // twice is fine
  });

  it("refuses include names the server does not have, listing those it has", async () => {
    const error = await mcpTools(everything, { include: ["echo", "nope"] }).catch((e: unknown) => e);
    expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
    expect((error as Error).message).toMatch(/does not have: nope\. It has: .*get-sum/);
    expect(childProcesses(EVERYTHING_STDIO)).toEqual([]);
  });

  it("reports a server that cannot start as mcp_connect_failed, with its stderr", async () => {
    const missing = await mcpTools({ command: "/nonexistent/mcp-server" }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: "mcp_connect_failed" });
    expect((missing as Error).message).toContain("/nonexistent/mcp-server");

    const dies = await mcpTools({
      command: process.execPath,
      args: ["-e", "process.stderr.write('config file missing\\n'); process.exit(2)"],
    }).catch((e: unknown) => e);
    expect(dies).toMatchObject({ code: "mcp_connect_failed" });
    expect((dies as Error).message).toContain("config file missing");
  });

  it("refuses bad server specs and options", async () => {
    await expect(mcpTools({ command: "" })).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(mcpTools({ url: "not a url" })).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(mcpTools({ url: "ftp://127.0.0.1/mcp" })).rejects.toMatchObject({
      code: "invalid_argument",
    });
    await expect(mcpTools(everything, { timeoutMs: 0 })).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(mcpTools(everything, { connectTimeoutMs: -1 })).rejects.toMatchObject({
      code: "invalid_argument",
    });
    await expect(mcpTools({ command: "node", arg: ["x"] } as never)).rejects.toThrow(
      'Invalid server of mcpTools(): "arg" is ["x"]; it is not a field of the server; the fields are command, args, env, cwd, stderr.',
    );
    const leaked = await mcpTools({ command: "", env: { API_TOKEN: 7 as never } }).catch((e: unknown) => e);
    expect(String(leaked)).toMatch(/"env.API_TOKEN" is given \(not shown/);
    await expect(mcpTools(everything, { prefx: "fs" } as never)).rejects.toThrow(
      /"prefx" .*the fields are prefix, include,/,
    );
  });
});

describe("a paginating server with awkward tool names (SDK fixture)", () => {
  const fixture = { command: process.execPath, args: tsxArgs("paginated-server.ts"), cwd: PACKAGE_DIR };
  let set: McpToolset;

  beforeAll(async () => {
    set = await mcpTools(fixture, { prefix: "paged" });
  });
  afterAll(() => set?.close());

  it("follows nextCursor through every page", async () => {
    expect(set.tools.map((t) => t.name)).toEqual([
      "paged_alpha",
      "paged_files_read_v2",
      "paged_gamma",
      "paged_crash",
      "paged_grow",
      "paged_slow",
    ]);
    // Three pages of two: three tools/list calls so far.
    expect(await toolOf(set, "paged_alpha").execute({}, context())).toMatchObject({
      text: expect.stringContaining("list calls 3"),
    });
  });

  it("sanitizes names, calls tools by their MCP name and drops $schema", async () => {
    const read = toolOf(set, "paged_files_read_v2");
    expect(read.parameters).toEqual({
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
    });
    expect(await read.execute({ path: "a.txt" }, context())).toEqual({ text: "read a.txt" });
    expect(toolOf(set, "paged_alpha").parameters).toEqual({ type: "object", properties: {} });
  });

  it("reports a server crashing during a call with its exit code and stderr, then reconnects", async () => {
    const error = await errorOf(toolOf(set, "paged_crash").execute({}, context()));
    expect(error).toMatchObject({ code: "mcp_server_exited" });
    expect((error as Error).message).toContain("exit code 3");
    expect((error as Error).message).toContain("crashing on purpose");
    expect(await toolOf(set, "paged_gamma").execute({}, context())).toMatchObject({
      text: expect.stringContaining("gamma"),
    });
    expect(set.server.connections).toBe(2);
  });

  it("refreshes its tools when the server announces a changed list", async () => {
    const before = set.tools;
    expect(await toolOf(set, "paged_grow").execute({}, context())).toEqual({ text: "grew" });
    await waitFor(() => set.tools !== before);
    expect(set.tools.map((t) => t.name)).toContain("paged_grown");
    expect(await toolOf(set, "paged_grown").execute({}, context())).toMatchObject({
      text: expect.stringContaining("grown"),
    });
    // Tools handed out before the change keep working.
    expect(await before.find((t) => t.name === "paged_gamma")!.execute({}, context())).toMatchObject({
      text: expect.stringContaining("gamma"),
    });
  });

  it("keeps only included tools", async () => {
    const only = await mcpTools(fixture, { include: ["files.read v2", "gamma"] });
    try {
      expect(only.tools.map((t) => t.name)).toEqual(["files_read_v2", "gamma"]);
      expect(only.server.name).toBe("paged-fixture");
    } finally {
      await only.close();
    }
  });
});
