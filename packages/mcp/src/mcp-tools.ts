import { defineTool, type JsonValue, OpenRathError, type Tool } from "@openrath/core";
import { checkOptions } from "@openrath/core/backend";
import { McpConnection, type McpServerSpec } from "./internal/connection.js";
import { effectOfAnnotations, type ToolAnnotations } from "./internal/effect-class.js";
import { parametersOf } from "./internal/input-schema.js";
import {
  errorText,
  type McpToolResult,
  mapToolResult,
  type RawCallToolResult,
} from "./internal/result-mapping.js";
import { McpHttpServerSchema, McpStdioServerSchema, McpToolsOptionsSchema } from "./internal/schemas.js";
import { exposedToolNames } from "./internal/tool-names.js";
import { McpToolError } from "./mcp-tool-error.js";

/** Options of {@link mcpTools}. */
export interface McpToolsOptions {
  /**
   * Put before every tool name, joined with `_` (`"fs"` → `fs_read_text_file`); a prefix ending in
   * `_` or `-` is used as is. Names are then made to fit the tool-name rules.
   */
  readonly prefix?: string;
  /** Expose only these tools (MCP names, as the server lists them). Unknown names are refused. */
  readonly include?: readonly string[];
  /** Limit in milliseconds for listing and for each call (default 60 000). */
  readonly timeoutMs?: number;
  /**
   * Limit in milliseconds for starting or reaching the server and the initialize handshake, on the
   * first connection and on every reconnection (default 30 000).
   */
  readonly connectTimeoutMs?: number;
  /** The server's name in lanes (`mcp:<name>`) and messages (default: the name the server reports). */
  readonly name?: string;
  /**
   * Give every call its own lane, so one turn's calls to this server run at the same time over
   * the shared connection. Default `false`: calls to one server run one after another in call order.
   */
  readonly parallel?: boolean;
  /** Most characters of JSON a result may take in the transcript (default: core's 48 000). */
  readonly maxResultChars?: number;
}

/** An MCP tool as OpenRath sees it: JSON arguments in, an {@link McpToolResult} out. */
export type McpTool = Tool<Record<string, unknown>, McpToolResult>;

/** What is known about the server behind a toolset. */
export interface McpServerInfo {
  /** The toolset's name ({@link McpToolsOptions.name}, else the server's reported name). */
  readonly name: string;
  readonly transport: "stdio" | "http";
  /** Name, version and title the server reported when it was last connected. */
  readonly serverName: string | undefined;
  readonly serverVersion: string | undefined;
  readonly title: string | undefined;
  /** Usage hints the server sent for models, if any. */
  readonly instructions: string | undefined;
  /** The pid of the running stdio server process (`undefined` over HTTP or while disconnected). */
  readonly pid: number | undefined;
  /** Connections opened so far: 1, plus one per reconnection after the server died. */
  readonly connections: number;
}

/**
 * An MCP server's tools over one connection, shared by every call, agent and session that uses
 * them. Close it when done (or `await using`): that ends the connection and, for stdio, the
 * server process.
 */
export interface McpToolset extends AsyncDisposable {
  /**
   * The server's tools (filtered by `include`), ready for `new Agent({ tools })`. Replaced by
   * {@link McpToolset.refresh} and when the server announces a changed list; agents built earlier
   * keep the tools they were given, which keep working.
   */
  readonly tools: readonly McpTool[];
  readonly server: McpServerInfo;
  /** Lists the server's tools again (following pagination) and returns the new {@link McpToolset.tools}. */
  refresh(): Promise<readonly McpTool[]>;
  /** Ends the connection (stdio: closes stdin, then SIGTERM, then SIGKILL). Calls after it fail with `mcp_closed`. */
  close(): Promise<void>;
}

/** An MCP tool definition as `tools/list` returns it (the parts used here). */
interface ListedTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
  /** Behaviour hints (`readOnlyHint`, `idempotentHint`…): they give the tool's effect class. */
  readonly annotations?: ToolAnnotations;
}

const MAX_PAGES = 1000;
let laneCounter = 0;

function invalid(message: string, details: Record<string, unknown> = {}): OpenRathError {
  return new OpenRathError("invalid_argument", message, { details });
}

function progressData(progress: { progress: number; total?: number; message?: string }): JsonValue {
  return {
    progress: progress.progress,
    ...(progress.total !== undefined ? { total: progress.total } : {}),
    ...(progress.message !== undefined ? { message: progress.message } : {}),
  };
}

class Toolset implements McpToolset {
  private current: readonly McpTool[] = [];
  readonly server: McpServerInfo;

  constructor(
    private readonly connection: McpConnection,
    private readonly options: McpToolsOptions,
    private readonly timeoutMs: number,
  ) {
    const conn = connection;
    this.server = {
      get name() {
        return conn.label;
      },
      get transport() {
        return conn.transportKind;
      },
      get serverName() {
        return conn.serverName;
      },
      get serverVersion() {
        return conn.serverVersion;
      },
      get title() {
        return conn.serverTitle;
      },
      get instructions() {
        return conn.instructions;
      },
      get pid() {
        return conn.pid;
      },
      get connections() {
        return conn.connections;
      },
    };
  }

  get tools(): readonly McpTool[] {
    return this.current;
  }

  async refresh(): Promise<readonly McpTool[]> {
    this.current = this.build(await this.list(), false);
    return this.current;
  }

