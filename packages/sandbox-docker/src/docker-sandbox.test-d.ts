import { type SandboxBackends, type SandboxBackendV1, type SandboxKey, Session } from "@openrath/core";
import { describe, expectTypeOf, it } from "vitest";
import { type DockerSandboxSpec, dockerSandbox } from "./index.js";

describe("docker sandbox types", () => {
  it("adds the docker key with its spec type to core's SandboxBackends", () => {
    expectTypeOf<"docker">().toExtend<SandboxKey>();
    expectTypeOf<SandboxBackends["docker"]>().toEqualTypeOf<DockerSandboxSpec | undefined>();
  });

  it("types session.to's spec by the key", () => {
    const session = Session.fromUserMessage("hi");
    expectTypeOf(session.to).toBeCallableWith("docker", {
      image: "python:3.12-slim",
      cpus: 1,
      network: "none",
    });
    expectTypeOf(session.to).toBeCallableWith("docker");
    // @ts-expect-error the image is a string
    session.to("docker", { image: 3 });
    // @ts-expect-error only "none" networking exists
    session.to("docker", { image: "x", network: "bridge" });
    // @ts-expect-error a misspelt key does not compile
    session.to("dokcer", { image: "x" });
  });

  it("returns a sandbox descriptor taking the docker spec", () => {
    expectTypeOf(dockerSandbox()).toExtend<SandboxBackendV1<DockerSandboxSpec | undefined>>();
  });
});
