import { describe, expect, it } from "vitest";
import { buildEnv } from "./build-env.js";

const host = { PATH: "/host/bin", SECRET: "s3cret", HOME: "/root", TMPDIR: "/var/tmp" };

describe("buildEnv", () => {
  it("starts from the host environment when inheriting", () => {
    const env = buildEnv({ isolation: "none", inheritEnv: true, host, workspace: "/w", tmpdir: "/p/tmp" });
    expect(env).toEqual(host);
  });

  it("gives only PATH, HOME, LANG and TMPDIR without inheriting", () => {
    const env = buildEnv({ isolation: "none", inheritEnv: false, host, workspace: "/w", tmpdir: "/p/tmp" });
    expect(env).toEqual({ PATH: "/host/bin", HOME: "/w", LANG: "C.UTF-8", TMPDIR: "/p/tmp" });
  });

  it("falls back to a standard PATH when the host has none", () => {
    const env = buildEnv({ isolation: "none", inheritEnv: false, host: {}, workspace: "/w", tmpdir: "/t" });
    expect(env.PATH).toContain("/usr/bin");
  });

  it("points TMPDIR at the private /tmp under bubblewrap, inherited or not", () => {
    for (const inheritEnv of [true, false]) {
      expect(
        buildEnv({ isolation: "bubblewrap", inheritEnv, host, workspace: "/w", tmpdir: "/t" }).TMPDIR,
      ).toBe("/tmp");
    }
  });

  it("layers the spec's env over the base and the exec's env over both", () => {
    const env = buildEnv({
      isolation: "none",
      inheritEnv: false,
      host,
      workspace: "/w",
      tmpdir: "/t",
      spec: { A: "spec", B: "spec", HOME: "/spec-home" },
      exec: { B: "exec" },
    });
    expect(env).toMatchObject({ A: "spec", B: "exec", HOME: "/spec-home" });
  });
});
