import type { OpenSandboxSpec } from "./internal/spec.js";

export { DEFAULT_IMAGE, type OpenSandboxSpec, type ResolvedOpenSandboxSpec } from "./internal/spec.js";
export { type OpenSandboxOptions, openSandbox } from "./open-sandbox.js";

declare module "@openrath/core" {
  interface SandboxBackends {
    /** OpenSandbox: remote containers through the lifecycle API and execd (`@openrath/sandbox-opensandbox`). */
    opensandbox: OpenSandboxSpec | undefined;
  }
}
