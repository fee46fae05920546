import { defaultRegistry } from "@openrath/core";
import { bm25Memory } from "./bm25-memory.js";

/** The spec type of the `bm25` and `local` keys this entry registers (importing the entry also types the keys). */
export type { Bm25MemorySpec } from "./bm25-memory.js";

const backend = bm25Memory();
// `local` is the name the Python original gives its default store; it is this backend, also
// under its own key, so that core needs no alias.
defaultRegistry()
  .registerMemory(backend)
  .registerMemory({ ...backend, key: "local" });
