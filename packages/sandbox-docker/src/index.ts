export { type DockerSandboxOptions, dockerSandbox } from "./docker-sandbox.js";
export type { DockerSandboxSpec } from "./docker-sandbox-spec.js";
export type { DockerConnection } from "./internal/docker-client.js";
export { type RemoveOrphanedSandboxesOptions, removeOrphanedSandboxes } from "./remove-orphaned-sandboxes.js";
