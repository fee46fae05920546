import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpToolset, mcpTools } from "./index.js";
import { effectOfAnnotations } from "./internal/effect-class.js";
import { FILESYSTEM_BIN } from "./test-fixtures/servers.js";

describe("MCP tool annotations give the effect class", () => {
  it("readOnlyHint is read_only, idempotentHint is idempotent with a key per call, anything else non_idempotent", () => {
    expect(effectOfAnnotations({ readOnlyHint: true, idempotentHint: false })).toEqual({
      effect: "read_only",
    });
    expect(effectOfAnnotations({ readOnlyHint: false, idempotentHint: true, destructiveHint: true })).toEqual(
      {
        effect: "idempotent",
        idempotencyKey: true,
      },
    );
    expect(effectOfAnnotations({ readOnlyHint: false, destructiveHint: false })).toEqual({
      effect: "non_idempotent",
    });
    expect(effectOfAnnotations(undefined)).toEqual({ effect: "non_idempotent" });
  });

  describe("over stdio: @modelcontextprotocol/server-filesystem's own annotations", () => {
    let root: string;
    let fs: McpToolset;
    beforeAll(async () => {
      root = realpathSync(mkdtempSync(join(tmpdir(), "openrath-mcp-effects-")));
      fs = await mcpTools({ command: process.execPath, args: [FILESYSTEM_BIN, root] }, { prefix: "fs" });
    });
    afterAll(async () => {
      await fs?.close();
      rmSync(root, { recursive: true, force: true });
    });

    it("maps the listed hints onto each tool", () => {
      const byName = new Map(fs.tools.map((t) => [t.name, t]));
      expect(byName.get("fs_read_text_file")).toMatchObject({ effect: "read_only" });
      expect(byName.get("fs_list_directory")).toMatchObject({ effect: "read_only" });
      expect(byName.get("fs_write_file")).toMatchObject({ effect: "idempotent", idempotencyKey: true });
      expect(byName.get("fs_create_directory")).toMatchObject({ effect: "idempotent", idempotencyKey: true });
      expect(byName.get("fs_edit_file")).toMatchObject({ effect: "non_idempotent" });
      expect(byName.get("fs_edit_file")?.idempotencyKey).toBeUndefined();
    });
  });
});
