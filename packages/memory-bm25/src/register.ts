import { defaultRegistry } from "@openrath/core";
import { bm25Memory } from "./bm25-memory.js";

/** The spec type of the `bm25` key this entry registers (importing the entry also types the key). */
export type { Bm25MemorySpec } from "./bm25-memory.js";

defaultRegistry().registerMemory(bm25Memory());
