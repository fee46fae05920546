export { DEFAULT_IMAGE, type OpenSandboxSpec, type ResolvedOpenSandboxSpec } from "./internal/spec.js";
export { type OpenSandboxOptions, openSandbox } from "./open-sandbox.js";
