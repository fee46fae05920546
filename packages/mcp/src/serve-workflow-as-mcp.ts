import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  isInitializeRequest,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { Agent, OpenRathError, type RunEvent, type Runnable, Session } from "@openrath/core";
import { checkOptions } from "@openrath/core/backend";
import { type GuardSettings, guardRequest, guardSettings } from "./internal/http-guard.js";
import { ServeWorkflowOptionsSchema } from "./internal/schemas.js";
import { exposedToolNames } from "./internal/tool-names.js";

/** Options of {@link serveWorkflowAsMcp}. */
export interface ServeWorkflowOptions {
  /** Server name, and the workflow tool's name (default: the workflow's name). */
  readonly name?: string;
  /** Server version reported to clients (default `"0.1.0"`). */
  readonly version?: string;
  /** Also expose every agent among `workflow.modules()` as a tool of its own (default `false`). */
  readonly agents?: boolean;
  /**
   * `"stdio"` (default): MCP on this process's stdin/stdout (write logs to stderr only).
   * `{ port }`: Streamable HTTP at `http://127.0.0.1:<port>/mcp`; port 0 picks a free one.
   * Only loopback is offered: put a proxy with authentication in front to serve further.
   */
  readonly transport?: "stdio" | McpHttpTransportOptions;
}

/** The Streamable HTTP transport of {@link serveWorkflowAsMcp}. */
export interface McpHttpTransportOptions {
  /** Port on 127.0.0.1; 0 picks a free one. */
  readonly port: number;
  /** Only `"127.0.0.1"` is offered. */
  readonly host?: "127.0.0.1";
  /**
   * Origins whose browser pages may call the server, such as `["http://localhost:5173"]`
   * (`scheme://host[:port]`). A request with an `Origin` header not listed is refused with 403
   * (DNS rebinding and cross-site protection, as the MCP specification requires); requests without
   * `Origin` (clients that are not browsers) are not affected. Default: none, so every browser
   * page is refused. Listed origins get CORS headers and an answer to their preflight.
   */
  readonly allowedOrigins?: readonly string[];
  /**
   * When set, every request must carry `Authorization: Bearer <token>` (compared in constant time),
   * else 401 with `WWW-Authenticate: Bearer`. At least 16 characters of RFC 6750 token syntax
   * (`A-Z a-z 0-9 - . _ ~ + /`, then `=` padding), such as `randomBytes(32).toString("base64url")`.
   * Default: none.
   */
  readonly bearerToken?: string;
}

/** A running MCP server made by {@link serveWorkflowAsMcp}. */
export interface McpWorkflowServer extends AsyncDisposable {
  /** The MCP endpoint for `{ url }` clients (HTTP only), such as `http://127.0.0.1:41234/mcp`. */
  readonly url: string | undefined;
  /** Names of the tools served: the workflow's first, then its agents'. */
  readonly tools: readonly string[];
  /** Resolves once the server has closed (for stdio: also when the client closes stdin). */
  readonly closed: Promise<void>;
  /** Stops serving: closes every MCP session (and the HTTP listener). */
  close(): Promise<void>;
}

/** The structured content of a served tool's result. */
export interface WorkflowToolOutput {
  /** Id of the session the run produced. */
  readonly sessionId: string;
  /** Token usage of the model calls in that session. */
  readonly usage: {
    readonly promptTokens: number;
    readonly completionTokens: number;
    readonly totalTokens: number;
    readonly cachedPromptTokens?: number;
  };
  /** Number of chunks in that session. */
  readonly chunks: number;
}

interface Entry {
  readonly name: string;
  readonly runnable: Runnable;
  readonly description: string;
}

const INPUT_SCHEMA = {
  type: "object" as const,
  properties: { message: { type: "string", description: "The user message to run on." } },
  required: ["message"],
  additionalProperties: false,
};

const OUTPUT_SCHEMA = {
  type: "object" as const,
  properties: {
    sessionId: { type: "string" },
    usage: {
      type: "object",
      properties: {
        promptTokens: { type: "number" },
        completionTokens: { type: "number" },
        totalTokens: { type: "number" },
        cachedPromptTokens: { type: "number" },
      },
      required: ["promptTokens", "completionTokens", "totalTokens"],
    },
    chunks: { type: "integer" },
  },
  required: ["sessionId", "usage", "chunks"],
};

const MAX_BODY_BYTES = 4 * 1024 * 1024;

