import { createRegistry, OpenRathError, Session } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { dockerSandbox } from "./docker-sandbox.js";

describe("dockerSandbox (no daemon needed)", () => {
  it("is a v1 sandbox descriptor under the key docker with the container manifest", () => {
    const backend = dockerSandbox();
    expect(backend).toMatchObject({ kind: "sandbox", key: "docker", specVersion: "v1" });
    expect(backend.capabilities).toEqual({
      streaming: true,
      stdin: true,
      network: "none",
      isolation: "container",
      snapshots: false,
      languages: ["sh"],
      processTree: "contained",
    });
  });

  it("declares the configured languages", () => {
    expect(dockerSandbox({ languages: ["sh", "python", "sh"] }).capabilities.languages).toEqual([
      "sh",
      "python",
    ]);
  });

  it("refuses unknown languages, reserved labels and an empty default image", () => {
    const code = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return OpenRathError.isInstance(error) ? error.code : String(error);
      }
      return "no error";
    };
    expect(code(() => dockerSandbox({ languages: ["cobol"] }))).toBe("invalid_argument");
    expect(code(() => dockerSandbox({ languages: [] }))).toBe("invalid_argument");
    expect(code(() => dockerSandbox({ labels: { "dev.openrath.owner-pid": "1" } }))).toBe("invalid_argument");
    expect(code(() => dockerSandbox({ defaultImage: "" }))).toBe("invalid_argument");
  });

  it("checks the spec when a session is placed, before anything is opened", () => {
    const registry = createRegistry({ sandboxes: [dockerSandbox()] });
    const session = Session.fromUserMessage("hi");
    expect(() => session.to("docker", { image: "x", network: "host" as "none" }, { registry })).toThrow(
      expect.objectContaining({ code: "invalid_spec" }),
    );
    const placed = session.to("docker", { image: "busybox" }, { registry });
    expect(placed.placement?.spec).toMatchObject({
      image: "busybox",
      workspace: "/workspace",
      network: "none",
    });
  });

  it("fills in the default image for a spec-less placement", () => {
    const registry = createRegistry({ sandboxes: [dockerSandbox({ defaultImage: "python:3.12-slim" })] });
    const placed = Session.fromUserMessage("hi").to("docker", undefined, { registry });
    expect(placed.placement?.spec).toMatchObject({ image: "python:3.12-slim" });
  });

  it("rejects (does not throw) an invalid spec passed straight to open", async () => {
    const pending = dockerSandbox().open({ image: "x", cpus: -1 });
    await expect(pending).rejects.toMatchObject({ code: "invalid_spec", details: { field: "cpus" } });
  });
});
