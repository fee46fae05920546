import { OpenRathError, type OpenRathErrorOptions } from "@openrath/core";

/**
 * Codes of {@link McpToolError}, which become `error_kind` in the tool result an agent records:
 *
 * - `mcp_tool_error`: the server ran the tool and reported failure (`isError: true`); the message
 *   is the server's text.
 * - `mcp_server_exited`: the connection died while the call was in flight (the stdio process
 *   exited, the HTTP stream dropped). The call may or may not have run; the next call reconnects.
 * - `mcp_timeout`: no answer within `timeoutMs`; the request was cancelled.
 * - `mcp_connect_failed`: the server could not be started or reached.
 * - `mcp_protocol_error`: the server answered with a JSON-RPC error (unknown tool, invalid
 *   params…) or a result that breaks the protocol (such as structured content that does not match
 *   the tool's output schema).
 * - `mcp_closed`: the toolset was closed.
 * - `aborted`: the run was aborted while the call was in flight.
 */
export type McpErrorCode =
  | "mcp_tool_error"
  | "mcp_server_exited"
  | "mcp_timeout"
  | "mcp_connect_failed"
  | "mcp_protocol_error"
  | "mcp_closed"
  | "aborted";

/**
 * What an MCP tool throws when a call fails. The agent loop turns it into a structured error result
 * (`{"ok":false,"error_kind":<code>,…}`) and goes on; match on {@link McpToolError.code}.
 * `details` holds `server` (the toolset's name), `tool` (the MCP tool name) and, for
 * `mcp_tool_error`, the server's `structured` content when it sent some.
 */
export class McpToolError extends OpenRathError {
  declare readonly code: McpErrorCode;

  constructor(code: McpErrorCode, message: string, options: OpenRathErrorOptions = {}) {
    super(code, message, options);
  }
}
