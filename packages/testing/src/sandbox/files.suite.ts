import type { FileEntry } from "@openrath/core";
import { expect } from "vitest";
import { defineGroup } from "./internal/define-group.js";
import { expectSandboxError } from "./internal/expect-sandbox-error.js";
import type { SandboxSuiteContext } from "./suite-context.js";

const UNICODE = "héllo 東京 🚀\nsecond line\n";

/** Every byte value once, 0 to 255. */
function allBytes(): Uint8Array {
  return Uint8Array.from({ length: 256 }, (_, i) => i);
}

/**
 * Files: text and binary round trips, parent directories, overwrite, the file error codes,
 * listings with workspace-relative paths, `exists`, and one file system shared with `exec`.
 */
export function filesSuite(context: SandboxSuiteContext): void {
  defineGroup(context, "files", (group) => {
    group.test("text round-trips with unicode and bytesWritten is the UTF-8 length", async () => {
      const sandbox = await group.open();
      const written = await sandbox.writeFile("text.txt", UNICODE);
      expect(written.bytesWritten).toBe(new TextEncoder().encode(UNICODE).length);
      expect(await sandbox.readFile("text.txt")).toBe(UNICODE);
      expect(await sandbox.readFile("text.txt", { encoding: "utf8" })).toBe(UNICODE);
    });

    group.test("an empty file round-trips", async () => {
      const sandbox = await group.open();
      expect((await sandbox.writeFile("empty.txt", "")).bytesWritten).toBe(0);
      expect(await sandbox.readFile("empty.txt")).toBe("");
      expect(Array.from(await sandbox.readFile("empty.txt", { encoding: "bytes" }))).toEqual([]);
    });

    group.test("every byte value round-trips with encoding bytes", async () => {
      const sandbox = await group.open();
      const bytes = allBytes();
      expect((await sandbox.writeFile("all.bin", bytes)).bytesWritten).toBe(256);
      const read = await sandbox.readFile("all.bin", { encoding: "bytes" });
      expect(read).toBeInstanceOf(Uint8Array);
      expect(Array.from(read)).toEqual(Array.from(bytes));
      expect((await sandbox.exec("wc -c < all.bin")).stdout.trim()).toBe("256");
    });

    group.test("reading a binary file as text throws binary_file", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("all.bin", allBytes());
      await expectSandboxError(() => sandbox.readFile("all.bin"), "binary_file", 'readFile("all.bin")');
      await sandbox.writeFile("invalid.txt", new Uint8Array([0x68, 0x69, 0xff, 0xfe]));
      await expectSandboxError(
        () => sandbox.readFile("invalid.txt"),
        "binary_file",
        'readFile("invalid.txt")',
      );
    });

    group.test("text written as bytes reads back as text", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("encoded.txt", new TextEncoder().encode(UNICODE));
      expect(await sandbox.readFile("encoded.txt")).toBe(UNICODE);
    });

    group.test("writeFile creates parent directories", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("a/b/c/deep.txt", "deep");
      expect(await sandbox.readFile("a/b/c/deep.txt")).toBe("deep");
      expect(await sandbox.exists("a/b/c")).toBe(true);
      const entries = await sandbox.listFiles("a/b");
      expect(entries.map((e) => [e.name, e.path, e.type])).toEqual([["c", "a/b/c", "directory"]]);
    });

    group.test("writeFile replaces an existing file", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("over.txt", "a much longer first version of the content");
      const written = await sandbox.writeFile("over.txt", "short");
      expect(written.bytesWritten).toBe(5);
      expect(await sandbox.readFile("over.txt")).toBe("short");
      expect((await sandbox.listFiles(".")).find((e) => e.name === "over.txt")?.size).toBe(5);
    });

    group.test("readFile of a missing file throws file_not_found", async () => {
      const sandbox = await group.open();
      await expectSandboxError(
        () => sandbox.readFile("missing.txt"),
        "file_not_found",
        'readFile("missing.txt")',
      );
      await expectSandboxError(
        () => sandbox.readFile("no/such/dir/missing.txt", { encoding: "bytes" }),
        "file_not_found",
        'readFile("no/such/dir/missing.txt", { encoding: "bytes" })',
      );
    });

    group.test("readFile of a directory throws not_a_file", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("dir/inner.txt", "x");
      await expectSandboxError(() => sandbox.readFile("dir"), "not_a_file", 'readFile("dir")');
      await expectSandboxError(
        () => sandbox.readFile("dir", { encoding: "bytes" }),
        "not_a_file",
        'readFile("dir", { encoding: "bytes" })',
      );
    });

    group.test("listFiles lists the root sorted by name with path, type and size", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("zeta.txt", "12345");
      await sandbox.writeFile("alpha.txt", "");
      await sandbox.writeFile("mid/inner.txt", "inner");
      await sandbox.writeFile("beta.txt", "é");
      for (const listing of [await sandbox.listFiles("."), await sandbox.listFiles()]) {
        // A backend's workspace may hold files of its own; the ones this test wrote keep their order.
        const ours = new Set(["alpha.txt", "beta.txt", "mid", "zeta.txt"]);
        const names = listing.map((e) => e.name).filter((name) => ours.has(name));
        expect(names).toEqual(["alpha.txt", "beta.txt", "mid", "zeta.txt"]);
        const byName = new Map(listing.map((e) => [e.name, e]));
        expect(byName.get("zeta.txt")).toEqual({ name: "zeta.txt", path: "zeta.txt", type: "file", size: 5 });
        expect(byName.get("alpha.txt")).toEqual({
          name: "alpha.txt",
          path: "alpha.txt",
          type: "file",
          size: 0,
        });
        expect(byName.get("beta.txt")).toEqual({ name: "beta.txt", path: "beta.txt", type: "file", size: 2 });
        expect(byName.get("mid")).toMatchObject({ name: "mid", path: "mid", type: "directory" });
        expect(typeof byName.get("mid")!.size).toBe("number");
      }
    });

    group.test("listFiles of a subdirectory gives workspace-relative paths", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("top/b.txt", "b");
      await sandbox.writeFile("top/a.txt", "aa");
      await sandbox.writeFile("top/sub/c.txt", "c");
      const entries = await sandbox.listFiles("top");
      expect(entries.map((e) => [e.name, e.path, e.type])).toEqual([
        ["a.txt", "top/a.txt", "file"],
        ["b.txt", "top/b.txt", "file"],
        ["sub", "top/sub", "directory"],
      ]);
      expect(entries[0]!.size).toBe(2);
    });

    group.test("listFiles recursive lists nested files with workspace-relative paths", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("tree/one.txt", "1");
      await sandbox.writeFile("tree/a/two.txt", "22");
      await sandbox.writeFile("tree/a/b/three.txt", "333");
      await sandbox.writeFile("outside-tree.txt", "x");
      const entries: FileEntry[] = await sandbox.listFiles("tree", { recursive: true });
      const files = entries.filter((e) => e.type === "file");
      expect(files.map((e) => e.path).sort()).toEqual([
        "tree/a/b/three.txt",
        "tree/a/two.txt",
        "tree/one.txt",
      ]);
      const three = files.find((e) => e.path === "tree/a/b/three.txt")!;
      expect(three).toEqual({ name: "three.txt", path: "tree/a/b/three.txt", type: "file", size: 3 });
      for (const entry of entries) {
        expect(entry.path.startsWith("tree/"), `${entry.path} is not under tree/`).toBe(true);
        expect(entry.path.endsWith(`/${entry.name}`)).toBe(true);
        if (entry.type !== "file") {
          expect(["tree/a", "tree/a/b"]).toContain(entry.path);
          expect(entry.type).toBe("directory");
        }
      }
      const fromRoot = await sandbox.listFiles(".", { recursive: true });
      expect(fromRoot.map((e) => e.path)).toEqual(
        expect.arrayContaining(["outside-tree.txt", "tree/a/b/three.txt"]),
      );
    });

    group.test("listFiles of a missing directory throws file_not_found", async () => {
      const sandbox = await group.open();
      await expectSandboxError(
        () => sandbox.listFiles("missing-dir"),
        "file_not_found",
        'listFiles("missing-dir")',
      );
    });

    group.test("listFiles of a file throws not_a_directory", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("plain.txt", "x");
      await expectSandboxError(
        () => sandbox.listFiles("plain.txt"),
        "not_a_directory",
        'listFiles("plain.txt")',
      );
    });

    group.test("exists tells files and directories from missing paths", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("here/there.txt", "x");
      expect(await sandbox.exists("here/there.txt")).toBe(true);
      expect(await sandbox.exists("here")).toBe(true);
      expect(await sandbox.exists(".")).toBe(true);
      expect(await sandbox.exists("nowhere.txt")).toBe(false);
      expect(await sandbox.exists("here/nowhere/deeper.txt")).toBe(false);
    });

    group.test("a file written by writeFile is visible to exec", async () => {
      const sandbox = await group.open();
      await sandbox.writeFile("shared/from-write.txt", UNICODE);
      const result = await sandbox.exec("cat shared/from-write.txt");
      expect(result.stdout).toBe(UNICODE);
    });

    group.test("a file made by exec is visible to readFile, listFiles and exists", async () => {
      const sandbox = await group.open();
      await sandbox.exec("mkdir -p made && printf 'from exec' > made/by-exec.txt");
      expect(await sandbox.readFile("made/by-exec.txt")).toBe("from exec");
      expect(await sandbox.exists("made/by-exec.txt")).toBe(true);
      expect((await sandbox.listFiles("made")).map((e) => e.name)).toEqual(["by-exec.txt"]);
    });
  });
}
