import type { OpenVikingMemorySpec } from "./internal/spec.js";

export type { OpenVikingMemorySpec } from "./internal/spec.js";
export { type OpenVikingMemoryOptions, openVikingMemory } from "./open-viking-memory.js";

declare module "@openrath/core" {
  interface MemoryBackends {
    /** OpenViking: entries in an OpenViking context database over HTTP (`@openrath/memory-openviking`). */
    openviking: OpenVikingMemorySpec | undefined;
  }
}
