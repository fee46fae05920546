import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectLanguages } from "./detect-languages.js";
import { findExecutable } from "./find-executable.js";

const dir = mkdtempSync(join(tmpdir(), "openrath-local-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("findExecutable", () => {
  it("finds an executable file on the search path and skips non-executables", () => {
    writeFileSync(join(dir, "tool"), "#!/bin/sh\n");
    expect(findExecutable("tool", dir)).toBe(undefined);
    chmodSync(join(dir, "tool"), 0o755);
    expect(findExecutable("tool", `/nonexistent:${dir}`)).toBe(join(dir, "tool"));
  });

  it("ignores relative PATH entries and checks names with a slash as they are", () => {
    expect(findExecutable("tool", ".")).toBe(undefined);
    expect(findExecutable(join(dir, "tool"), "")).toBe(join(dir, "tool"));
    expect(findExecutable("no-such-tool-here", process.env.PATH ?? "")).toBe(undefined);
  });
});

describe("detectLanguages", () => {
  it("always offers javascript on this Node.js and sh", () => {
    const languages = detectLanguages("");
    expect(languages.javascript?.command).toBe(process.execPath);
    expect(languages.sh?.command).toBe("/bin/sh");
    expect(languages.python).toBe(undefined);
  });

  it("offers python and bash when the search path has them, in manifest order", () => {
    writeFileSync(join(dir, "python3"), "#!/bin/sh\n");
    writeFileSync(join(dir, "bash"), "#!/bin/sh\n");
    chmodSync(join(dir, "python3"), 0o755);
    chmodSync(join(dir, "bash"), 0o755);
    const languages = detectLanguages(dir);
    expect(Object.keys(languages)).toEqual(["python", "javascript", "bash", "sh"]);
    expect(languages.python).toEqual({ command: join(dir, "python3"), args: ["-u"], extension: ".py" });
  });
});