function entriesOf(workflow: Runnable, options: ServeWorkflowOptions): Entry[] {
  const runnables: Runnable[] = [workflow];
  if (options.agents) {
    const modules = (workflow as { modules?: () => unknown[] }).modules?.() ?? [];
    for (const m of modules) if (m instanceof Agent && m !== workflow) runnables.push(m);
  }
  const raw = runnables.map((r, i) => (i === 0 ? (options.name ?? r.name) : r.name));
  const names = exposedToolNames(raw);
  return runnables.map((runnable, i) => ({
    name: names[i]!,
    runnable,
    description:
      runnable.description ||
      (i === 0
        ? `Runs the OpenRath workflow "${raw[i]}" on a user message and returns its final answer.`
        : `Runs the OpenRath agent "${raw[i]}" on a user message and returns its final answer.`),
  }));
}

function textResult(text: string, isError = false): CallToolResult {
  return { content: [{ type: "text", text }], ...(isError ? { isError: true } : {}) };
}

function describeEvent(event: RunEvent): string | undefined {
  switch (event.type) {
    case "turn_start":
      return `${event.agent}: turn ${event.turn}`;
    case "tool_start":
      return `${event.agent}: calling ${event.name}`;
    case "workflow_start":
      return `workflow ${event.path}`;
    default:
      return undefined;
  }
}

