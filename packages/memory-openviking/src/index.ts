export type { OpenVikingMemorySpec } from "./internal/spec.js";
export { type OpenVikingMemoryOptions, openVikingMemory } from "./open-viking-memory.js";
