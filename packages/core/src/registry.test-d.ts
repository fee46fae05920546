import {
  createRegistry,
  type MemoryBackends,
  type MemoryBackendV1,
  type MemoryKey,
  type MemoryV1,
  type Registry,
  type SandboxBackends,
  type SandboxBackendV1,
  type SandboxKey,
  type SandboxV1,
  type Session,
} from "@openrath/core";
import { describe, expectTypeOf, it } from "vitest";

interface DockerSpec {
  readonly image: string;
  readonly cpus?: number;
}
interface LocalSpec {
  readonly root?: string;
}
interface KeywordOptions {
  readonly k1?: number;
}

// What adapters do: declare their keys and the spec each one takes.
declare module "@openrath/core" {
  interface SandboxBackends {
    docker: DockerSpec;
    local: LocalSpec;
  }
  interface MemoryBackends {
    keyword: KeywordOptions;
  }
}

declare const session: Session;
declare const open: () => Promise<SandboxV1>;
declare const openMemory: () => Promise<MemoryV1>;

describe("typed backend keys", () => {
  it("turns declared sandbox and memory keys into SandboxKey and MemoryKey", () => {
    expectTypeOf<"docker">().toExtend<SandboxKey>();
    expectTypeOf<"local">().toExtend<SandboxKey>();
    expectTypeOf<"keyword">().toExtend<MemoryKey>();
    expectTypeOf<SandboxBackends["docker"]>().toEqualTypeOf<DockerSpec>();
    expectTypeOf<MemoryBackends["keyword"]>().toEqualTypeOf<KeywordOptions>();
  });

  it("keeps undeclared and misspelt keys out", () => {
    expectTypeOf<"dokcer">().not.toExtend<SandboxKey>();
    expectTypeOf<"keyword">().not.toExtend<SandboxKey>();
    expectTypeOf<"docker">().not.toExtend<MemoryKey>();
    expectTypeOf<string>().not.toExtend<SandboxKey>();
  });

  it("rejects a misspelt key in session.to at compile time", () => {
    session.to("docker", { image: "python:3.12" });
    // @ts-expect-error -- "dokcer" is not a declared sandbox key.
    session.to("dokcer", { image: "python:3.12" });
    // @ts-expect-error -- a memory key is not a sandbox key.
    session.to("keyword");
    // @ts-expect-error -- an arbitrary string is not a key.
    session.to("docker" as string);
  });

  it("makes the spec type follow the key", () => {
    expectTypeOf(session.to<"docker">)
      .parameter(1)
      .toEqualTypeOf<DockerSpec | undefined>();
    expectTypeOf(session.to<"local">)
      .parameter(1)
      .toEqualTypeOf<LocalSpec | undefined>();
    session.to("local", { root: "/work" });
    // @ts-expect-error -- image must be a string for docker.
    session.to("docker", { image: 3 });
    // @ts-expect-error -- a docker spec needs an image.
    session.to("docker", { cpus: 2 });
    // @ts-expect-error -- `image` is a docker field, not a local one.
    session.to("local", { image: "python:3.12" });
  });

  it("returns a Session from to()", () => {
    expectTypeOf(session.to("local")).toEqualTypeOf<Session>();
    expectTypeOf(
      session.to("docker", { image: "x" }, { registry: createRegistry() }),
    ).toEqualTypeOf<Session>();
  });
});

describe("registering descriptors", () => {
  const capabilities = {
    streaming: true,
    stdin: true,
    network: "none",
    isolation: "container",
    snapshots: false,
    languages: ["python"],
  } as const;

  it("accepts descriptors typed with their own spec and instance", () => {
    const docker: SandboxBackendV1<DockerSpec> = {
      kind: "sandbox",
      key: "docker",
      specVersion: "v1",
      capabilities,
      parseSpec: (spec) => spec as DockerSpec,
      open: async (spec) => {
        expectTypeOf(spec).toEqualTypeOf<DockerSpec>();
        return open();
      },
    };
    const bm25: MemoryBackendV1<KeywordOptions> = {
      kind: "memory",
      key: "bm25",
      specVersion: "v1",
      capabilities: { vectorSearch: false, persistence: true, sharedWriters: false },
      open: openMemory,
    };
    expectTypeOf(createRegistry({ sandboxes: [docker], memories: [bm25] })).toEqualTypeOf<Registry>();
    createRegistry().registerSandbox(docker).registerMemory(bm25);
  });

  it("rejects a memory descriptor where a sandbox is expected and vice versa", () => {
    const bm25: MemoryBackendV1 = {
      kind: "memory",
      key: "bm25",
      specVersion: "v1",
      capabilities: { vectorSearch: false, persistence: true, sharedWriters: false },
      open: openMemory,
    };
    // @ts-expect-error -- a memory backend is not a sandbox backend.
    createRegistry({ sandboxes: [bm25] });
    // @ts-expect-error -- nor can it be registered as one.
    createRegistry().registerSandbox(bm25);
  });

  it("rejects a descriptor without the v1 contract fields", () => {
    // @ts-expect-error -- specVersion must be "v1".
    createRegistry({ sandboxes: [{ kind: "sandbox", key: "x", specVersion: "v2", capabilities, open }] });
    // @ts-expect-error -- capabilities are required.
    createRegistry({ sandboxes: [{ kind: "sandbox", key: "x", specVersion: "v1", open }] });
  });

  it("hands back untyped descriptors from lookups", () => {
    const registry = createRegistry();
    expectTypeOf(registry.sandbox("docker")).toEqualTypeOf<SandboxBackendV1>();
    expectTypeOf(registry.memory("bm25")).toEqualTypeOf<MemoryBackendV1>();
    expectTypeOf(registry.sandboxKeys()).toEqualTypeOf<string[]>();
  });
});
