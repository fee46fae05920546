import { SandboxError } from "@openrath/core";
import { checkCode, checkCommand, checkWriteData } from "@openrath/core/backend";
import { describe, expect, it } from "vitest";

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("sandbox argument checks", () => {
  it("checkCommand passes a shell string and an argv through unchanged", () => {
    const argv = ["echo", "a b"];
    expect(checkCommand("echo hi")).toBe("echo hi");
    expect(checkCommand("")).toBe("");
    expect(checkCommand(argv)).toBe(argv);
  });

  it.each([[[]], [[1]], [["a", 2]], [null], [42], [{ 0: "a", length: 1 }]])(
    "checkCommand refuses %j with a SandboxError invalid_argument carrying the command",
    (command) => {
      const error = thrown(() => checkCommand(command));
      expect(SandboxError.isInstance(error, "invalid_argument")).toBe(true);
      expect((error as SandboxError).details).toEqual({ command });
    },
  );

  it("checkWriteData passes strings and bytes, refuses anything else naming the path", () => {
    const bytes = new Uint8Array([1, 2]);
    expect(checkWriteData("x", "a.txt")).toBe("x");
    expect(checkWriteData(bytes, "a.txt")).toBe(bytes);
    for (const data of [42, null, undefined, [1, 2], new ArrayBuffer(2)]) {
      const error = thrown(() => checkWriteData(data, "a.txt"));
      expect(SandboxError.isInstance(error, "invalid_argument"), String(data)).toBe(true);
      expect((error as SandboxError).details).toEqual({ path: "a.txt" });
    }
  });

  it("checkCode passes a string, refuses anything else naming the language", () => {
    expect(checkCode("print(1)", "python")).toBe("print(1)");
    const error = thrown(() => checkCode(42, "python"));
    expect(SandboxError.isInstance(error, "invalid_argument")).toBe(true);
    expect((error as SandboxError).message).toContain("number");
    expect((error as SandboxError).details).toEqual({ language: "python" });
  });
});
