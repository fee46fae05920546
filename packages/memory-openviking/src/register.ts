/**
 * Registers the `openviking` memory backend (with default options: `OPENVIKING_URL`,
 * `OPENVIKING_API_KEY`) in the process-wide registry. Import it once from your entry file.
 */
import { defaultRegistry } from "@openrath/core";
import { openVikingMemory } from "./open-viking-memory.js";

/** The spec type of the `openviking` key this entry registers (importing the entry also types the key). */
export type { OpenVikingMemorySpec } from "./internal/spec.js";

defaultRegistry().registerMemory(openVikingMemory());
