import { SandboxError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { dockerSandbox } from "./docker-sandbox.js";

/** The descriptor's parseSpec, of a backend with `defaultImage`. */
function parseSpec(spec: unknown, defaultImage?: string) {
  return dockerSandbox(defaultImage === undefined ? {} : { defaultImage }).parseSpec!(spec);
}

function invalidField(spec: unknown, defaultImage?: string): unknown {
  try {
    parseSpec(spec, defaultImage);
  } catch (error) {
    expect(SandboxError.isInstance(error, "invalid_spec"), String(error)).toBe(true);
    expect((error as Error).name).toBe("SandboxError");
    return (error as SandboxError).details.field || "(spec)";
  }
  return expect.fail(`parseSpec(${JSON.stringify(spec)}) accepted an invalid spec`);
}

describe("the docker spec (parseSpec, and open)", () => {
  it("applies the safe defaults: one CPU, 1 GiB without swap, 256 processes, no network", () => {
    expect(parseSpec({ image: "busybox" })).toEqual({
      image: "busybox",
      env: {},
      workspace: "/workspace",
      cpus: 1,
      memoryBytes: 1024 ** 3,
      pidsLimit: 256,
      network: "none",
    });
  });

  it("takes null or Infinity as the timeout opt-out, stored as null so the spec survives JSON", () => {
    expect(parseSpec({ image: "x", timeoutMs: null })?.timeoutMs).toBe(null);
    expect(parseSpec({ image: "x", timeoutMs: Number.POSITIVE_INFINITY })?.timeoutMs).toBe(null);
    expect(parseSpec({ image: "x", timeoutMs: 1.5 })?.timeoutMs).toBe(1.5);
    expect(parseSpec({ image: "x", timeoutMs: 2 ** 40 })?.timeoutMs).toBe(null);
  });

  it("uses the factory's default image for an empty or missing spec", () => {
    expect(parseSpec(undefined, "python:3.12")?.image).toBe("python:3.12");
    expect(parseSpec(null, "python:3.12")?.image).toBe("python:3.12");
    expect(parseSpec({ image: "own" }, "python:3.12")?.image).toBe("own");
  });

  it("keeps every valid field", () => {
    const spec = {
      image: "registry.local:5000/team/tool@sha256:abc",
      env: { LANG: "C.UTF-8", EMPTY: "" },
      workspace: "/home/user/project/",
      cpus: 0.5,
      memoryBytes: 64 * 1024 * 1024,
      pidsLimit: 64,
      network: "none" as const,
      user: "1000:1000",
      timeoutMs: 5000,
    };
    expect(parseSpec(spec)).toEqual({ ...spec, workspace: "/home/user/project" });
    expect(parseSpec({ image: "x", user: "node" })?.user).toBe("node");
  });

  it("names the field of each invalid value", () => {
    const cases: [unknown, string][] = [
      [{}, "image"],
      [{ image: "" }, "image"],
      [{ image: "has space" }, "image"],
      [{ image: 3 }, "image"],
      [{ image: "x", imag: "typo" }, "imag"],
      [{ image: "x", env: "A=1" }, "env"],
      [{ image: "x", env: { "A=B": "1" } }, "env.A=B"],
      [{ image: "x", env: { A: 1 } }, "env.A"],
      [{ image: "x", env: { A: "nul\0" } }, "env.A"],
      [{ image: "x", workspace: "relative" }, "workspace"],
      [{ image: "x", workspace: "/" }, "workspace"],
      [{ image: "x", workspace: "/a/../b" }, "workspace"],
      [{ image: "x", workspace: "/a//b" }, "workspace"],
      [{ image: "x", workspace: "/a/./b" }, "workspace"],
      [{ image: "x", workspace: "/a\nb" }, "workspace"],
      [{ image: "x", cpus: 0 }, "cpus"],
      [{ image: "x", cpus: -1 }, "cpus"],
      [{ image: "x", cpus: Number.POSITIVE_INFINITY }, "cpus"],
      [{ image: "x", cpus: "1" }, "cpus"],
      [{ image: "x", memoryBytes: 1024 }, "memoryBytes"],
      [{ image: "x", memoryBytes: 64 * 1024 * 1024 + 0.5 }, "memoryBytes"],
      [{ image: "x", pidsLimit: 0 }, "pidsLimit"],
      [{ image: "x", pidsLimit: 2 }, "pidsLimit"],
      [{ image: "x", network: "bridge" }, "network"],
      [{ image: "x", network: "host" }, "network"],
      [{ image: "x", user: "" }, "user"],
      [{ image: "x", user: "a b" }, "user"],
      [{ image: "x", user: 1000 }, "user"],
      [{ image: "x", timeoutMs: 0 }, "timeoutMs"],
      [{ image: "x", timeoutMs: -1 }, "timeoutMs"],
      [{ image: "x", timeoutMs: "10" }, "timeoutMs"],
    ];
    for (const [spec, field] of cases) expect(invalidField(spec), JSON.stringify(spec)).toBe(field);
  });

  it("refuses a spec that is not an object", () => {
    for (const spec of ["busybox", 1, ["busybox"], true]) expect(invalidField(spec, "x")).toBe("(spec)");
  });

  it("explains what is valid in the message", () => {
    expect(() => parseSpec({ image: "x", network: "bridge" })).toThrow(/only "none" is supported/);
    expect(() => parseSpec({})).toThrow(/defaultImage/);
    expect(() => parseSpec({ image: "x", imag: 1 })).toThrow(
      /"imag" is 1; it is not a field of the spec; the fields are image, env, workspace, cpus, memoryBytes, pidsLimit, network, user, timeoutMs\./,
    );
    expect(() => parseSpec({ image: "x", cpus: 0, pidsLimit: 2 })).toThrow(
      /Invalid "docker" sandbox spec, 2 problems:\n {2}- "cpus" is 0; .*\n {2}- "pidsLimit" is 2; it must be an integer of at least 8 processes\./,
    );
  });
});
