import {
  Agent,
  type AgentMemory,
  type AgentOptions,
  type MemoryKey,
  type MemoryV1,
  ScriptedProvider,
} from "@openrath/core";
import { describe, expectTypeOf, it } from "vitest";

interface ToyMemorySpec {
  readonly shelf: number;
}

// What a memory adapter does: declare its key and the spec its backend takes.
declare module "@openrath/core" {
  interface MemoryBackends {
    "toy-memory": ToyMemorySpec | undefined;
  }
  interface SandboxBackends {
    "toy-sandbox": undefined;
  }
}

declare const store: MemoryV1;
const provider = new ScriptedProvider([]);

describe("typed memory keys on Agent", () => {
  it("accepts a declared key, alone or with its spec, and an open store", () => {
    new Agent({ name: "a", provider, memory: "toy-memory" });
    new Agent({ name: "a", provider, memory: { key: "toy-memory" } });
    new Agent({ name: "a", provider, memory: { key: "toy-memory", spec: { shelf: 3 } } });
    new Agent({ name: "a", provider, memory: store });
    expectTypeOf<"toy-memory">().toExtend<AgentMemory>();
    expectTypeOf<AgentOptions["memory"]>().toEqualTypeOf<AgentMemory | undefined>();
  });

  it("rejects a misspelt key at compile time", () => {
    // @ts-expect-error -- "toy-memroy" is not a declared memory key.
    new Agent({ name: "a", provider, memory: "toy-memroy" });
    // @ts-expect-error -- nor in the key-with-spec form.
    new Agent({ name: "a", provider, memory: { key: "toy-memroy" } });
    expectTypeOf<"toy-memroy">().not.toExtend<AgentMemory>();
  });

  it("rejects a sandbox key and an arbitrary string", () => {
    // @ts-expect-error -- a sandbox key is not a memory key.
    new Agent({ name: "a", provider, memory: "toy-sandbox" });
    expectTypeOf<string>().not.toExtend<AgentMemory>();
    const fromConfig: string = "toy-memory";
    // @ts-expect-error -- a string known only at run time must be cast to MemoryKey.
    new Agent({ name: "a", provider, memory: fromConfig });
    new Agent({ name: "a", provider, memory: fromConfig as MemoryKey });
  });

  it("makes the spec type follow the key", () => {
    // @ts-expect-error -- shelf is a number for toy-memory.
    new Agent({ name: "a", provider, memory: { key: "toy-memory", spec: { shelf: "top" } } });
    // @ts-expect-error -- `path` is not a toy-memory field.
    new Agent({ name: "a", provider, memory: { key: "toy-memory", spec: { shelf: 1, path: "./m" } } });
  });
});
