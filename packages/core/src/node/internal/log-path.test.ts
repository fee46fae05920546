import { join, resolve, sep } from "node:path";
import { OpenRathError, Session } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { containedPath, sessionLogPath } from "./log-path.js";

const dir = resolve("logs-that-are-never-created");

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (OpenRathError.isInstance(error)) return error.code;
    throw error;
  }
  return undefined;
}

describe("containedPath", () => {
  it("keeps a plain file name directly inside its directory", () => {
    expect(containedPath(dir, "x.jsonl")).toBe(join(dir, "x.jsonl"));
    expect(containedPath(`${dir}${sep}`, "x.jsonl")).toBe(join(dir, "x.jsonl"));
  });

  it.each([
    ["../x.jsonl"],
    ["../../etc/passwd"],
    ["/tmp/x.jsonl"],
    ["a/b.jsonl"],
    ["a/../../b.jsonl"],
    [".."],
    ["."],
    [""],
    ["a\0b.jsonl"],
  ])("refuses %j with log_path_outside_dir (resolve and compare)", (name) => {
    expect(code(() => containedPath(dir, name))).toBe("log_path_outside_dir");
  });

  it("names the directory and the resolved path in the error", () => {
    try {
      containedPath(dir, "../x.jsonl");
      expect.fail("expected an error");
    } catch (error) {
      expect((error as OpenRathError).message).toContain(dir);
      expect((error as OpenRathError).details).toMatchObject({
        dir,
        resolved: JSON.stringify(resolve(dir, "../x.jsonl")),
      });
    }
  });
});

describe("sessionLogPath", () => {
  it("is <dir>/<id>.jsonl for a session id core made", () => {
    const { id } = Session.empty();
    expect(sessionLogPath(dir, id, "test")).toBe(join(dir, `${id}.jsonl`));
  });

  it.each([["../x"], ["/tmp/x"], ["a/b"], ["a\\b"], ["a\0b"], ["x".repeat(100_000)]])(
    "refuses the id %j with invalid_session_id before building a name",
    (id) => {
      expect(code(() => sessionLogPath(dir, id, "test"))).toBe("invalid_session_id");
    },
  );

  it("refuses a value that is not a string", () => {
    expect(code(() => sessionLogPath(dir, 42, "test"))).toBe("invalid_session_id");
  });
});
