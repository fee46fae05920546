import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SandboxError, type SandboxErrorCode } from "@openrath/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkspaceFiles } from "./workspace-files.js";
import { DIRECTORY_FLAGS } from "./workspace-walk.js";

let base: string;
let ws: string;
let outsideDir: string;
let handle: FileHandle;
let files: WorkspaceFiles;

beforeAll(async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "openrath-local-test-")));
  ws = join(base, "ws");
  outsideDir = join(base, "outside");
  mkdirSync(join(ws, "real"), { recursive: true });
  mkdirSync(outsideDir);
  writeFileSync(join(ws, "real", "data.txt"), "x");
  writeFileSync(join(outsideDir, "secret.txt"), "s");
  symlinkSync("real", join(ws, "inner-dir"));
  symlinkSync("real/data.txt", join(ws, "inner-file"));
  symlinkSync(join(ws, "real"), join(ws, "inner-absolute"));
  symlinkSync(outsideDir, join(ws, "out-dir"));
  symlinkSync(join(outsideDir, "secret.txt"), join(ws, "out-file"));
  symlinkSync(join(outsideDir, "new.txt"), join(ws, "dangling-out"));
  symlinkSync("../../outside", join(ws, "real", "climb"));
  symlinkSync("real/new.txt", join(ws, "dangling-in"));
  symlinkSync("loop-b", join(ws, "loop-a"));
  symlinkSync("loop-a", join(ws, "loop-b"));
  // The workspace as the sandbox names it: through a symlink to the real directory.
  symlinkSync(ws, join(base, "ws-alias"));
  handle = await open(ws, DIRECTORY_FLAGS);
  files = new WorkspaceFiles({ path: join(base, "ws-alias"), real: ws, handle });
});

afterAll(async () => {
  await handle.close();
  rmSync(base, { recursive: true, force: true });
});

async function refused(call: Promise<unknown>, code: SandboxErrorCode = "path_outside_workspace") {
  try {
    await call;
  } catch (error) {
    expect(SandboxError.isInstance(error, code), String(error)).toBe(true);
    return error as SandboxError;
  }
  throw new Error(`expected ${code}`);
}

describe("WorkspaceFiles paths", () => {
  it("reads, writes and finds plain paths, making missing directories for a write", async () => {
    expect(await files.readFile("real/data.txt")).toBe("x");
    await files.writeFile("new/dir/file.txt", "n");
    expect(readFileSync(join(ws, "new/dir/file.txt"), "utf8")).toBe("n");
    expect(await files.exists("new/dir")).toBe(true);
    expect(await files.exists("new/none")).toBe(false);
    expect(await files.exists("real/data.txt/below")).toBe(false);
  });

  it("accepts absolute paths under either the reported or the real workspace path", async () => {
    expect(await files.readFile(join(base, "ws-alias", "real/data.txt"))).toBe("x");
    expect(await files.readFile(join(ws, "real/data.txt"))).toBe("x");
  });

  it("follows symlinks that stay inside: relative, absolute, to a file, dangling (a write creates the target)", async () => {
    expect(await files.readFile("inner-dir/data.txt")).toBe("x");
    expect(await files.readFile("inner-file")).toBe("x");
    expect(await files.readFile("inner-absolute/data.txt")).toBe("x");
    expect(await files.exists("dangling-in")).toBe(false);
    await files.writeFile("dangling-in", "d");
    expect(readFileSync(join(ws, "real/new.txt"), "utf8")).toBe("d");
    await files.writeFile("inner-dir/a/b.txt", "b");
    expect(readFileSync(join(ws, "real/a/b.txt"), "utf8")).toBe("b");
    expect((await files.listFiles("inner-dir")).map((entry) => entry.path)).toContain("inner-dir/data.txt");
    expect(await files.directory("inner-dir")).toEqual({ rel: "inner-dir", real: join(ws, "real") });
  });

  it("refuses .. and absolute paths outside", async () => {
    await refused(files.readFile("../x"));
    await refused(files.exists("/etc/passwd"));
    await refused(files.listFiles(outsideDir));
  });

  it("refuses symlinks that lead outside, for every call, and writes nothing there", async () => {
    const error = await refused(files.readFile("out-dir/secret.txt"));
    expect(error.details.resolved).toBe(outsideDir);
    await refused(files.listFiles("out-dir"));
    await refused(files.readFile("out-file"));
    await refused(files.exists("out-file"));
    await refused(files.writeFile("dangling-out", "x"));
    await refused(files.writeFile("out-dir/new/deeper.txt", "x"));
    await refused(files.readFile("real/climb/secret.txt"));
    await refused(files.directory("out-dir"));
    expect(readdirSync(outsideDir)).toEqual(["secret.txt"]);
    expect(existsSync(join(outsideDir, "new.txt"))).toBe(false);
  });

  it("refuses a loop of symbolic links instead of following it forever", async () => {
    const error = await refused(files.readFile("loop-a/x"));
    expect(error.message).toMatch(/loop of symbolic links/);
  });

  it("maps the wrong kind of file to the contract's codes", async () => {
    await refused(files.readFile("real"), "not_a_file");
    await refused(files.writeFile("real", "x"), "not_a_file");
    await refused(files.writeFile(".", "x"), "not_a_file");
    await refused(files.listFiles("real/data.txt"), "not_a_directory");
    await refused(files.writeFile("real/data.txt/below", "x"), "not_a_directory");
    await refused(files.readFile("missing"), "file_not_found");
    await refused(files.directory("missing"), "file_not_found");
  });
});
