import type { MemoryBackends, MemoryBackendV1, MemoryKey, MemoryV1 } from "@openrath/core";
import { expectTypeOf, test } from "vitest";
import { type OpenVikingMemorySpec, openVikingMemory } from "./index.js";

test("the openviking key takes an OpenVikingMemorySpec or nothing", () => {
  expectTypeOf<"openviking">().toExtend<MemoryKey>();
  expectTypeOf<MemoryBackends["openviking"]>().toEqualTypeOf<OpenVikingMemorySpec | undefined>();
  const spec: MemoryBackends["openviking"] = { scope: { tenant: "acme", user: "bob" } };
  void spec;
  // @ts-expect-error -- connection settings are options, not spec
  const bad: MemoryBackends["openviking"] = { url: "http://127.0.0.1:1933" };
  void bad;
});

test("the factory returns a memory descriptor for that spec", () => {
  expectTypeOf(openVikingMemory()).toEqualTypeOf<
    MemoryBackendV1<OpenVikingMemorySpec | undefined, MemoryV1>
  >();
  // @ts-expect-error -- unknown option
  openVikingMemory({ path: "./memory" });
  // @ts-expect-error -- the timeout is a number of ms
  openVikingMemory({ requestTimeoutMs: "10s" });
});
