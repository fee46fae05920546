import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, ScriptedProvider, Session, type ToolContext, type ToolResultChunk } from "@openrath/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpToolset, mcpTools } from "./index.js";
import { FILESYSTEM_BIN } from "./test-fixtures/servers.js";

const context = (): ToolContext => ({
  session: Session.empty(),
  agent: "test",
  callId: "call_test",
  signal: new AbortController().signal,
  sandbox: () => Promise.reject(new Error("no sandbox")),
  emit: () => {},
});

describe("mcpTools over stdio: @modelcontextprotocol/server-filesystem", () => {
  let root: string;
  let fs: McpToolset;

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "openrath-mcp-fs-")));
    fs = await mcpTools({ command: process.execPath, args: [FILESYSTEM_BIN, root] }, { prefix: "fs" });
  });

  afterAll(async () => {
    await fs?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const tool = (name: string) => {
    const found = fs.tools.find((t) => t.name === name);
    if (!found) throw new Error(`no tool ${name} in ${fs.tools.map((t) => t.name).join(", ")}`);
    return found;
  };

  it("lists the server's tools, prefixed, with their JSON Schemas", () => {
    const names = fs.tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(["fs_read_text_file", "fs_write_file", "fs_list_directory", "fs_edit_file"]),
    );
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(tool("fs_write_file").parameters).toMatchObject({
      type: "object",
      properties: { path: { type: "string" }, content: { type: "string" } },
      required: ["path", "content"],
    });
    expect(tool("fs_write_file").parameters).not.toHaveProperty("$schema");
    expect(tool("fs_write_file").description).toMatch(/\S/);
    expect(fs.server).toMatchObject({ name: "secure-filesystem-server", transport: "stdio", connections: 1 });
    expect(fs.server.pid).toBeTypeOf("number");
  });

  it("writes, reads and lists files through the tools", async () => {
    const path = join(root, "notes.txt");
    const wrote = await tool("fs_write_file").execute({ path, content: "first line\nsecond" }, context());
    expect(wrote).toMatchObject({ text: expect.stringContaining("Successfully wrote") });
    expect(readFileSync(path, "utf8")).toBe("first line\nsecond");

    const read = await tool("fs_read_text_file").execute({ path }, context());
    expect(read).toEqual({ text: "first line\nsecond", structured: { content: "first line\nsecond" } });

    writeFileSync(join(root, "other.md"), "x");
    const listed = await tool("fs_list_directory").execute({ path: root }, context());
    expect(listed).toMatchObject({ text: expect.stringContaining("[FILE] notes.txt") });
    expect((listed as { text: string }).text).toContain("[FILE] other.md");
  });

  it("turns the server's access-denied result into an mcp_tool_error with its text", async () => {
    await expect(
      tool("fs_read_text_file").execute({ path: "/etc/hostname" }, context()),
    ).rejects.toMatchObject({
      code: "mcp_tool_error",
      message: expect.stringContaining("Access denied"),
      details: { server: "secure-filesystem-server", tool: "read_text_file" },
    });
  });

  it("lets a ScriptedProvider agent write a file through MCP, read it back and answer", async () => {
    const path = join(root, "agent", "hello.txt");
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "fs_create_directory", arguments: { path: join(root, "agent") } }] },
      { toolCalls: [{ name: "fs_write_file", arguments: { path, content: "Hello from the agent" } }] },
      { toolCalls: [{ name: "fs_read_text_file", arguments: { path } }] },
      { text: "The file says: Hello from the agent" },
    ]);
    const agent = new Agent({ name: "clerk", provider, tools: fs.tools });
    const out = await agent.run(Session.fromUserMessage("Write hello.txt and read it back"));

    expect(readFileSync(path, "utf8")).toBe("Hello from the agent");
    expect(out.text()).toBe("The file says: Hello from the agent");
    const results = out.chunks.filter((c): c is ToolResultChunk => c.kind === "tool_result");
    expect(results.map((r) => r.name)).toEqual(["fs_create_directory", "fs_write_file", "fs_read_text_file"]);
    expect(results.every((r) => r.isError !== true)).toBe(true);
    expect(JSON.parse(results[2]!.content)).toEqual({
      text: "Hello from the agent",
      structured: { content: "Hello from the agent" },
    });
    // The model was offered the MCP tools with their schemas.
    const offered = provider.requests[0]!.tools!.map((t) => t.function.name);
    expect(offered).toContain("fs_write_file");
    expect(fs.server.connections).toBe(1);
  });

  it("records a denied path as a structured mcp_tool_error result and the loop goes on", async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: "fs_read_text_file", arguments: { path: "/etc/hostname" } }] },
      { text: "I may not read that." },
    ]);
    const out = await new Agent({ name: "clerk", provider, tools: fs.tools }).run(
      Session.fromUserMessage("Read /etc/hostname"),
    );
    const result = out.chunks.find((c): c is ToolResultChunk => c.kind === "tool_result")!;
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content)).toMatchObject({
      ok: false,
      error_kind: "mcp_tool_error",
      message: expect.stringContaining("Access denied - path outside allowed directories"),
    });
    expect(out.text()).toBe("I may not read that.");
  });
});
