/**
 * Registers the `openviking` memory backend (with default options: `OPENVIKING_URL`,
 * `OPENVIKING_API_KEY`) in the process-wide registry. Import it once from your entry file.
 */
import { defaultRegistry } from "@openrath/core";
import { openVikingMemory } from "./open-viking-memory.js";

/**
 * The spec type of the `openviking` key this entry registers. Re-exported from the factory's
 * file, which declares the key: so importing only this entry types `memory: "openviking"`.
 */
export type { OpenVikingMemorySpec } from "./open-viking-memory.js";

defaultRegistry().registerMemory(openVikingMemory());