  /** First listing: also checks `include`. */
  async init(): Promise<void> {
    this.current = this.build(await this.list(), true);
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private list(): Promise<ListedTool[]> {
    return this.connection.request("tools/list", async (client) => {
      const tools: ListedTool[] = [];
      const seen = new Set<string>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const result = await client.listTools(cursor === undefined ? undefined : { cursor }, {
          timeout: this.timeoutMs,
        });
        tools.push(...(result.tools as ListedTool[]));
        cursor = result.nextCursor;
        if (cursor === undefined || seen.has(cursor)) break;
        seen.add(cursor);
      }
      return tools;
    });
  }

  private build(listed: readonly ListedTool[], strict: boolean): McpTool[] {
    const include = this.options.include;
    let chosen = listed;
    if (include) {
      const wanted = new Set(include);
      chosen = listed.filter((t) => wanted.has(t.name));
      if (strict) {
        const have = new Set(listed.map((t) => t.name));
        const missing = include.filter((name) => !have.has(name));
        if (missing.length > 0) {
          throw invalid(
            `mcpTools: include names tools that MCP server "${this.connection.label}" does not have: ${missing.join(", ")}. It has: ${[...have].sort().join(", ") || "(none)"}.`,
            { missing, available: [...have] },
          );
        }
      }
    }
    const names = exposedToolNames(
      chosen.map((t) => t.name),
      this.options.prefix,
    );
    return chosen.map((listedTool, i) => this.tool(listedTool, names[i]!));
  }

  private tool(listed: ListedTool, name: string): McpTool {
    const connection = this.connection;
    const mcpName = listed.name;
    const timeout = this.timeoutMs;
    const parallel = this.options.parallel ?? false;
    return defineTool<Record<string, unknown>, McpToolResult>({
      name,
      description: listed.description ?? listed.title ?? "",
      parameters: parametersOf(listed.inputSchema),
      ...effectOfAnnotations(listed.annotations),
      resourceKey: parallel
        ? () => `mcp:${connection.label}:${++laneCounter}`
        : () => `mcp:${connection.label}`,
      ...(this.options.maxResultChars !== undefined ? { maxResultChars: this.options.maxResultChars } : {}),
      async execute(args, context) {
        const result = (await connection.request(
          `tool "${mcpName}"`,
          (client) =>
            client.callTool({ name: mcpName, arguments: args }, undefined, {
              timeout,
              signal: context.signal,
              onprogress: (progress) => context.emit(progressData(progress)),
            }),
          context.signal,
        )) as RawCallToolResult;
        if (result.isError) {
          throw new McpToolError("mcp_tool_error", errorText(result, mcpName), {
            details: {
              server: connection.label,
              tool: mcpName,
              ...(result.structuredContent !== undefined ? { structured: result.structuredContent } : {}),
            },
          });
        }
        return mapToolResult(result);
      },
    });
  }
}

/**
 * Connects to an MCP server and exposes its tools as OpenRath tools. One connection serves every
 * call (the Python original spawned a process per call); it reconnects after the server dies.
 *
 * - stdio: `{ command, args?, env?, cwd? }` spawns the server as a child process.
 * - Streamable HTTP: `{ url, headers? }`.
 *
 * A tool result is `{ text?, structured?, content? }` (see {@link McpToolResult}); a server error
 * result (`isError`) becomes an error result with `error_kind: "mcp_tool_error"`, and transport
 * failures become `mcp_server_exited`, `mcp_timeout`… (see {@link McpToolError}): the agent loop
 * records them and goes on.
 *
 * @example
 * ```ts
 * await using fs = await mcpTools(
 *   { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv/agent-workspace"] },
 *   { prefix: "fs" },
 * );
 * const agent = new Agent({ name: "clerk", provider, tools: fs.tools });
 * const out = await agent.run(Session.fromUserMessage("Write hello.txt saying hi"));
 * ```
 * @throws {OpenRathError} `invalid_argument` for a bad server spec, option or `include` name;
 *   {@link McpToolError} `mcp_connect_failed` when the server cannot be started, reached or listed.
 */
export async function mcpTools(
  givenServer: McpServerSpec,
  givenOptions: McpToolsOptions = {},
): Promise<McpToolset> {
  const isHttp = typeof givenServer === "object" && givenServer !== null && "url" in givenServer;
  const where = { backend: "mcpTools", argument: "server", secrets: ["headers", "env"] };
  const server: McpServerSpec = isHttp
    ? checkOptions(McpHttpServerSchema, givenServer, where)
    : checkOptions(McpStdioServerSchema, givenServer, where);
  const options = checkOptions(McpToolsOptionsSchema, givenOptions, { backend: "mcpTools" });
  const { timeoutMs, connectTimeoutMs } = options;
  let toolset: Toolset | undefined;
  const connection = new McpConnection(server, options.name ?? "mcp", {
    timeoutMs,
    connectTimeoutMs,
    onToolsChanged: () => {
      void toolset?.refresh().catch(() => {});
    },
  });
  try {
    await connection.live();
  } catch (error) {
    await connection.close();
    throw error;
  }
  if (options.name === undefined) connection.label = connection.serverName || "mcp";
  toolset = new Toolset(connection, options, timeoutMs);
  try {
    await toolset.init();
  } catch (error) {
    await connection.close();
    throw error;
  }
  return toolset;
}
