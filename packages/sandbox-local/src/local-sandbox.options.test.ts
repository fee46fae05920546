import { resolve } from "node:path";
import { SandboxError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { parseLocalSpec } from "./parse-local-spec.js";

function invalidField(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(SandboxError.isInstance(error, "invalid_spec")).toBe(true);
    return String((error as SandboxError).details.field);
  }
  throw new Error("expected invalid_spec");
}

describe("parseLocalSpec", () => {
  it("treats undefined and null as an empty spec with the backend's isolation", () => {
    expect(parseLocalSpec(undefined, "none")).toEqual({ isolation: "none" });
    expect(parseLocalSpec(null, "bubblewrap")).toEqual({ isolation: "bubblewrap" });
  });

  it("keeps every valid field and makes the workspace absolute", () => {
    const spec = parseLocalSpec(
      { workspace: "rel/dir", env: { A: "1" }, inheritEnv: false, timeoutMs: 500, isolation: "none" },
      "none",
    );
    expect(spec).toEqual({
      workspace: resolve("rel/dir"),
      env: { A: "1" },
      inheritEnv: false,
      timeoutMs: 500,
      isolation: "none",
    });
  });

  it("lets a spec tighten isolation but never loosen it", () => {
    expect(parseLocalSpec({ isolation: "bubblewrap" }, "none").isolation).toBe("bubblewrap");
    expect(invalidField(() => parseLocalSpec({ isolation: "none" }, "bubblewrap"))).toBe("isolation");
  });

  it("names the bad field", () => {
    expect(invalidField(() => parseLocalSpec({ workspace: "" }, "none"))).toBe("workspace");
    expect(invalidField(() => parseLocalSpec({ workspace: 3 }, "none"))).toBe("workspace");
    expect(invalidField(() => parseLocalSpec({ env: ["A=1"] }, "none"))).toBe("env");
    expect(invalidField(() => parseLocalSpec({ env: { A: 1 } }, "none"))).toBe("env.A");
    expect(invalidField(() => parseLocalSpec({ env: { "A=B": "1" } }, "none"))).toBe("env.A=B");
    expect(invalidField(() => parseLocalSpec({ isolation: "docker" }, "none"))).toBe("isolation");
    expect(invalidField(() => parseLocalSpec({ inheritEnv: "yes" }, "none"))).toBe("inheritEnv");
    expect(invalidField(() => parseLocalSpec({ timeoutMs: 0 }, "none"))).toBe("timeoutMs");
    expect(invalidField(() => parseLocalSpec({ timeoutMs: Number.POSITIVE_INFINITY }, "none"))).toBe(
      "timeoutMs",
    );
  });

  it("refuses unknown fields, so a misspelt one does not silently fall back to a default", () => {
    expect(invalidField(() => parseLocalSpec({ workdir: "/x" }, "none"))).toBe("workdir");
    expect(() => parseLocalSpec({ workdir: "/x" }, "none")).toThrow(/fields are workspace, env/);
  });

  it("refuses a spec that is not an object", () => {
    expect(() => parseLocalSpec("workspace", "none")).toThrow(SandboxError);
    expect(() => parseLocalSpec(["x"], "none")).toThrow(/must be an object/);
  });

  it("round-trips through JSON (a placement serializes its spec)", () => {
    const spec = parseLocalSpec({ workspace: "/w", timeoutMs: 10, env: { A: "b" } }, "none");
    expect(parseLocalSpec(JSON.parse(JSON.stringify(spec)), "none")).toEqual(spec);
  });
});
