import { request } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  Agent,
  type RunOptions,
  ScriptedProvider,
  type Session,
  Session as Sessions,
  type ToolResultChunk,
  Workflow,
} from "@openrath/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpWorkflowServer, mcpTools, serveWorkflowAsMcp } from "./index.js";
import { PACKAGE_DIR, tsxArgs } from "./test-fixtures/servers.js";

/** A provider that answers "<name> answers: <last user message>", or fails on "fail". */
const echoing = (name: string) =>
  new ScriptedProvider((req) => {
    const last = [...req.messages].reverse().find((m) => m.role === "user");
    const text = String(last?.content ?? "");
    if (text === "fail") return { error: { code: "provider_bad_request", message: "the model refused" } };
    return { text: `${name} answers: ${text}`, usage: { promptTokens: 7, completionTokens: 3 } };
  });

class Desk extends Workflow {
  helper = new Agent({ name: "helper", provider: echoing("helper"), description: "Answers questions." });
  reviewer = new Agent({ name: "reviewer", provider: echoing("reviewer") });
  async forward(session: Session, options: RunOptions): Promise<Session> {
    return this.helper.run(session, options);
  }
}

const structuredShape = {
  sessionId: expect.any(String),
  usage: { promptTokens: 7, completionTokens: 3, totalTokens: 10 },
  chunks: 2,
};

async function httpClient(url: string): Promise<Client> {
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

describe("serveWorkflowAsMcp over Streamable HTTP", () => {
  let served: McpWorkflowServer;

  beforeAll(async () => {
    served = await serveWorkflowAsMcp(new Desk({ name: "desk", description: "The help desk." }), {
      agents: true,
      version: "2.0.0",
      transport: { port: 0 },
    });
  });
  afterAll(() => served?.close());

  it("listens on 127.0.0.1 and lists the workflow and its agents as tools", async () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(served.tools).toEqual(["desk", "helper", "reviewer"]);
    const client = await httpClient(served.url!);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: "desk", version: "2.0.0" });
      const { tools } = await client.listTools();
      expect(tools.map((t) => [t.name, t.description])).toEqual([
        ["desk", "The help desk."],
        ["helper", "Answers questions."],
        ["reviewer", expect.stringContaining('agent "reviewer"')],
      ]);
      expect(tools[0]!.inputSchema).toMatchObject({ type: "object", required: ["message"] });
    } finally {
      await client.close();
    }
  });

  it("runs the workflow on the message and returns the answer with structured content", async () => {
    const client = await httpClient(served.url!);
    try {
      const progress: string[] = [];
      const result = await client.callTool(
        { name: "desk", arguments: { message: "Where is room 4?" } },
        undefined,
        {
          onprogress: (p) => progress.push(String(p.message)),
        },
      );
      expect(result.isError).toBeFalsy();
      expect(result.content).toEqual([{ type: "text", text: "helper answers: Where is room 4?" }]);
      expect(result.structuredContent).toMatchObject(structuredShape);
      expect(progress).toContain("helper: turn 1");

      const agentOnly = await client.callTool({ name: "reviewer", arguments: { message: "Check this" } });
      expect(agentOnly.content).toEqual([{ type: "text", text: "reviewer answers: Check this" }]);
    } finally {
      await client.close();
    }
  });

  it("answers bad arguments and failed runs with isError results, unknown tools with a JSON-RPC error", async () => {
    const client = await httpClient(served.url!);
    try {
      const bad = await client.callTool({ name: "desk", arguments: { text: "no message" } });
      expect(bad).toMatchObject({
        isError: true,
        content: [{ type: "text", text: expect.stringContaining("message") }],
      });
      const failed = await client.callTool({ name: "desk", arguments: { message: "fail" } });
      expect(failed).toMatchObject({
        isError: true,
        content: [{ type: "text", text: expect.stringContaining("the model refused") }],
      });
      const unknown = await client
        .callTool({ name: "nope", arguments: { message: "x" } })
        .catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(McpError);
      expect((unknown as McpError).code).toBe(-32602);
    } finally {
      await client.close();
    }
  });

  it("refuses requests whose Host is not loopback (DNS rebinding)", async () => {
    const { port } = new URL(served.url!);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", port, path: "/mcp", method: "POST", headers: { host: "evil.example" } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end("{}");
    });
    expect(status).toBe(403);
  });

  it("lets mcpTools call it: OpenRath calling OpenRath", async () => {
    const remote = await mcpTools({ url: served.url! }, { include: ["desk"] });
    try {
      expect(remote.server).toMatchObject({ name: "desk", serverVersion: "2.0.0", transport: "http" });
      expect(remote.tools.map((t) => t.name)).toEqual(["desk"]);
      const provider = new ScriptedProvider([
        { toolCalls: [{ name: "desk", arguments: { message: "Is the desk open?" } }] },
        { toolCalls: [{ name: "desk", arguments: { message: "fail" } }] },
        { text: "The desk says it is." },
      ]);
      const outer = new Agent({ name: "outer", provider, tools: remote.tools });
      const out = await outer.run(Sessions.fromUserMessage("Ask the desk"));
      const [ok, failed] = out.chunks.filter((c): c is ToolResultChunk => c.kind === "tool_result");
      expect(JSON.parse(ok!.content)).toEqual({
        text: "helper answers: Is the desk open?",
        structured: structuredShape,
      });
      expect(failed!.isError).toBe(true);
      expect(JSON.parse(failed!.content)).toMatchObject({
        error_kind: "mcp_tool_error",
        message: expect.stringContaining("the model refused"),
      });
      expect(out.text()).toBe("The desk says it is.");
    } finally {
      await remote.close();
    }
  });

  it("stops listening on close()", async () => {
    const other = await serveWorkflowAsMcp(new Desk({ name: "closing" }), { transport: { port: 0 } });
    const client = await httpClient(other.url!);
    await other.close();
    await other.closed;
    await expect(fetch(other.url!, { method: "POST", body: "{}" })).rejects.toThrow();
    await client.close();
  });

  it("refuses hosts other than 127.0.0.1 and bad ports", async () => {
    const desk = new Desk();
    await expect(
      serveWorkflowAsMcp(desk, { transport: { port: 0, host: "0.0.0.0" as "127.0.0.1" } }),
    ).rejects.toMatchObject({ code: "invalid_argument" });
    await expect(serveWorkflowAsMcp(desk, { transport: { port: -1 } })).rejects.toMatchObject({
      code: "invalid_argument",
    });
  });
});

