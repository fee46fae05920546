import type { SandboxV1 } from "@openrath/core";
import { expect } from "vitest";
import { defineGroup } from "./internal/define-group.js";
import { expectSandboxError } from "./internal/expect-sandbox-error.js";
import type { SandboxSuiteContext } from "./suite-context.js";

/** Paths that leave any workspace other than `/` (absolute ones are dropped when they lie inside it). */
function escapingPaths(sandbox: SandboxV1, more: readonly string[] = []): string[] {
  const root = sandbox.workspace.replace(/\/+$/, "");
  const inside = (path: string) => path === root || path.startsWith(`${root}/`);
  return ["../x", "a/../../x", "/etc/passwd", ...more].filter(
    (path) => !path.startsWith("/") || !inside(path),
  );
}

/** Whether `path` (resolved by the shell in the workspace) exists, as seen from inside the sandbox. */
async function presentInside(sandbox: SandboxV1, path: string): Promise<boolean> {
  const result = await sandbox.exec([
    "sh",
    "-c",
    'if [ -e "$1" ] || [ -L "$1" ]; then echo yes; else echo no; fi',
    "sh",
    path,
  ]);
  return result.stdout.trim() === "yes";
}

async function shell(sandbox: SandboxV1, script: string): Promise<string> {
  const result = await sandbox.exec(script);
  expect(result.exitCode, `setup command failed: ${script}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

/**
 * Paths: every file operation and `exec`'s `cwd` refuse `..`, absolute paths outside the workspace
 * and symlinks that lead out of it, while absolute paths and symlinks that stay inside work.
 */
export function pathsSuite(context: SandboxSuiteContext): void {
  defineGroup(context, "paths", (group) => {
    group.test("readFile refuses paths that leave the workspace", async () => {
      const sandbox = await group.open();
      for (const path of escapingPaths(sandbox)) {
        await expectSandboxError(
          () => sandbox.readFile(path),
          "path_outside_workspace",
          `readFile(${JSON.stringify(path)})`,
        );
        await expectSandboxError(
          () => sandbox.readFile(path, { encoding: "bytes" }),
          "path_outside_workspace",
          `readFile(${JSON.stringify(path)}, { encoding: "bytes" })`,
        );
      }
    });

    group.test("writeFile refuses paths that leave the workspace and writes nothing", async () => {
      const sandbox = await group.open();
      const name = `openrath-conformance-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}.txt`;
      for (const path of [`../${name}`, `a/../../${name}`]) {
        await expectSandboxError(
          () => sandbox.writeFile(path, "escaped"),
          "path_outside_workspace",
          `writeFile(${JSON.stringify(path)})`,
        );
      }
      expect(
        await presentInside(sandbox, `../${name}`),
        `writeFile created ../${name} outside the workspace`,
      ).toBe(false);
      expect(await presentInside(sandbox, "a"), "a refused writeFile still created directory a").toBe(false);
      for (const path of escapingPaths(sandbox).filter((p) => p.startsWith("/"))) {
        await expectSandboxError(
          () => sandbox.writeFile(path, "escaped"),
          "path_outside_workspace",
          `writeFile(${JSON.stringify(path)})`,
        );
      }
    });

    group.test("listFiles refuses paths that leave the workspace", async () => {
      const sandbox = await group.open();
      for (const path of escapingPaths(sandbox, ["..", "/etc"])) {
        await expectSandboxError(
          () => sandbox.listFiles(path),
          "path_outside_workspace",
          `listFiles(${JSON.stringify(path)})`,
        );
        await expectSandboxError(
          () => sandbox.listFiles(path, { recursive: true }),
          "path_outside_workspace",
          `listFiles(${JSON.stringify(path)}, { recursive: true })`,
        );
      }
    });

    group.test("exists throws for paths that leave the workspace instead of answering", async () => {
      const sandbox = await group.open();
      for (const path of escapingPaths(sandbox)) {
        await expectSandboxError(
          () => sandbox.exists(path),
          "path_outside_workspace",
          `exists(${JSON.stringify(path)})`,
        );
      }
    });

    group.test("exec refuses a cwd that leaves the workspace", async () => {
      const sandbox = await group.open();
      for (const cwd of escapingPaths(sandbox, ["..", "/etc"])) {
        await expectSandboxError(
          () => sandbox.exec("pwd", { cwd }),
          "path_outside_workspace",
          `exec("pwd", { cwd: ${JSON.stringify(cwd)} })`,
        );
      }
    });

    group.test("an absolute path inside the workspace works everywhere", async () => {
      const sandbox = await group.open();
      const root = sandbox.workspace.replace(/\/+$/, "");
      const file = `${root}/in.txt`;
      expect((await sandbox.writeFile(file, "inside")).bytesWritten).toBe(6);
      expect(await sandbox.readFile(file)).toBe("inside");
      expect(await sandbox.readFile("in.txt")).toBe("inside");
      expect(Array.from(await sandbox.readFile(file, { encoding: "bytes" }))).toEqual(
        Array.from(new TextEncoder().encode("inside")),
      );
      expect(await sandbox.exists(file)).toBe(true);
      expect(await sandbox.exists(sandbox.workspace)).toBe(true);
      const listing = await sandbox.listFiles(sandbox.workspace);
      expect(listing.find((e) => e.name === "in.txt")).toMatchObject({
        path: "in.txt",
        type: "file",
        size: 6,
      });
      await sandbox.writeFile(`${root}/nested/abs.txt`, "abs");
      expect((await sandbox.exec("cat abs.txt", { cwd: `${root}/nested` })).stdout).toBe("abs");
      expect((await sandbox.exec("pwd", { cwd: sandbox.workspace })).stdout).toBe(`${sandbox.workspace}\n`);
    });

    group.test("a path with .. that stays inside the workspace works", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("a/../b/./c.txt", "normalized");
      expect(await sandbox.readFile("b/c.txt")).toBe("normalized");
      expect(await sandbox.readFile("./b/../b/c.txt")).toBe("normalized");
      expect(await sandbox.exists("b/x/../c.txt")).toBe(true);
      expect((await sandbox.listFiles("b/..")).some((e) => e.name === "b")).toBe(true);
      expect((await sandbox.exec("cat c.txt", { cwd: "b/../b" })).stdout).toBe("normalized");
    });

    group.test("a symlink to a directory outside is refused", async () => {
      const sandbox = await group.open();
      await shell(sandbox, "ln -s /etc escape");
      await expectSandboxError(
        () => sandbox.readFile("escape/passwd"),
        "path_outside_workspace",
        'readFile("escape/passwd")',
      );
      await expectSandboxError(
        () => sandbox.readFile("escape/passwd", { encoding: "bytes" }),
        "path_outside_workspace",
        'readFile("escape/passwd", { encoding: "bytes" })',
      );
      await expectSandboxError(
        () => sandbox.writeFile("escape/openrath-conformance.txt", "escaped"),
        "path_outside_workspace",
        'writeFile("escape/openrath-conformance.txt")',
      );
      await expectSandboxError(
        () => sandbox.listFiles("escape"),
        "path_outside_workspace",
        'listFiles("escape")',
      );
      await expectSandboxError(
        () => sandbox.exists("escape/passwd"),
        "path_outside_workspace",
        'exists("escape/passwd")',
      );
      await expectSandboxError(
        () => sandbox.exec("pwd", { cwd: "escape" }),
        "path_outside_workspace",
        'exec("pwd", { cwd: "escape" })',
      );
      expect(await presentInside(sandbox, "/etc/openrath-conformance.txt")).toBe(false);
    });

    group.test("a symlink to a file outside is refused for reading and writing", async () => {
      const sandbox = await group.open();
      const before = await sandbox.exec("cat /etc/hostname");
      await shell(sandbox, "ln -s /etc/hostname link.txt");
      await expectSandboxError(
        () => sandbox.readFile("link.txt"),
        "path_outside_workspace",
        'readFile("link.txt")',
      );
      await expectSandboxError(
        () => sandbox.readFile("link.txt", { encoding: "bytes" }),
        "path_outside_workspace",
        'readFile("link.txt", { encoding: "bytes" })',
      );
      await expectSandboxError(
        () => sandbox.writeFile("link.txt", "escaped"),
        "path_outside_workspace",
        'writeFile("link.txt")',
      );
      const after = await sandbox.exec("cat /etc/hostname");
      expect(after.stdout, "/etc/hostname changed through the symlink").toBe(before.stdout);
      expect(after.exitCode).toBe(before.exitCode);
    });

    group.test("writing through symlinks leaves files outside the workspace untouched", async () => {
      const sandbox = await group.open();
      const made = await sandbox.exec(
        'd=$(mktemp -d /tmp/openrath-conformance.XXXXXX) && printf original > "$d/target.txt" && printf %s "$d"',
      );
      // Without a writable /tmp inside the sandbox there is nothing outside to plant; the refusals are
      // still checked against /etc by the tests above.
      if (made.exitCode !== 0) return;
      const outsideDir = made.stdout.trim();
      try {
        await shell(
          sandbox,
          `ln -s '${outsideDir}/target.txt' out.txt && ln -s '${outsideDir}/new.txt' dangling.txt && ln -s '${outsideDir}' outdir`,
        );
        // A sandbox may give every command its own /tmp; then the target is gone (the links dangle),
        // and only the refusals can be checked.
        const persists = (await sandbox.exec(`test -f '${outsideDir}/target.txt'`)).exitCode === 0;
        await expectSandboxError(
          () => sandbox.writeFile("out.txt", "changed"),
          "path_outside_workspace",
          'writeFile("out.txt")',
        );
        await expectSandboxError(
          () => sandbox.writeFile("dangling.txt", "created"),
          "path_outside_workspace",
          'writeFile("dangling.txt") (a symlink to a missing file outside)',
        );
        await expectSandboxError(
          () => sandbox.writeFile("outdir/created.txt", "created"),
          "path_outside_workspace",
          'writeFile("outdir/created.txt")',
        );
        await expectSandboxError(
          () => sandbox.writeFile("outdir/sub/created.txt", "created"),
          "path_outside_workspace",
          'writeFile("outdir/sub/created.txt")',
        );
        await expectSandboxError(
          () => sandbox.readFile("out.txt"),
          "path_outside_workspace",
          'readFile("out.txt")',
        );
        if (persists) {
          const listing = await sandbox.exec(`cat '${outsideDir}/target.txt'; echo; ls -A '${outsideDir}'`);
          expect(listing.stdout).toBe("original\ntarget.txt\n");
        }
      } finally {
        await sandbox.exec(`rm -rf '${outsideDir}'`);
      }
    });

    group.test("a symlink that stays inside the workspace is followed", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("real/data.txt", "inside");
      await shell(
        sandbox,
        'ln -s real/data.txt alias.txt && ln -s real realdir && ln -s "$(pwd)/real" absreal',
      );
      expect(await sandbox.readFile("alias.txt")).toBe("inside");
      expect(await sandbox.readFile("realdir/data.txt")).toBe("inside");
      expect(await sandbox.readFile("absreal/data.txt")).toBe("inside");
      expect(await sandbox.exists("realdir/data.txt")).toBe(true);
      expect((await sandbox.listFiles("realdir")).map((e) => e.name)).toEqual(["data.txt"]);
      expect((await sandbox.exec("cat data.txt", { cwd: "realdir" })).stdout).toBe("inside");
      await sandbox.writeFile("realdir/more.txt", "more");
      expect(await sandbox.readFile("real/more.txt")).toBe("more");
      await sandbox.writeFile("alias.txt", "changed");
      expect(await sandbox.readFile("alias.txt")).toBe("changed");
    });
  });
}
