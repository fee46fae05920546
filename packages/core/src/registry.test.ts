import {
  BackendClashError,
  createRegistry,
  defaultRegistry,
  type MemoryBackendV1,
  type MemoryV1,
  OpenRathError,
  type Registry,
  type SandboxBackendV1,
  type SandboxV1,
  UnknownBackendError,
} from "@openrath/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const sandbox = (key: string): SandboxBackendV1 => ({
  kind: "sandbox",
  key,
  specVersion: "v1",
  capabilities: {
    streaming: true,
    stdin: false,
    network: "none",
    isolation: "process",
    snapshots: false,
    languages: [],
  },
  open: async () => ({ close: async () => {} }) as unknown as SandboxV1,
});
const memory = (key: string): MemoryBackendV1 => ({
  kind: "memory",
  key,
  specVersion: "v1",
  capabilities: { vectorSearch: false, persistence: true, sharedWriters: false },
  open: async () => ({ close: async () => {} }) as unknown as MemoryV1,
});

/** The OpenRathError `fn` throws (failing the test if it throws anything else or nothing). */
function thrown(fn: () => unknown): OpenRathError {
  try {
    fn();
  } catch (error) {
    if (OpenRathError.isInstance(error)) return error;
    throw error;
  }
  return expect.fail("expected an OpenRathError");
}

describe("createRegistry", () => {
  it("holds the sandboxes and memories it is given, keys in registration order", () => {
    const fake = sandbox("fake");
    const other = sandbox("other-box");
    const notes = memory("notes");
    const registry = createRegistry({ sandboxes: [fake, other], memories: [notes] });
    expect(registry.sandbox("fake")).toBe(fake);
    expect(registry.sandbox("other-box")).toBe(other);
    expect(registry.memory("notes")).toBe(notes);
    expect(registry.sandboxKeys()).toEqual(["fake", "other-box"]);
    expect(registry.memoryKeys()).toEqual(["notes"]);
  });

  it("starts empty with no arguments", () => {
    const registry = createRegistry();
    expect(registry.sandboxKeys()).toEqual([]);
    expect(registry.memoryKeys()).toEqual([]);
  });

  it("answers has() per kind, since sandbox and memory keys are separate namespaces", () => {
    const registry = createRegistry({ sandboxes: [sandbox("local")], memories: [memory("bm25")] });
    expect(registry.has("sandbox", "local")).toBe(true);
    expect(registry.has("memory", "local")).toBe(false);
    expect(registry.has("memory", "bm25")).toBe(true);
    expect(registry.has("sandbox", "bm25")).toBe(false);
    registry.registerMemory(memory("local"));
    expect(registry.has("memory", "local")).toBe(true);
    expect(registry.sandbox("local").kind).toBe("sandbox");
    expect(registry.memory("local").kind).toBe("memory");
  });

  it("returns the registry from register calls so they chain", () => {
    const registry = createRegistry();
    expect(registry.registerSandbox(sandbox("a")).registerMemory(memory("b"))).toBe(registry);
    expect(registry.has("sandbox", "a") && registry.has("memory", "b")).toBe(true);
  });

  it("keeps separate registries separate", () => {
    const one = createRegistry({ sandboxes: [sandbox("fake")] });
    const two = createRegistry();
    expect(one.has("sandbox", "fake")).toBe(true);
    expect(two.has("sandbox", "fake")).toBe(false);
  });
});

describe("registering", () => {
  it("treats registering the same object twice as a no-op", () => {
    const fake = sandbox("fake");
    const registry = createRegistry({ sandboxes: [fake, fake] });
    registry.registerSandbox(fake);
    expect(registry.sandboxKeys()).toEqual(["fake"]);
    expect(registry.sandbox("fake")).toBe(fake);
    const notes = memory("notes");
    registry.registerMemory(notes).registerMemory(notes);
    expect(registry.memoryKeys()).toEqual(["notes"]);
  });

  it("throws BackendClashError (backend_clash) for a different backend under a taken key", () => {
    const first = sandbox("fake");
    const registry = createRegistry({ sandboxes: [first] });
    const error = thrown(() => registry.registerSandbox(sandbox("fake")));
    expect(error).toBeInstanceOf(BackendClashError);
    expect(error.code).toBe("backend_clash");
    expect(error.message).toContain('"fake"');
    expect(error.details).toEqual({ kind: "sandbox", key: "fake" });
    expect(registry.sandbox("fake")).toBe(first);
    expect(thrown(() => createRegistry({ memories: [memory("m"), memory("m")] })).code).toBe("backend_clash");
  });

  it.each([
    ["an upper-case key", { key: "Docker" }],
    ["a key with a space", { key: "my box" }],
    ["a key starting with a digit", { key: "1box" }],
    ["an empty key", { key: "" }],
    ["a non-string key", { key: 7 }],
    ["the wrong kind", { kind: "memory" }],
  ])("rejects a sandbox descriptor with %s as invalid_argument", (_, patch) => {
    const registry = createRegistry();
    const error = thrown(() => registry.registerSandbox({ ...sandbox("ok"), ...patch } as never));
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toContain("lower-case kebab key");
    expect(registry.sandboxKeys()).toEqual([]);
  });

  it("rejects a descriptor with a specVersion other than v1, naming the version", () => {
    const error = thrown(() =>
      createRegistry({ sandboxes: [{ ...sandbox("fake"), specVersion: "v2" } as never] }),
    );
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toContain('"v2"');
    expect(error.message).toContain('"v1"');
    const memoryError = thrown(() =>
      createRegistry({ memories: [{ ...memory("m"), specVersion: undefined } as never] }),
    );
    expect(memoryError.code).toBe("invalid_argument");
  });

  it("rejects a non-object descriptor as invalid_argument", () => {
    expect(thrown(() => createRegistry().registerSandbox(null as never)).code).toBe("invalid_argument");
    expect(thrown(() => createRegistry().registerMemory(sandbox("fake") as never)).code).toBe(
      "invalid_argument",
    );
  });

  it("accepts kebab keys with digits and dashes", () => {
    const registry = createRegistry({ sandboxes: [sandbox("e2b-cloud-2")] });
    expect(registry.sandboxKeys()).toEqual(["e2b-cloud-2"]);
  });
});

