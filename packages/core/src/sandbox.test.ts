import { OpenRathError } from "@openrath/core";
import {
  checkTimeout,
  confinePath,
  DEFAULT_EXEC_TIMEOUT_MS,
  decodeTextFile,
  OutputBuffer,
  resolveExecTimeout,
  truncationMarker,
} from "@openrath/core/backend";
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

  it("caps the kept bytes and the callback alike, both ending with the marker of the count left out", () => {
    const seen: string[] = [];
    const out = new OutputBuffer(4, (t) => seen.push(t));
    out.push("abc");
    out.push("defgh");
    expect(out.truncated).toBe(true);
    expect(seen.join("")).toBe("abcd");
    expect(out.text()).toBe(`abcd${truncationMarker(4)}`);
    expect(seen.join("")).toBe(`abcd${truncationMarker(4)}`);
    expect(out.text(), "a second text() returns the same").toBe(`abcd${truncationMarker(4)}`);
    expect(seen).toHaveLength(3);
  });

  it("hands a flood past the cap to the callback as nothing more than the cap", () => {
    let received = 0;
    const out = new OutputBuffer(1024, (t) => {
      received += t.length;
    });
    const chunk = new Uint8Array(64 * 1024).fill(0x78);
    for (let i = 0; i < 800; i++) out.push(chunk); // 50 MiB
    expect(received).toBe(1024);
    expect(out.omittedBytes).toBe(800 * 64 * 1024 - 1024);
  });
});

describe("timeouts", () => {
  it("layers exec over spec over the default, with Infinity (or a spec's null) as the opt-out", () => {
    expect(resolveExecTimeout(undefined, undefined)).toBe(DEFAULT_EXEC_TIMEOUT_MS);
    expect(resolveExecTimeout(undefined, 5_000)).toBe(5_000);
    expect(resolveExecTimeout(200, 5_000)).toBe(200);
    expect(resolveExecTimeout(Number.POSITIVE_INFINITY, 5_000)).toBe(Number.POSITIVE_INFINITY);
    expect(resolveExecTimeout(undefined, null)).toBe(Number.POSITIVE_INFINITY);
    expect(resolveExecTimeout(2 ** 40, undefined), "beyond setTimeout's range is none").toBe(
      Number.POSITIVE_INFINITY,
    );
  });

  it.each([0, -1, Number.NaN, "10"])("refuses an exec timeoutMs of %s with invalid_argument", (value) => {
    let error: unknown;
    try {
      resolveExecTimeout(value, undefined);
    } catch (e) {
      error = e;
    }
    expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
    expect(() => checkTimeout(value, "x")).toThrow(/x must be a positive number/);
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
