import { resolve } from "node:path";
import { OpenRathError, SandboxError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { type LocalSandboxOptions, localSandbox } from "./local-sandbox.js";

const plain = localSandbox();
const isolated = localSandbox({ isolation: "bubblewrap" });

function invalidField(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(SandboxError.isInstance(error, "invalid_spec"), String(error)).toBe(true);
    expect((error as Error).name).toBe("SandboxError");
    return String((error as SandboxError).details.field);
  }
  throw new Error("expected invalid_spec");
}

describe("localSandbox(options)", () => {
  it("takes valid options, and none at all", () => {
    expect(
      localSandbox({ isolation: "bubblewrap", bwrapPath: "/usr/bin/bwrap", maxOutputBytes: 0 }).key,
    ).toBe("local");
    expect(localSandbox().capabilities.network).toBe("open");
    expect(isolated.capabilities.network).toBe("none");
  });

  it.each<[string, unknown]>([
    ["isolation", "vm"],
    ["bwrapPath", ""],
    ["bwrapPath", "a\0b"],
    ["maxOutputBytes", -1],
    ["maxOutputBytes", 1.5],
    ["timeout", 5],
  ])("refuses %s = %j with invalid_argument naming the field", (field, value) => {
    try {
      localSandbox({ [field]: value } as LocalSandboxOptions);
      expect.fail("expected a throw");
    } catch (error) {
      expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
      expect((error as OpenRathError).details).toMatchObject({ backend: "localSandbox", field });
      expect((error as Error).message).toMatch(/^Invalid options of localSandbox\(\): /);
    }
  });

  it("says which options there are when one is misspelt", () => {
    expect(() => localSandbox({ isolaton: "none" } as LocalSandboxOptions)).toThrow(
      /"isolaton" is "none"; it is not an option of localSandbox\(\); the fields are isolation, bwrapPath, maxOutputBytes/,
    );
  });
});

describe("the local spec (parseSpec, and open)", () => {
  it("treats undefined and null as an empty spec with the backend's isolation", () => {
    expect(plain.parseSpec!(undefined)).toEqual({ isolation: "none" });
    expect(isolated.parseSpec!(null)).toEqual({ isolation: "bubblewrap" });
  });

  it("keeps every valid field and makes the workspace absolute", () => {
    const spec = plain.parseSpec!({
      workspace: "rel/dir",
      env: { A: "1" },
      inheritEnv: false,
      timeoutMs: 500,
      isolation: "none",
    });
    expect(spec).toEqual({
      workspace: resolve("rel/dir"),
      env: { A: "1" },
      inheritEnv: false,
      timeoutMs: 500,
      isolation: "none",
    });
  });

  it("lets a spec tighten isolation but never loosen it", () => {
    expect(plain.parseSpec!({ isolation: "bubblewrap" })?.isolation).toBe("bubblewrap");
    expect(invalidField(() => isolated.parseSpec!({ isolation: "none" }))).toBe("isolation");
    expect(() => isolated.parseSpec!({ isolation: "none" })).toThrow(/tighten isolation, never loosen/);
  });

  it("names the bad field", () => {
    expect(invalidField(() => plain.parseSpec!({ workspace: "" }))).toBe("workspace");
    expect(invalidField(() => plain.parseSpec!({ workspace: 3 }))).toBe("workspace");
    expect(invalidField(() => plain.parseSpec!({ env: ["A=1"] }))).toBe("env");
    expect(invalidField(() => plain.parseSpec!({ env: { A: 1 } }))).toBe("env.A");
    expect(invalidField(() => plain.parseSpec!({ env: { "A=B": "1" } }))).toBe("env.A=B");
    expect(invalidField(() => plain.parseSpec!({ isolation: "docker" }))).toBe("isolation");
    expect(invalidField(() => plain.parseSpec!({ inheritEnv: "yes" }))).toBe("inheritEnv");
    expect(invalidField(() => plain.parseSpec!({ timeoutMs: 0 }))).toBe("timeoutMs");
    expect(invalidField(() => plain.parseSpec!({ timeoutMs: Number.POSITIVE_INFINITY }))).toBe("timeoutMs");
  });

  it("refuses unknown fields, so a misspelt one does not silently fall back to a default", () => {
    expect(invalidField(() => plain.parseSpec!({ workdir: "/x" }))).toBe("workdir");
    expect(() => plain.parseSpec!({ workdir: "/x" })).toThrow(
      'Invalid "local" sandbox spec: "workdir" is "/x"; it is not a field of the spec; the fields are workspace, env, isolation, inheritEnv, timeoutMs.',
    );
  });

  it("refuses a spec that is not an object", () => {
    expect(() => plain.parseSpec!("workspace")).toThrow(SandboxError);
    expect(() => plain.parseSpec!(["x"])).toThrow(/the spec is \["x"\]; it must be an object such as/);
  });

  it("round-trips through JSON (a placement serializes its spec)", () => {
    const spec = plain.parseSpec!({ workspace: "/w", timeoutMs: 10, env: { A: "b" } });
    expect(plain.parseSpec!(JSON.parse(JSON.stringify(spec)))).toEqual(spec);
  });
});
