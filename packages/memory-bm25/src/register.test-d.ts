// Only the register entry is imported: it alone must type the `bm25` and `local` keys.
import type { MemoryBackends, MemoryKey } from "@openrath/core";
import { expectTypeOf, test } from "vitest";
import type { Bm25MemorySpec } from "./register.js";
import "./register.js";

test("importing the register entry types the bm25 and local keys and their spec", () => {
  expectTypeOf<"bm25">().toExtend<MemoryKey>();
  expectTypeOf<"local">().toExtend<MemoryKey>();
  expectTypeOf<MemoryBackends["bm25"]>().toEqualTypeOf<Bm25MemorySpec | undefined>();
  expectTypeOf<MemoryBackends["local"]>().toEqualTypeOf<Bm25MemorySpec | undefined>();
  const memory: { key: MemoryKey; spec: MemoryBackends["bm25"] } = {
    key: "bm25",
    spec: { path: "./memory" },
  };
  void memory;
});
