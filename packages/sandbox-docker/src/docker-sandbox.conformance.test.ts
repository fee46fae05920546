import { serviceAvailable } from "@openrath/testing";
import { describeSandboxConformance } from "@openrath/testing/sandbox";
import Dockerode from "dockerode";
import { describe } from "vitest";
import { dockerSandbox } from "./docker-sandbox.js";

const image = process.env.OPENRATH_TEST_DOCKER_IMAGE ?? "openrath-test/busybox:1";
const docker = await serviceAvailable("docker", async () => {
  await new Dockerode().ping();
  await new Dockerode().getImage(image).inspect();
  return true;
});

describe.skipIf(!docker.available)(`docker sandbox conformance (${docker.reason})`, () => {
  const backend = dockerSandbox({ labels: { "openrath-test": "conformance" } });
  describeSandboxConformance({
    name: "docker",
    create: () => backend.open(backend.parseSpec!({ image })),
    capabilities: backend.capabilities,
    timeoutMs: 60_000,
  });
});
