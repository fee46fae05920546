/**
 * Registers the `openviking` memory backend (with default options: `OPENVIKING_URL`,
 * `OPENVIKING_API_KEY`) in the process-wide registry. Import it once from your entry file.
 */
import { defaultRegistry } from "@openrath/core";
import { openVikingMemory } from "./open-viking-memory.js";

defaultRegistry().registerMemory(openVikingMemory());
