/**
 * Registers the `opensandbox` backend (with default options: `OPEN_SANDBOX_DOMAIN`,
 * `OPEN_SANDBOX_API_KEY`) in the process-wide registry. Import it once from your entry file.
 */
import { defaultRegistry } from "@openrath/core";
import { openSandbox } from "./open-sandbox.js";

// The main entry declares the "opensandbox" key (module augmentation): importing it here makes
// `import "@openrath/sandbox-opensandbox/register"` alone type `session.to("opensandbox", …)`.
export type { OpenSandboxSpec } from "./index.js";

defaultRegistry().registerSandbox(openSandbox());
