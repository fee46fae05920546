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
    backend,
    invalidSpecs: [
      {},
      { image: "" },
      { image, network: "bridge" },
      { image, cpus: -1 },
      { image, memoryBytes: 1024 },
      { image, pidsLimit: 2 },
      { image, user: "a b" },
      { image, workspace: "relative" },
      { image, privileged: true },
    ],
    create: () => backend.open(backend.parseSpec!({ image })),
    timeoutMs: 60_000,
  });
});
