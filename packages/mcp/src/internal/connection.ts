import type { ChildProcess } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { type McpErrorCode, McpToolError } from "../mcp-tool-error.js";

/** An MCP server started as a child process that speaks MCP on stdin/stdout. */
export interface McpStdioServer {
  /** The executable, such as `process.execPath` or `"npx"`. */
  readonly command: string;
  readonly args?: readonly string[];
  /**
   * Variables added to the child's environment. The child inherits only HOME, LOGNAME, PATH,
   * SHELL, TERM and USER from this process (the SDK's safe default) plus these.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** Working directory of the child (default: this process's). */
  readonly cwd?: string;
  /**
   * The child's stderr: `"pipe"` (default) keeps its last 4 KB for error messages; `"inherit"`
   * shows it on this process's stderr; `"ignore"` drops it.
   */
  readonly stderr?: "pipe" | "inherit" | "ignore";
}

/** An MCP server reached over Streamable HTTP. */
export interface McpHttpServer {
  /** The MCP endpoint, such as `http://127.0.0.1:3001/mcp`. */
  readonly url: string;
  /** Headers sent with every request (such as `Authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Where an MCP server is: a command to spawn (stdio) or a URL (Streamable HTTP). */
export type McpServerSpec = McpStdioServer | McpHttpServer;

/** A live connection: one SDK client over one transport. */
interface Live {
  readonly client: Client;
  readonly transport: StdioClientTransport | StreamableHTTPClientTransport;
  readonly pid: number | undefined;
  dead: boolean;
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
}

/** Options of {@link McpConnection}. */
export interface McpConnectionOptions {
  /** Per-request limit in milliseconds (list, call). */
  readonly timeoutMs: number;
  /** Limit in milliseconds for starting the server and the initialize handshake. */
  readonly connectTimeoutMs: number;
  /** Called (debounced) when the server says its tool list changed. */
  readonly onToolsChanged?: () => void;
}

const STDERR_TAIL = 4096;
const HTTP_CLOSE_GRACE_MS = 250;
const CLIENT_INFO = { name: "openrath-mcp", version: "0.1.0" };

/** Whether an SDK error means the request never left this process (safe to send again). */
function notSent(error: unknown): boolean {
  if (error instanceof McpError) return false;
  if (error instanceof StreamableHTTPError) {
    // 404: the session expired (spec); 400: servers such as the reference ones answer a stale
    // session id this way. Either way the request was refused before anything ran.
    return error.code === 404 || error.code === 400;
  }
  const message = (error as Error)?.message ?? "";
  if (message === "Not connected") return true;
  const cause = (error as { cause?: { code?: unknown } })?.cause;
  return cause?.code === "ECONNREFUSED";
}

/**
 * One connection to one MCP server, opened on first use and reused by every call. A connection
 * found dead (the process exited, the HTTP session expired) is replaced on the next request; a
 * request that had not been sent when the connection turned out dead is retried once on the new
 * connection, one that had been sent fails with `mcp_server_exited` (it may have run).
 */
export class McpConnection {
  private current: Live | undefined;
  private connecting: Promise<Live> | undefined;
  private closed = false;
  private stderrTail = "";
  /** Connections opened so far (1 unless the server had to be reconnected). */
  connections = 0;
  serverName: string | undefined;
  serverVersion: string | undefined;
  serverTitle: string | undefined;
  instructions: string | undefined;

  constructor(
    readonly spec: McpServerSpec,
    /** Label used in messages: the toolset's name. */
    public label: string,
    private readonly options: McpConnectionOptions,
  ) {}

  /** `"stdio"` or `"http"`. */
  get transportKind(): "stdio" | "http" {
    return "url" in this.spec ? "http" : "stdio";
  }

  /** The pid of the live stdio server process, if there is one. */
  get pid(): number | undefined {
    return this.current && !this.current.dead ? this.current.pid : undefined;
  }

  /** Whether {@link McpConnection.close} was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** The live connection, opening one if there is none or the last one died. */
  async live(signal?: AbortSignal): Promise<Live> {
    if (this.closed) throw this.closedError();
    if (this.current && !this.current.dead) return this.current;
    if (!this.connecting) {
      const old = this.current;
      this.current = undefined;
      if (old) void this.dispose(old);
      this.connecting = this.open(signal).finally(() => {
        this.connecting = undefined;
      });
    }
    return this.connecting;
  }

