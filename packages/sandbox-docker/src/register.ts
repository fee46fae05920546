import { defaultRegistry } from "@openrath/core";
import { dockerSandbox } from "./docker-sandbox.js";
// For the types: the main entry declares the "docker" key, so `import ".../register"` alone types `session.to("docker", …)`.
import "./index.js";

defaultRegistry().registerSandbox(dockerSandbox());
