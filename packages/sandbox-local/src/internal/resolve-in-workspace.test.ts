import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SandboxError } from "@openrath/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveInWorkspace, type WorkspaceRoot } from "./resolve-in-workspace.js";

let base: string;
let root: WorkspaceRoot;
let outsideDir: string;

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "openrath-local-test-")));
  const ws = join(base, "ws");
  outsideDir = join(base, "outside");
  mkdirSync(join(ws, "real"), { recursive: true });
  mkdirSync(outsideDir);
  writeFileSync(join(ws, "real", "data.txt"), "x");
  writeFileSync(join(outsideDir, "secret.txt"), "s");
  symlinkSync("real", join(ws, "inner-dir"));
  symlinkSync("real/data.txt", join(ws, "inner-file"));
  symlinkSync(outsideDir, join(ws, "out-dir"));
  symlinkSync(join(outsideDir, "secret.txt"), join(ws, "out-file"));
  symlinkSync(join(outsideDir, "new.txt"), join(ws, "dangling-out"));
  symlinkSync("real/new.txt", join(ws, "dangling-in"));
  symlinkSync("loop-b", join(ws, "loop-a"));
  symlinkSync("loop-a", join(ws, "loop-b"));
  // The workspace as the sandbox names it: through a symlink to the real directory.
  symlinkSync(ws, join(base, "ws-alias"));
  root = { path: join(base, "ws-alias"), real: ws };
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

async function refused(path: string): Promise<SandboxError> {
  try {
    await resolveInWorkspace(path, root);
  } catch (error) {
    expect(SandboxError.isInstance(error, "path_outside_workspace"), String(error)).toBe(true);
    return error as SandboxError;
  }
  throw new Error(`${path} was not refused`);
}

describe("resolveInWorkspace", () => {
  it("resolves plain, missing and nested-missing paths inside the real workspace", async () => {
    expect(await resolveInWorkspace(".", root)).toEqual({ rel: ".", real: root.real });
    expect(await resolveInWorkspace("real/data.txt", root)).toEqual({
      rel: "real/data.txt",
      real: join(root.real, "real/data.txt"),
    });
    expect((await resolveInWorkspace("new/dir/file.txt", root)).real).toBe(
      join(root.real, "new/dir/file.txt"),
    );
  });

  it("accepts absolute paths under either the reported or the real workspace path", async () => {
    expect((await resolveInWorkspace(join(root.path, "real"), root)).rel).toBe("real");
    expect((await resolveInWorkspace(join(root.real, "real"), root)).rel).toBe("real");
  });

  it("follows symlinks that stay inside, existing or dangling", async () => {
    expect((await resolveInWorkspace("inner-dir/data.txt", root)).real).toBe(
      join(root.real, "real/data.txt"),
    );
    expect((await resolveInWorkspace("inner-file", root)).real).toBe(join(root.real, "real/data.txt"));
    expect((await resolveInWorkspace("dangling-in", root)).real).toBe(join(root.real, "real/new.txt"));
    expect((await resolveInWorkspace("inner-dir/a/b.txt", root)).real).toBe(join(root.real, "real/a/b.txt"));
  });

  it("refuses .. and absolute paths outside", async () => {
    await refused("../x");
    await refused("/etc/passwd");
    await refused(outsideDir);
  });

  it("refuses symlinks that lead outside: to a directory, a file, a missing file, or below a linked directory", async () => {
    const error = await refused("out-dir/secret.txt");
    expect(error.details.resolved).toBe(join(outsideDir, "secret.txt"));
    await refused("out-dir");
    await refused("out-file");
    await refused("dangling-out");
    await refused("out-dir/new/deeper.txt");
  });

  it("refuses a loop of symlinks instead of recursing forever", async () => {
    const error = await refused("loop-a/x");
    expect(error.message).toMatch(/loop of symbolic links/);
  });
});
