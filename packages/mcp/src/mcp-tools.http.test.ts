import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Agent, ScriptedProvider, Session, type ToolContext, type ToolResultChunk } from "@openrath/core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type McpToolset, mcpTools } from "./index.js";
import { EVERYTHING_BIN, freePort, LOOPBACK_PRELOAD } from "./test-fixtures/servers.js";

const context = (): ToolContext => ({
  session: Session.empty(),
  agent: "test",
  callId: "call_test",
  signal: new AbortController().signal,
  sandbox: () => Promise.reject(new Error("no sandbox")),
  emit: () => {},
});

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
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

/** server-everything in its Streamable HTTP mode on 127.0.0.1:`port`; resolves once it listens. */
async function startEverything(port: number): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, ["--import", LOOPBACK_PRELOAD, EVERYTHING_BIN, "streamableHttp"], {
    env: { PATH: process.env.PATH ?? "", PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => {
    output += d;
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${output}`)), 20_000);
    child.stderr!.on("data", (d) => {
      output += d;
      if (output.includes("listening on port")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited with ${code}: ${output}`));
    });
  });
  return { child, output: () => output };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

const sessionsStarted = (output: string) => output.split("Session initialized with ID").length - 1;

describe("mcpTools over Streamable HTTP: server-everything streamableHttp", () => {
  let port: number;
  let server: Awaited<ReturnType<typeof startEverything>>;
  let set: McpToolset;

  beforeAll(async () => {
    port = await freePort();
    server = await startEverything(port);
    set = await mcpTools({ url: `http://127.0.0.1:${port}/mcp` });
  });
  afterAll(async () => {
    await set?.close();
    if (server) await stop(server.child);
  });

  it("lists tools and calls them over { url }", async () => {
    expect(set.server).toMatchObject({ name: "mcp-servers/everything", transport: "http", pid: undefined });
    expect(set.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "get-sum"]));
    expect(await toolOf(set, "echo").execute({ message: "over http" }, context())).toEqual({
      text: "Echo: over http",
    });
    expect(
      await toolOf(set, "get-structured-content").execute({ location: "New York" }, context()),
    ).toMatchObject({
      structured: { temperature: 33, conditions: "Cloudy", humidity: 82 },
    });
  });

  it("runs an agent's calls across two sessions on one MCP session", async () => {
    const script = (n: number) =>
      new ScriptedProvider([
        {
          toolCalls: [
            { name: "get-sum", arguments: { a: n, b: n } },
            { name: "echo", arguments: { message: `#${n}` } },
          ],
        },
        { text: `done ${n}` },
      ]);
    for (const n of [1, 2]) {
      const out = await new Agent({ name: "a", provider: script(n), tools: set.tools }).run(
        Session.fromUserMessage(`session ${n}`),
      );
      const results = out.chunks.filter((c): c is ToolResultChunk => c.kind === "tool_result");
      expect(results.map((r) => JSON.parse(r.content).text)).toEqual([
        `The sum of ${n} and ${n} is ${2 * n}.`,
        `Echo: #${n}`,
      ]);
    }
    expect(sessionsStarted(server.output())).toBe(1);
    expect(set.server.connections).toBe(1);
  });

  it("starts a new MCP session and resends the call when the server forgot the old one", async () => {
    await stop(server.child);
    server = await startEverything(port);
    expect(await toolOf(set, "echo").execute({ message: "after restart" }, context())).toEqual({
      text: "Echo: after restart",
    });
    expect(set.server.connections).toBe(2);
    expect(sessionsStarted(server.output())).toBe(1);
  });

  it("gives mcp_server_exited when the server dies mid-call, then reconnects to its replacement", async () => {
    const call = errorOf(
      toolOf(set, "trigger-long-running-operation").execute({ duration: 5, steps: 5 }, context()),
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    const started = Date.now();
    await stop(server.child);
    const error = await call;
    expect(error).toMatchObject({ code: "mcp_server_exited" });
    expect(Date.now() - started).toBeLessThan(3000);
    server = await startEverything(port);
    expect(await toolOf(set, "echo").execute({ message: "back" }, context())).toEqual({ text: "Echo: back" });
  });

  it("gives mcp_connect_failed when the server is gone for good", async () => {
    await stop(server.child);
    await expect(toolOf(set, "echo").execute({ message: "anyone?" }, context())).rejects.toMatchObject({
      code: "mcp_connect_failed",
    });
    server = await startEverything(port);
  });
});

describe("Streamable HTTP headers", () => {
  let http: ReturnType<typeof createServer> | undefined;
  afterEach(() => new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve())));

  it("sends the given headers with every request", async () => {
    const seen: Record<string, string | string[] | undefined>[] = [];
    http = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(503).end("not today");
    });
    await new Promise<void>((resolve) => http!.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as AddressInfo;
    const error = await mcpTools({
      url: `http://127.0.0.1:${port}/mcp`,
      headers: { Authorization: "Bearer t0ken", "X-Tenant": "acme" },
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "mcp_connect_failed", message: expect.stringContaining("503") });
    expect(seen[0]).toMatchObject({ authorization: "Bearer t0ken", "x-tenant": "acme" });
  });
});

describe("Streamable HTTP session loss without a dropped stream", () => {
  // An in-process server with no standalone GET stream (405) that can forget its sessions, so the
  // only sign of the loss is the 404 the next call gets: the call was refused, not run.
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let calls = 0;
  let http: ReturnType<typeof createServer>;
  let url: string;

  function mcpServer(): Server {
    const server = new Server({ name: "forgetful", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        { name: "count", inputSchema: { type: "object" as const } },
        { name: "forget", inputSchema: { type: "object" as const } },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      if (request.params.name === "forget") {
        setImmediate(() => sessions.clear());
        return { content: [{ type: "text", text: "forgotten" }] };
      }
      calls++;
      return { content: [{ type: "text", text: `call ${calls}` }] };
    });
    return server;
  }

  beforeAll(async () => {
    http = createServer(async (req, res) => {
      if (req.method === "GET") {
        res.writeHead(405).end();
        return;
      }
      const id = req.headers["mcp-session-id"];
      if (typeof id === "string") {
        const transport = sessions.get(id);
        if (!transport) {
          res.writeHead(404, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              jsonrpc: "2.0",
              error: { code: -32001, message: "Session not found" },
              id: null,
            }),
          );
          return;
        }
        await transport.handleRequest(req, res);
        return;
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          sessions.set(sid, transport);
        },
      });
      await mcpServer().connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });
  afterAll(() => {
    http.closeAllConnections();
    return new Promise<void>((resolve) => http.close(() => resolve()));
  });

  it("reconnects and sends the refused call once more, so it runs exactly once", async () => {
    const set = await mcpTools({ url });
    try {
      expect(await toolOf(set, "count").execute({}, context())).toEqual({ text: "call 1" });
      expect(await toolOf(set, "forget").execute({}, context())).toEqual({ text: "forgotten" });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await toolOf(set, "count").execute({}, context())).toEqual({ text: "call 2" });
      expect(set.server.connections).toBe(2);
      expect(calls).toBe(2);
    } finally {
      await set.close();
    }
  });
});
