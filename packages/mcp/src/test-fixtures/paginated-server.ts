// A small stdio MCP server for tests, on the SDK's low-level Server: it pages `tools/list` two
// tools at a time, lists names that break the tool-name rules, has tools that crash the process
// or answer slowly, and one ("grow") that adds a tool and announces the changed list. Started with `node --conditions=@openrath/source --import tsx`.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const TOOLS = [
  { name: "alpha", description: "Returns alpha.", inputSchema: { type: "object" as const } },
  {
    name: "files.read v2",
    description: "A name with a dot and a space.",
    inputSchema: {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object" as const,
      properties: { path: { type: "string" } },
      required: ["path"],
    },
  },
  { name: "gamma", description: "Returns gamma.", inputSchema: { type: "object" as const, properties: {} } },
  { name: "crash", description: "Exits the server with code 3.", inputSchema: { type: "object" as const } },
  { name: "grow", description: "Adds the tool 'grown'.", inputSchema: { type: "object" as const } },
  {
    name: "slow",
    description: "Answers after ms milliseconds.",
    inputSchema: { type: "object" as const, properties: { ms: { type: "number" } } },
  },
];
const PAGE = 2;
let listCalls = 0;

const server = new Server(
  { name: "paged-fixture", version: "1.2.3" },
  { capabilities: { tools: { listChanged: true } } },
);
server.setRequestHandler(ListToolsRequestSchema, async (request) => {
  listCalls++;
  const start = Number(request.params?.cursor ?? 0);
  const next = start + PAGE;
  return {
    tools: TOOLS.slice(start, next),
    ...(next < TOOLS.length ? { nextCursor: String(next) } : {}),
  };
});
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { name, arguments: args = {} } = request.params;
  switch (name) {
    case "crash":
      process.stderr.write("fixture: crashing on purpose\n");
      setTimeout(() => process.exit(3), 10);
      return new Promise(() => {});
    case "slow":
      await new Promise((resolve) => setTimeout(resolve, Number(args.ms ?? 1000)));
      return { content: [{ type: "text", text: "slow done" }] };
    case "grow":
      if (!TOOLS.some((t) => t.name === "grown")) {
        TOOLS.push({
          name: "grown",
          description: "Grown at run time.",
          inputSchema: { type: "object" as const },
        });
      }
      await server.sendToolListChanged();
      return { content: [{ type: "text", text: "grew" }] };
    case "files.read v2":
      return { content: [{ type: "text", text: `read ${String(args.path)}` }] };
    default:
      return { content: [{ type: "text", text: `${name} (pid ${process.pid}, list calls ${listCalls})` }] };
  }
});
await server.connect(new StdioServerTransport());
