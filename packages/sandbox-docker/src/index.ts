import type { DockerSandboxSpec } from "./docker-sandbox-spec.js";

export { type DockerSandboxOptions, dockerSandbox } from "./docker-sandbox.js";
export type { DockerSandboxSpec } from "./docker-sandbox-spec.js";
export type { DockerConnection } from "./internal/docker-client.js";
export { type RemoveOrphanedSandboxesOptions, removeOrphanedSandboxes } from "./remove-orphaned-sandboxes.js";

declare module "@openrath/core" {
  interface SandboxBackends {
    /** A container through the Docker Engine API; see {@link DockerSandboxSpec}. */
    docker: DockerSandboxSpec | undefined;
  }
}
