import { OpenRathError, SandboxError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { expectSandboxError } from "./expect-sandbox-error.js";

describe("expectSandboxError", () => {
  it("returns the error when the promise rejects with the code", async () => {
    const error = await expectSandboxError(
      () => Promise.reject(new SandboxError("file_not_found", "gone", { details: { path: "x" } })),
      "file_not_found",
      "readFile",
    );
    expect(error.details).toEqual({ path: "x" });
  });

  it("accepts an error from another copy of core through the shared marker", async () => {
    const foreign = Object.assign(new Error("closed"), { code: "sandbox_closed", details: {} });
    (foreign as unknown as Record<symbol, boolean>)[Symbol.for("openrath.error")] = true;
    expect(OpenRathError.isInstance(foreign, "sandbox_closed")).toBe(true);
    await expectSandboxError(() => Promise.reject(foreign), "sandbox_closed", "exec");
  });

  it("fails on another code, naming both", async () => {
    await expect(
      expectSandboxError(
        () => Promise.reject(new SandboxError("not_a_file", "dir")),
        "file_not_found",
        "readFile",
      ),
    ).rejects.toThrow(
      /readFile rejected with SandboxError code "not_a_file".*expected SandboxError code "file_not_found"/,
    );
  });

  it("fails when the promise resolves", async () => {
    await expect(
      expectSandboxError(() => Promise.resolve("text"), "path_outside_workspace", 'readFile("../x")'),
    ).rejects.toThrow(/readFile\("\.\.\/x"\) resolved with "text"/);
  });

  it("fails on a synchronous throw, even with the right code", async () => {
    await expect(
      expectSandboxError(
        () => {
          throw new SandboxError("sandbox_closed", "closed");
        },
        "sandbox_closed",
        "exec",
      ),
    ).rejects.toThrow(/exec threw synchronously/);
  });

  it("fails on a plain Error", async () => {
    await expect(
      expectSandboxError(() => Promise.reject(new TypeError("boom")), "aborted", "exec"),
    ).rejects.toThrow(/exec rejected with TypeError: boom/);
  });
});