describe("looking up an unknown key", () => {
  const registry = createRegistry({
    sandboxes: [sandbox("fake"), sandbox("local")],
    memories: [memory("notes")],
  });

  it("throws UnknownBackendError (unknown_backend) listing the registered keys", () => {
    const error = thrown(() => registry.sandbox("nope"));
    expect(error).toBeInstanceOf(UnknownBackendError);
    expect(error.code).toBe("unknown_backend");
    expect(error.message).toContain('Unknown sandbox backend "nope"');
    expect(error.message).toContain("Registered sandbox backends: fake, local.");
    expect(error.details).toMatchObject({ kind: "sandbox", key: "nope", registered: ["fake", "local"] });
    expect(error.message).toContain("createRegistry()");
  });

  it("names the first-party package and its register line for a known key that is not registered", () => {
    const error = thrown(() => registry.sandbox("docker"));
    expect(error.message).toContain("@openrath/sandbox-docker");
    expect(error.message).toContain('import "@openrath/sandbox-docker/register";');
    expect(error.details.package).toBe("@openrath/sandbox-docker");
    const mem = thrown(() => registry.memory("bm25"));
    expect(mem.message).toContain('import "@openrath/memory-bm25/register";');
    expect(mem.message).toContain("Registered memory backends: notes.");
  });

  it("suggests the near key for a typo", () => {
    const error = thrown(() => registry.sandbox("dokcer"));
    expect(error.message).toContain('Did you mean "docker"?');
    expect(error.details.suggestion).toBe("docker");
    const registeredTypo = thrown(() => registry.sandbox("locl"));
    expect(registeredTypo.message).toContain('Did you mean "local"?');
  });

  it("names the suggested key's package and register line for a typo", () => {
    const error = thrown(() => registry.sandbox("dokcer"));
    expect(error.message).toContain("@openrath/sandbox-docker");
    expect(error.message).toContain('import "@openrath/sandbox-docker/register";');
  });

  it("makes no suggestion for a key far from every known one, and says when nothing is registered", () => {
    const error = thrown(() => createRegistry().sandbox("quantum-computer"));
    expect(error.message).not.toContain("Did you mean");
    expect(error.message).toContain("No sandbox backend is registered.");
    expect(error.message).toContain('import its "./register" entry');
    expect(error.details.suggestion).toBeUndefined();
    expect(error.details.package).toBeUndefined();
  });

  it("reports a memory key as a memory backend", () => {
    const error = thrown(() => registry.memory("fake"));
    expect(error.code).toBe("unknown_backend");
    expect(error.message).toContain('Unknown memory backend "fake"');
    expect(error.details.kind).toBe("memory");
  });
});

describe("defaultRegistry", () => {
  const KEY = Symbol.for("openrath.registry.v1");
  const holder = globalThis as { [KEY]?: Registry };
  let saved: Registry | undefined;
  beforeEach(() => {
    saved = holder[KEY];
    delete holder[KEY];
  });
  afterEach(() => {
    if (saved === undefined) delete holder[KEY];
    else holder[KEY] = saved;
  });

  it("is one registry, stored on globalThis under Symbol.for('openrath.registry.v1')", () => {
    const registry = defaultRegistry();
    expect(holder[KEY]).toBe(registry);
    expect(defaultRegistry()).toBe(registry);
  });

  it("adopts a registry another copy of core already stored there", () => {
    const other = createRegistry({ sandboxes: [sandbox("shared")] });
    holder[KEY] = other;
    expect(defaultRegistry()).toBe(other);
    expect(defaultRegistry().has("sandbox", "shared")).toBe(true);
  });

  it("keeps what is registered into it across calls", () => {
    const fake = sandbox("fake");
    defaultRegistry().registerSandbox(fake);
    expect(defaultRegistry().sandbox("fake")).toBe(fake);
    expect(createRegistry().has("sandbox", "fake")).toBe(false);
  });
});
