import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readTar, writeTar } from "./tar.js";

const allBytes = Uint8Array.from({ length: 256 }, (_, i) => i);
const longName = `${"deep/".repeat(30)}${"é".repeat(60)}-file.txt`;
const hasTar = spawnSync("tar", ["--version"]).status === 0;
const scratch = mkdtempSync(join(tmpdir(), "openrath-tar-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("tar", () => {
  it("round-trips files, directories and symlinks with their content and modes", () => {
    const archive = writeTar([
      { name: "dir", type: "directory" },
      { name: "dir/all.bin", type: "file", data: allBytes, mode: 0o755 },
      { name: "empty.txt", type: "file", data: new Uint8Array(0) },
      { name: "exactly-512", type: "file", data: new Uint8Array(512).fill(7) },
      { name: "link", type: "symlink", linkName: "dir/all.bin" },
    ]);
    expect(archive.length % 512).toBe(0);
    const entries = readTar(archive);
    expect(entries.map((e) => [e.name, e.type, e.size])).toEqual([
      ["dir/", "directory", 0],
      ["dir/all.bin", "file", 256],
      ["empty.txt", "file", 0],
      ["exactly-512", "file", 512],
      ["link", "symlink", 0],
    ]);
    expect(Array.from(entries[1]!.data)).toEqual(Array.from(allBytes));
    expect(entries[1]!.mode).toBe(0o755);
    expect(entries[2]!.mode).toBe(0o644);
    expect(entries[3]!.data.every((b) => b === 7)).toBe(true);
    expect(entries[4]!.linkName).toBe("dir/all.bin");
  });

  it("carries names and link targets longer than 100 bytes in PAX records", () => {
    const longTarget = `/${"target/".repeat(20)}end`;
    const entries = readTar(
      writeTar([
        { name: longName, type: "file", data: new TextEncoder().encode("long") },
        { name: "l", type: "symlink", linkName: longTarget },
      ]),
    );
    expect(entries.map((e) => e.name)).toEqual([longName, "l"]);
    expect(new TextDecoder().decode(entries[0]!.data)).toBe("long");
    expect(entries[1]!.linkName).toBe(longTarget);
  });

  it("gets PAX record lengths right where the length gains a digit", () => {
    // Records whose body is 95-99 bytes long need a three-digit length.
    for (let extra = 80; extra < 110; extra++) {
      const name = `${"n".repeat(101)}${"x".repeat(extra)}`;
      expect(readTar(writeTar([{ name, type: "file" }]))[0]!.name).toBe(name);
    }
  });

  it("rejects a header with a bad checksum and a truncated entry", () => {
    const archive = writeTar([{ name: "a.txt", type: "file", data: new Uint8Array(600) }]);
    const corrupt = archive.slice();
    corrupt[0] = "b".charCodeAt(0);
    expect(() => readTar(corrupt)).toThrow(/checksum/);
    expect(() => readTar(archive.slice(0, 1024))).toThrow(/truncated/);
  });

  it("reads GNU long-name entries", () => {
    const name = "g".repeat(150);
    const body = new TextEncoder().encode(`${name}\0`);
    const gnu = writeTar([{ name: "././@LongLink", type: "file", data: body }]).slice(0, 1024);
    // Turn the first header into a GNU `L` header (type flag at byte 156) and fix its checksum.
    gnu[156] = "L".charCodeAt(0);
    gnu.fill(0x20, 148, 156);
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += gnu[i]!;
    gnu.set(new TextEncoder().encode(`${sum.toString(8).padStart(6, "0")}\0 `), 148);
    const real = writeTar([{ name: "short", type: "file", data: new TextEncoder().encode("gnu") }]);
    const archive = new Uint8Array(gnu.length + real.length);
    archive.set(gnu, 0);
    archive.set(real, gnu.length);
    const entries = readTar(archive);
    expect(entries.map((e) => e.name)).toEqual([name]);
    expect(new TextDecoder().decode(entries[0]!.data)).toBe("gnu");
  });

  it.skipIf(!hasTar)("writes archives that GNU tar extracts byte for byte", () => {
    const dir = join(scratch, "extract");
    mkdirSync(dir, { recursive: true });
    const archive = writeTar([
      { name: "d", type: "directory" },
      { name: "d/all.bin", type: "file", data: allBytes },
      { name: longName, type: "file", data: new TextEncoder().encode("pax name") },
    ]);
    writeFileSync(join(scratch, "out.tar"), archive);
    const result = spawnSync("tar", ["-xf", join(scratch, "out.tar"), "-C", dir], { encoding: "utf8" });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const check = spawnSync(
      "sh",
      ["-c", 'od -An -tx1 -v d/all.bin | tr -d " \\n"; echo; cat "$1"', "sh", longName],
      {
        cwd: dir,
        encoding: "utf8",
      },
    );
    const hex = Array.from(allBytes, (b) => b.toString(16).padStart(2, "0")).join("");
    expect(check.stdout).toBe(`${hex}\npax name`);
  });

  it.skipIf(!hasTar)("reads archives GNU tar writes in the PAX and GNU formats", () => {
    const source = join(scratch, "source");
    mkdirSync(join(source, "sub"), { recursive: true });
    writeFileSync(join(source, "sub", "all.bin"), allBytes);
    const long = "L".repeat(180);
    writeFileSync(join(source, long), "long name");
    for (const format of ["posix", "gnu"]) {
      const result = spawnSync("tar", [`--format=${format}`, "-cf", "-", "-C", source, "sub", long]);
      expect(result.status).toBe(0);
      const entries = readTar(new Uint8Array(result.stdout));
      const byName = new Map(entries.map((e) => [e.name.replace(/\/$/, ""), e]));
      expect(byName.get("sub")?.type).toBe("directory");
      expect(Array.from(byName.get("sub/all.bin")!.data)).toEqual(Array.from(allBytes));
      expect(new TextDecoder().decode(byName.get(long)!.data)).toBe("long name");
    }
  });
});
