import type { MemoryBackends, MemoryBackendV1, MemoryKey } from "@openrath/core";
import { expectTypeOf, test } from "vitest";
import { type Bm25Memory, type Bm25MemorySpec, bm25Memory } from "./index.js";

test("the bm25 key takes a Bm25MemorySpec or nothing", () => {
  expectTypeOf<"bm25">().toExtend<MemoryKey>();
  expectTypeOf<MemoryBackends["bm25"]>().toEqualTypeOf<Bm25MemorySpec | undefined>();
  const spec: MemoryBackends["bm25"] = { path: "./memory", scope: { tenant: "acme" } };
  void spec;
  // @ts-expect-error -- path is a string
  const bad: MemoryBackends["bm25"] = { path: 1 };
  void bad;
});

test("the factory returns a memory descriptor for that spec", () => {
  expectTypeOf(bm25Memory()).toEqualTypeOf<MemoryBackendV1<Bm25MemorySpec | undefined, Bm25Memory>>();
  // @ts-expect-error -- unknown option
  bm25Memory({ url: "x" });
  // @ts-expect-error -- search is one of three modes
  bm25Memory({ search: "semantic" });
});
