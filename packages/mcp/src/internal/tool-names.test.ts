import { describe, expect, it } from "vitest";
import { exposedToolNames, isValidToolName, prefixed, sanitizeToolName } from "./tool-names.js";

describe("tool names", () => {
  it("replaces characters outside [a-zA-Z0-9_-] with _", () => {
    expect(sanitizeToolName("files.read v2")).toBe("files_read_v2");
    expect(sanitizeToolName("ünïcode/tool")).toBe("_n_code_tool");
    expect(sanitizeToolName("")).toBe("tool");
  });

  it("cuts names over 64 characters with a stable hash suffix that keeps them apart", () => {
    const a = sanitizeToolName(`${"a".repeat(70)}_one`);
    const b = sanitizeToolName(`${"a".repeat(70)}_two`);
    expect(a).toHaveLength(64);
    expect(b).toHaveLength(64);
    expect(a).not.toBe(b);
    expect(sanitizeToolName(`${"a".repeat(70)}_one`)).toBe(a);
    expect(isValidToolName(a)).toBe(true);
  });

  it("joins a prefix with _ unless it ends in _ or -", () => {
    expect(prefixed("fs", "read")).toBe("fs_read");
    expect(prefixed("fs_", "read")).toBe("fs_read");
    expect(prefixed("fs-", "read")).toBe("fs-read");
    expect(prefixed(undefined, "read")).toBe("read");
  });

  it("makes names unique in listing order", () => {
    expect(exposedToolNames(["a.b", "a b", "a_b", "c"], "x")).toEqual(["x_a_b", "x_a_b_2", "x_a_b_3", "x_c"]);
    for (const name of exposedToolNames(["x".repeat(80), "x".repeat(80)]))
      expect(isValidToolName(name)).toBe(true);
  });
});
