// Only the register entry is imported: it alone must type the `openviking` key.
import type { MemoryBackends, MemoryKey } from "@openrath/core";
import { expectTypeOf, test } from "vitest";
import type { OpenVikingMemorySpec } from "./register.js";
import "./register.js";

test("importing the register entry types the openviking key and its spec", () => {
  expectTypeOf<"openviking">().toExtend<MemoryKey>();
  expectTypeOf<MemoryBackends["openviking"]>().toEqualTypeOf<OpenVikingMemorySpec | undefined>();
  const memory: { key: MemoryKey; spec: MemoryBackends["openviking"] } = {
    key: "openviking",
    spec: { scope: { tenant: "acme" } },
  };
  void memory;
});
