import { defaultRegistry } from "@openrath/core";
import { dockerSandbox } from "./docker-sandbox.js";

/**
 * The spec type of the `docker` key this entry registers. Re-exported from the factory's file,
 * which declares the key: so importing only this entry types `session.to("docker", …)`.
 */
export type { DockerSandboxSpec } from "./docker-sandbox.js";

defaultRegistry().registerSandbox(dockerSandbox());
