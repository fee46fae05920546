export type { McpHttpServer, McpServerSpec, McpStdioServer } from "./internal/connection.js";
export type { McpContentEntry, McpToolResult } from "./internal/result-mapping.js";
export { type McpErrorCode, McpToolError } from "./mcp-tool-error.js";
export {
  type McpServerInfo,
  type McpTool,
  type McpToolset,
  type McpToolsOptions,
  mcpTools,
} from "./mcp-tools.js";
export {
  type McpHttpTransportOptions,
  type McpWorkflowServer,
  type ServeWorkflowOptions,
  serveWorkflowAsMcp,
  type WorkflowToolOutput,
} from "./serve-workflow-as-mcp.js";