/** One MCP server (the SDK's low-level Server, for plain JSON Schemas) answering for the entries. */
function createMcpServer(entries: readonly Entry[], name: string, version: string): Server {
  // The low-level Server (marked deprecated in favour of McpServer, which wants zod schemas): our
  // schemas are plain JSON Schema, the "advanced use case" the SDK keeps Server for.
  const server = new Server({ name, version }, { capabilities: { tools: {} } });
  const byName = new Map(entries.map((e) => [e.name, e]));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: entries.map((e) => ({
      name: e.name,
      description: e.description,
      inputSchema: INPUT_SCHEMA,
      outputSchema: OUTPUT_SCHEMA,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const entry = byName.get(request.params.name);
    if (!entry) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool ${JSON.stringify(request.params.name)}; this server has: ${entries.map((e) => e.name).join(", ")}.`,
      );
    }
    const message = request.params.arguments?.message;
    if (typeof message !== "string") {
      return textResult(
        `Tool "${entry.name}" needs { "message": string } (the user message), got message = ${JSON.stringify(message) ?? "undefined"}.`,
        true,
      );
    }
    const progressToken = request.params._meta?.progressToken;
    let step = 0;
    const onEvent =
      progressToken === undefined
        ? undefined
        : (event: RunEvent) => {
            const text = describeEvent(event);
            if (text === undefined) return;
            void extra
              .sendNotification({
                method: "notifications/progress",
                params: { progressToken, progress: ++step, message: text },
              })
              .catch(() => {});
          };
    try {
      const out = await entry.runnable.run(Session.fromUserMessage(message), {
        signal: extra.signal,
        ...(onEvent ? { onEvent } : {}),
      });
      const usage = out.usage;
      const structured: WorkflowToolOutput = {
        sessionId: out.id,
        usage: {
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          totalTokens: usage.totalTokens,
          ...(usage.cachedPromptTokens !== undefined ? { cachedPromptTokens: usage.cachedPromptTokens } : {}),
        },
        chunks: out.length,
      };
      return {
        content: [{ type: "text", text: out.text() ?? "" }],
        structuredContent: structured as unknown as Record<string, unknown>,
      };
    } catch (error) {
      const code = OpenRathError.isInstance(error) ? ` (${error.code})` : "";
      return textResult(
        `"${entry.name}" failed${code}: ${error instanceof Error ? error.message : String(error)}`,
        true,
      );
    }
  });
  return server;
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error(`request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

async function serveStdio(
  entries: readonly Entry[],
  name: string,
  version: string,
): Promise<McpWorkflowServer> {
  const server = createMcpServer(entries, name, version);
  const transport = new StdioServerTransport();
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  server.onclose = () => resolveClosed();
  const close = async () => {
    process.stdin.off("end", onEnd);
    await server.close().catch(() => {});
    resolveClosed();
  };
  const onEnd = () => void close();
  // The SDK's stdio transport does not watch for the end of stdin: the client going away is
  // how a stdio server learns to stop.
  process.stdin.once("end", onEnd);
  await server.connect(transport);
  return {
    url: undefined,
    tools: entries.map((e) => e.name),
    closed,
    close,
    [Symbol.asyncDispose]: close,
  };
}

async function serveHttp(
  entries: readonly Entry[],
  name: string,
  version: string,
  port: number,
  guard: GuardSettings,
): Promise<McpWorkflowServer> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Server }>();
  let hosts: Set<string> = new Set();
  const http = createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent)
        jsonRpcError(res, 500, ErrorCode.InternalError, `Internal error: ${String(error)}`);
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Host, Origin (DNS rebinding, other sites' pages), then the bearer token, before MCP sees it.
    if (guardRequest(req, res, hosts, guard)) return;
    if (new URL(req.url ?? "/", "http://127.0.0.1").pathname !== "/mcp") {
      jsonRpcError(res, 404, -32000, "Not found: the MCP endpoint is /mcp.");
      return;
    }
    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const session = sessions.get(sessionId);
      if (!session) {
        // 404 tells the client to start a new session (Streamable HTTP spec).
        jsonRpcError(res, 404, -32001, `Session ${sessionId} not found; send a new initialize request.`);
        return;
      }
      await session.transport.handleRequest(req, res);
      return;
    }
    if (req.method !== "POST") {
      jsonRpcError(res, 400, -32000, "Bad request: no Mcp-Session-Id; start with an initialize POST.");
      return;
    }
    let body: unknown;
    try {
      body = await readJson(req);
    } catch (error) {
      jsonRpcError(res, 400, ErrorCode.ParseError, `Parse error: ${(error as Error).message}`);
      return;
    }
    if (!isInitializeRequest(body)) {
      jsonRpcError(res, 400, -32000, "Bad request: no Mcp-Session-Id; start with an initialize POST.");
      return;
    }
    const server = createMcpServer(entries, name, version);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, "127.0.0.1", () => {
      http.off("error", reject);
      resolve();
    });
  });
  const actual = (http.address() as AddressInfo).port;
  hosts = new Set([`127.0.0.1:${actual}`, `localhost:${actual}`]);
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map(({ server }) => server.close().catch(() => {})));
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      resolveClosed();
    })();
    return closing;
  };
  return {
    url: `http://127.0.0.1:${actual}/mcp`,
    tools: entries.map((e) => e.name),
    closed,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * Serves a workflow (or agent) as an MCP server, so any MCP client (Claude Desktop, an IDE, another
 * OpenRath program through {@link mcpTools}) can call it as a tool. The tool takes
 * `{ message: string }`, runs `workflow.run(Session.fromUserMessage(message))` and returns the
 * final text (`session.text()`) with structured content `{ sessionId, usage, chunks }`
 * ({@link WorkflowToolOutput}). A failed run is an `isError` result with the error's message.
 * Run events are sent as progress notifications when the client asks for progress.
 *
 * @example
 * ```ts
 * // server.ts, started by the client as `node server.js`
 * const writer = new Agent({ name: "writer", provider, instructions: "Write haiku." });
 * const server = await serveWorkflowAsMcp(writer);           // stdio
 * await server.closed;
 *
 * // or over HTTP on loopback, for callers that send the token
 * const token = randomBytes(32).toString("base64url");
 * const http = await serveWorkflowAsMcp(writer, { transport: { port: 0, bearerToken: token } });
 * console.error(http.url);                                    // http://127.0.0.1:<port>/mcp
 * ```
 * @throws {OpenRathError} `invalid_argument` for a bad workflow or option.
 */
export async function serveWorkflowAsMcp(
  workflow: Runnable,
  givenOptions: ServeWorkflowOptions = {},
): Promise<McpWorkflowServer> {
  if (typeof workflow?.run !== "function" || typeof workflow.name !== "string") {
    throw new OpenRathError(
      "invalid_argument",
      "serveWorkflowAsMcp needs a workflow or agent (something with a name and run(session)).",
    );
  }
  const options = checkOptions(ServeWorkflowOptionsSchema, givenOptions, { backend: "serveWorkflowAsMcp" });
  const entries = entriesOf(workflow, options);
  const name = options.name ?? workflow.name;
  const { version, transport } = options;
  if (transport === "stdio") return serveStdio(entries, name, version);
  const { port, allowedOrigins, bearerToken } = transport;
  return serveHttp(entries, name, version, port, guardSettings(allowedOrigins, bearerToken));
}
