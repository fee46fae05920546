import { OpenRathError } from "@openrath/core";
import { confinePath, decodeTextFile, OutputBuffer, truncationMarker } from "@openrath/core/backend";
import { describe, expect, it } from "vitest";

describe("confinePath", () => {
  it.each([
    ["a.txt", "a.txt"],
    ["./a/./b/../c.txt", "a/c.txt"],
    ["", "."],
    [".", "."],
    ["a//b/", "a/b"],
    ["/workspace", "."],
    ["/workspace/x/y", "x/y"],
    ["/workspace/x/../y", "y"],
  ])("%j → %j", (path, expected) => {
    expect(confinePath(path, "/workspace")).toBe(expected);
  });

  it.each(["..", "../x", "a/../../x", "/etc/passwd", "/workspace-other/x", "/workspace/../etc"])(
    "refuses %j",
    (path) => {
      let error: unknown;
      try {
        confinePath(path, "/workspace/");
      } catch (e) {
        error = e;
      }
      expect(OpenRathError.isInstance(error, "path_outside_workspace")).toBe(true);
      expect((error as Error).message).toContain(JSON.stringify(path));
    },
  );

  it("accepts everything under a root workspace and refuses NUL bytes", () => {
    expect(confinePath("/etc/hosts", "/")).toBe("etc/hosts");
    expect(() => confinePath("a\0b", "/w")).toThrow(/NUL/);
  });
});

describe("OutputBuffer", () => {
  it("keeps everything under the cap and streams decoded text across split characters", () => {
    const seen: string[] = [];
    const out = new OutputBuffer(100, (t) => seen.push(t));
    const bytes = new TextEncoder().encode("héllo 東京");
    out.push(bytes.subarray(0, 2));
    out.push(bytes.subarray(2));
    expect(out.text()).toBe("héllo 東京");
    expect(seen.join("")).toBe("héllo 東京");
    expect(out.truncated).toBe(false);
  });

  it("caps the kept bytes and appends a marker with the count left out, while streaming all of it", () => {
    const seen: string[] = [];
    const out = new OutputBuffer(4, (t) => seen.push(t));
    out.push("abc");
    out.push("defgh");
    expect(out.truncated).toBe(true);
    expect(out.text()).toBe(`abcd${truncationMarker(4)}`);
    expect(seen.join("")).toBe("abcdefgh");
  });
});

describe("decodeTextFile", () => {
  it("decodes UTF-8 text", () => {
    expect(decodeTextFile(new TextEncoder().encode("ok ✓"), "a.txt")).toBe("ok ✓");
  });

  it.each([
    ["invalid UTF-8", new Uint8Array([0xff, 0xfe, 0x41])],
    ["a NUL byte", new Uint8Array([0x41, 0x00, 0x42])],
  ])("refuses %s as binary_file", (_name, bytes) => {
    let error: unknown;
    try {
      decodeTextFile(bytes, "blob.bin");
    } catch (e) {
      error = e;
    }
    expect(OpenRathError.isInstance(error, "binary_file")).toBe(true);
    expect((error as Error).message).toMatch(/blob\.bin.*encoding: "bytes"/);
  });
});
