export {
  type LocalIsolation,
  type LocalSandboxOptions,
  type LocalSandboxSpec,
  localSandbox,
} from "./local-sandbox.js";