describe("serveWorkflowAsMcp over stdio (a tsx script)", () => {
  const spawnSpec = { command: process.execPath, args: tsxArgs("serve-workflow.ts"), cwd: PACKAGE_DIR };

  it("answers the SDK's Client", async () => {
    const transport = new StdioClientTransport({ ...spawnSpec, stderr: "pipe" });
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: "desk", version: "9.9.9" });
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["desk", "helper"]);
      const result = await client.callTool({ name: "desk", arguments: { message: "hello over stdio" } });
      expect(result.content).toEqual([{ type: "text", text: "helper answers: hello over stdio" }]);
      expect(result.structuredContent).toMatchObject(structuredShape);
    } finally {
      await client.close();
    }
  });

  it("is usable through mcpTools by an agent, and exits when the toolset closes", async () => {
    const remote = await mcpTools(spawnSpec, { prefix: "remote" });
    const pid = remote.server.pid!;
    try {
      expect(remote.tools.map((t) => t.name)).toEqual(["remote_desk", "remote_helper"]);
      const provider = new ScriptedProvider([
        { toolCalls: [{ name: "remote_helper", arguments: { message: "ping" } }] },
        { text: "pong received" },
      ]);
      const out = await new Agent({ name: "outer", provider, tools: remote.tools }).run(
        Sessions.fromUserMessage("ping the helper"),
      );
      const result = out.chunks.find((c): c is ToolResultChunk => c.kind === "tool_result")!;
      expect(JSON.parse(result.content)).toEqual({
        text: "helper answers: ping",
        structured: structuredShape,
      });
    } finally {
      const started = Date.now();
      await remote.close();
      // The server exits on end of stdin, well before the SDK's 2 s SIGTERM fallback.
      expect(Date.now() - started).toBeLessThan(1500);
    }
    expect(() => process.kill(pid, 0)).toThrow();
  });
});