  /**
   * Runs `request` on the live connection with the retry rule above. `what` names the request in
   * messages (`"tools/list"`, `tool "echo"`).
   */
  async request<T>(what: string, request: (client: Client) => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw this.abortedError(what, signal.reason);
      const live = await this.live(signal);
      try {
        return await request(live.client);
      } catch (error) {
        if (signal?.aborted) throw this.abortedError(what, error);
        if (this.closed) throw this.closedError();
        if (notSent(error)) {
          live.dead = true;
          if (attempt === 0) continue;
          throw this.fail(
            "mcp_connect_failed",
            `${what} on MCP server "${this.label}" could not be sent after reconnecting: ${message(error)}`,
            error,
          );
        }
        throw this.mapError(what, error, live);
      }
    }
  }

  /** Closes the connection for good: later requests fail with `mcp_closed`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pending = this.connecting;
    if (pending) await pending.then((live) => this.dispose(live)).catch(() => {});
    const live = this.current;
    this.current = undefined;
    if (live) await this.dispose(live);
  }

  private async open(signal: AbortSignal | undefined): Promise<Live> {
    const client = new Client(CLIENT_INFO, {
      capabilities: {},
      ...(this.options.onToolsChanged
        ? {
            listChanged: {
              tools: {
                autoRefresh: false,
                debounceMs: 100,
                onChanged: () => this.options.onToolsChanged?.(),
              },
            },
          }
        : {}),
    });
    const transport = this.makeTransport();
    const live: Live = {
      client,
      transport,
      get pid() {
        return transport instanceof StdioClientTransport ? (transport.pid ?? undefined) : undefined;
      },
      dead: false,
      exit: undefined,
    };
    client.onclose = () => {
      live.dead = true;
    };
    client.onerror = (error) => {
      // A dropped SSE stream means the HTTP server went away: the next request reconnects, and
      // calls still waiting on a stream fail with mcp_server_exited now instead of at their
      // timeout. The close waits a moment so a request that failed to go out (connection refused)
      // reports that first and is retried rather than reported as possibly run.
      if (
        transport instanceof StreamableHTTPClientTransport &&
        /SSE stream disconnected|Failed to reconnect SSE stream|Maximum reconnection attempts/.test(
          error.message,
        )
      ) {
        live.dead = true;
        setTimeout(() => void client.close().catch(() => {}), HTTP_CLOSE_GRACE_MS).unref();
      }
    };
    try {
      await client.connect(transport, {
        timeout: this.options.connectTimeoutMs,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      live.dead = true;
      await this.dispose(live);
      if (signal?.aborted) throw this.abortedError("connecting", error);
      throw this.fail(
        "mcp_connect_failed",
        `Could not connect to MCP server "${this.label}" (${this.describeSpec()}): ${message(error)}${this.stderrNote()}`,
        error,
      );
    }
    if (transport instanceof StdioClientTransport) {
      // The SDK keeps the child private; its exit code and signal make "server exited" errors useful.
      const child = (transport as unknown as { _process?: ChildProcess })._process;
      child?.once("exit", (code, signal) => {
        live.exit = { code, signal };
      });
    }
    if (this.closed) {
      await this.dispose(live);
      throw this.closedError();
    }
    this.connections++;
    const version = client.getServerVersion();
    this.serverName = version?.name;
    this.serverVersion = version?.version;
    this.serverTitle = version?.title;
    this.instructions = client.getInstructions();
    this.current = live;
    return live;
  }

  private makeTransport(): StdioClientTransport | StreamableHTTPClientTransport {
    const spec = this.spec;
    if ("url" in spec) {
      return new StreamableHTTPClientTransport(new URL(spec.url), {
        ...(spec.headers ? { requestInit: { headers: { ...spec.headers } } } : {}),
        reconnectionOptions: {
          initialReconnectionDelay: 250,
          maxReconnectionDelay: 2000,
          reconnectionDelayGrowFactor: 2,
          maxRetries: 2,
        },
      });
    }
    const stderr = spec.stderr ?? "pipe";
    this.stderrTail = "";
    const transport = new StdioClientTransport({
      command: spec.command,
      ...(spec.args ? { args: [...spec.args] } : {}),
      ...(spec.env ? { env: { ...spec.env } } : {}),
      ...(spec.cwd ? { cwd: spec.cwd } : {}),
      stderr,
    });
    if (stderr === "pipe") {
      transport.stderr?.on("data", (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL);
      });
    }
    return transport;
  }

  private async dispose(live: Live): Promise<void> {
    live.dead = true;
    const { client, transport } = live;
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
      // Best effort: tell the server the session is over (DELETE), without waiting long.
      await Promise.race([
        transport.terminateSession().catch(() => {}),
        new Promise((resolve) => setTimeout(resolve, 1000).unref()),
      ]);
    }
    await client.close().catch(() => {});
  }

  private mapError(what: string, error: unknown, live: Live): McpToolError {
    if (error instanceof McpError) {
      if (error.code === ErrorCode.ConnectionClosed) {
        live.dead = true;
        const exit = live.exit
          ? live.exit.signal
            ? ` (killed by ${live.exit.signal})`
            : ` (exit code ${live.exit.code})`
          : "";
        return this.fail(
          "mcp_server_exited",
          `MCP server "${this.label}" ${this.transportKind === "stdio" ? "exited" : "dropped the connection"}${exit} during ${what}; the call may or may not have run. The next call reconnects.${this.stderrNote()}`,
          error,
        );
      }
      if (error.code === ErrorCode.RequestTimeout) {
        return this.fail(
          "mcp_timeout",
          `${what} on MCP server "${this.label}" timed out after ${this.options.timeoutMs} ms and was cancelled.`,
          error,
        );
      }
      return this.fail(
        "mcp_protocol_error",
        `MCP server "${this.label}" answered ${what} with error ${error.code}: ${stripPrefix(error.message)}`,
        error,
        { mcpCode: error.code },
      );
    }
    if (error instanceof StreamableHTTPError) {
      return this.fail(
        "mcp_protocol_error",
        `MCP server "${this.label}" answered ${what} with ${message(error)}`,
        error,
        { httpStatus: error.code },
      );
    }
    const cause = (error as { cause?: { code?: unknown } })?.cause;
    if (error instanceof TypeError && cause?.code !== undefined) {
      // fetch failed after the request went out (socket reset, server gone mid-response).
      live.dead = true;
      return this.fail(
        "mcp_server_exited",
        `MCP server "${this.label}" dropped the connection during ${what} (${String(cause.code)}); the call may or may not have run. The next call reconnects.`,
        error,
      );
    }
    return this.fail(
      "mcp_protocol_error",
      `${what} on MCP server "${this.label}" failed: ${message(error)}`,
      error,
    );
  }

  private fail(
    code: McpErrorCode,
    text: string,
    cause: unknown,
    details: Record<string, unknown> = {},
  ): McpToolError {
    return new McpToolError(code, text, { cause, details: { server: this.label, ...details } });
  }

  private closedError(): McpToolError {
    return new McpToolError(
      "mcp_closed",
      `The MCP toolset "${this.label}" is closed; create a new one with mcpTools() to call its tools again.`,
      { details: { server: this.label } },
    );
  }

  private abortedError(what: string, cause: unknown): McpToolError {
    return new McpToolError("aborted", `${what} on MCP server "${this.label}" was aborted.`, {
      cause,
      details: { server: this.label },
    });
  }

  private describeSpec(): string {
    const spec = this.spec;
    if ("url" in spec) return spec.url;
    return [spec.command, ...(spec.args ?? [])].join(" ");
  }

  private stderrNote(): string {
    const tail = this.stderrTail.trim();
    if (tail === "") return "";
    return ` Server stderr (last lines): ${tail.split("\n").slice(-10).join("\n")}`;
  }
}

function message(error: unknown): string {
  if (error instanceof StreamableHTTPError && (error.code ?? 0) > 0)
    return `HTTP ${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** The SDK prefixes `MCP error <code>: `; the code is reported separately. */
function stripPrefix(text: string): string {
  return text.replace(/^MCP error -?\d+: /, "");
}
