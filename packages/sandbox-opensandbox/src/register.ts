/**
 * Registers the `opensandbox` backend (with default options: `OPEN_SANDBOX_DOMAIN`,
 * `OPEN_SANDBOX_API_KEY`) in the process-wide registry. Import it once from your entry file.
 */
import { defaultRegistry } from "@openrath/core";
import { openSandbox } from "./open-sandbox.js";

/**
 * The spec type of the `opensandbox` key this entry registers. Re-exported from the factory's
 * file, which declares the key: so importing only this entry types `session.to("opensandbox", …)`.
 */
export type { OpenSandboxSpec } from "./open-sandbox.js";

defaultRegistry().registerSandbox(openSandbox());
