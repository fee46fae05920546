import { BackendClashError, OpenRathError, UnknownBackendError } from "./errors.js";
import type { MemoryV1 } from "./memory.js";
import type { SandboxCapabilities, SandboxV1 } from "./sandbox.js";

/**
 * Sandbox backend keys and the spec type each takes. Empty in core; every sandbox adapter adds its
 * key by declaration merging, so `session.to("dokcer")` fails to compile and the spec type follows
 * the key:
 *
 * ```ts
 * declare module "@openrath/core" {
 *   interface SandboxBackends { docker: DockerSandboxSpec }
 * }
 * ```
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by adapters through declaration merging.
export interface SandboxBackends {}

/** Memory backend keys and the options each takes; adapters augment it like {@link SandboxBackends}. */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by adapters through declaration merging.
export interface MemoryBackends {}

/** A sandbox key some installed adapter declared. */
export type SandboxKey = Extract<keyof SandboxBackends, string>;
/** A memory key some installed adapter declared. */
export type MemoryKey = Extract<keyof MemoryBackends, string>;

/** What a memory backend can do. Core uses it to fail fast; the conformance suite checks every claim. */
export interface MemoryCapabilities {
  /** Whether recall can rank by embedding similarity. */
  readonly vectorSearch: boolean;
  /** Whether entries survive a close and reopen. */
  readonly persistence: boolean;
  /** Whether two stores opened on the same location see each other's writes (concurrent writers). */
  readonly sharedWriters: boolean;
}

/** Options passed to every `open`. */
export interface OpenOptions {
  /** Aborts a slow open (pulling an image, creating a remote sandbox). */
  readonly signal?: AbortSignal;
}

/**
 * A sandbox backend descriptor: a plain object an adapter's factory returns.
 *
 * @typeParam Spec - what `session.to(key, spec)` takes for this backend.
 */
export interface SandboxBackendV1<Spec = unknown, Instance extends SandboxV1 = SandboxV1> {
  readonly kind: "sandbox";
  /** Registry key: lower-case kebab, such as `docker`. */
  readonly key: string;
  readonly specVersion: "v1";
  readonly capabilities: SandboxCapabilities;
  /** Checks and normalizes a spec; throws an `invalid_spec` error naming the bad field. */
  parseSpec?(spec: unknown): Spec;
  /** Opens a sandbox. Called lazily, on first tool use of a placed session. */
  open(spec: Spec, options?: OpenOptions): Promise<Instance>;
}

/** A memory backend descriptor: a plain object an adapter's factory returns. */
export interface MemoryBackendV1<Options = unknown, Instance extends MemoryV1 = MemoryV1> {
  readonly kind: "memory";
  readonly key: string;
  readonly specVersion: "v1";
  readonly capabilities: MemoryCapabilities;
  parseSpec?(spec: unknown): Options;
  open(spec: Options, options?: OpenOptions): Promise<Instance>;
}

type AnySandbox = SandboxBackendV1<unknown, SandboxV1>;
type AnyMemory = MemoryBackendV1<unknown, MemoryV1>;

/** Backends by key for one scope. */
export interface Registry {
  /** Adds a sandbox backend. Registering the same object twice is a no-op. @throws `backend_clash` */
  registerSandbox(backend: AnySandbox): this;
  /** Adds a memory backend. Registering the same object twice is a no-op. @throws `backend_clash` */
  registerMemory(backend: AnyMemory): this;
  /** The sandbox backend for `key`. @throws `unknown_backend` listing the registered keys. */
  sandbox(key: string): SandboxBackendV1;
  /** The memory backend for `key`. @throws `unknown_backend` listing the registered keys. */
  memory(key: string): MemoryBackendV1;
  /** Whether a backend of `kind` is registered under `key`. */
  has(kind: "sandbox" | "memory", key: string): boolean;
  /** Registered sandbox keys in registration order. */
  sandboxKeys(): string[];
  /** Registered memory keys in registration order. */
  memoryKeys(): string[];
}

/** Packages that provide the first-party keys, for the unknown-key message. */
const FIRST_PARTY: Record<"sandbox" | "memory", Record<string, string>> = {
  sandbox: {
    local: "@openrath/sandbox-local",
    docker: "@openrath/sandbox-docker",
    opensandbox: "@openrath/sandbox-opensandbox",
  },
  memory: {
    bm25: "@openrath/memory-bm25",
    local: "@openrath/memory-bm25",
    openviking: "@openrath/memory-openviking",
  },
};

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

function unknownKey(kind: "sandbox" | "memory", key: string, registered: string[]): UnknownBackendError {
  const known = Object.keys(FIRST_PARTY[kind]);
  const near = [...new Set([...registered, ...known])]
    .map((k) => ({ k, d: distance(key, k) }))
    .filter(({ d }) => d <= 2)
    .sort((x, y) => x.d - y.d)[0]?.k;
  const pkg = FIRST_PARTY[kind][key] ?? (near ? FIRST_PARTY[kind][near] : undefined);
  const parts = [
    `Unknown ${kind} backend ${JSON.stringify(key)}.`,
    registered.length > 0
      ? `Registered ${kind} backends: ${registered.join(", ")}.`
      : `No ${kind} backend is registered.`,
  ];
  if (near && near !== key) parts.push(`Did you mean ${JSON.stringify(near)}?`);
  parts.push(
    pkg
      ? `Install ${pkg} and add \`import "${pkg}/register";\` to your entry file, or pass it to createRegistry().`
      : `Install the package that provides it and import its "./register" entry, or pass it to createRegistry().`,
  );
  return new UnknownBackendError("unknown_backend", parts.join(" "), {
    details: {
      kind,
      key,
      registered,
      ...(pkg ? { package: pkg } : {}),
      ...(near ? { suggestion: near } : {}),
    },
  });
}

function checkDescriptor(
  kind: "sandbox" | "memory",
  backend: { kind?: unknown; key?: unknown; specVersion?: unknown },
) {
  if (backend?.kind !== kind || typeof backend.key !== "string" || !/^[a-z][a-z0-9-]*$/.test(backend.key)) {
    throw new OpenRathError(
      "invalid_argument",
      `A ${kind} backend descriptor needs kind "${kind}" and a lower-case kebab key; got kind ${JSON.stringify(backend?.kind)} and key ${JSON.stringify(backend?.key)}.`,
      { details: { value: backend } },
    );
  }
  if (backend.specVersion !== "v1") {
    throw new OpenRathError(
      "invalid_argument",
      `The ${kind} backend "${backend.key}" declares specVersion ${JSON.stringify(backend.specVersion)}; this core supports "v1".`,
      { details: { key: backend.key, specVersion: backend.specVersion } },
    );
  }
}

class MapRegistry implements Registry {
  private readonly sandboxes = new Map<string, SandboxBackendV1>();
  private readonly memories = new Map<string, MemoryBackendV1>();

  registerSandbox(backend: AnySandbox): this {
    checkDescriptor("sandbox", backend);
    this.add("sandbox", this.sandboxes, backend as unknown as SandboxBackendV1);
    return this;
  }

  registerMemory(backend: AnyMemory): this {
    checkDescriptor("memory", backend);
    this.add("memory", this.memories, backend as unknown as MemoryBackendV1);
    return this;
  }

  sandbox(key: string): SandboxBackendV1 {
    const backend = this.sandboxes.get(key);
    if (!backend) throw unknownKey("sandbox", key, this.sandboxKeys());
    return backend;
  }

  memory(key: string): MemoryBackendV1 {
    const backend = this.memories.get(key);
    if (!backend) throw unknownKey("memory", key, this.memoryKeys());
    return backend;
  }

  has(kind: "sandbox" | "memory", key: string): boolean {
    return (kind === "sandbox" ? this.sandboxes : this.memories).has(key);
  }

  sandboxKeys(): string[] {
    return [...this.sandboxes.keys()];
  }

  memoryKeys(): string[] {
    return [...this.memories.keys()];
  }

  private add<B extends { key: string }>(kind: string, map: Map<string, B>, backend: B) {
    const existing = map.get(backend.key);
    if (existing === backend) return;
    if (existing) {
      throw new BackendClashError(
        "backend_clash",
        `A different ${kind} backend is already registered under "${backend.key}". Keys are unique per registry: register it under another key, or use createRegistry() for a separate scope.`,
        { details: { kind, key: backend.key } },
      );
    }
    map.set(backend.key, backend);
  }
}

/**
 * A registry for an explicit scope (a test, a server tenant). Lookups never fall back to the
 * default registry.
 *
 * @example
 * ```ts
 * const registry = createRegistry({ sandboxes: [dockerSandbox()] });
 * const placed = session.to("docker", { image: "python:3.12" }, { registry });
 * ```
 */
export function createRegistry(
  init: { sandboxes?: readonly AnySandbox[]; memories?: readonly AnyMemory[] } = {},
): Registry {
  const registry = new MapRegistry();
  for (const backend of init.sandboxes ?? []) registry.registerSandbox(backend);
  for (const backend of init.memories ?? []) registry.registerMemory(backend);
  return registry;
}

const DEFAULT_KEY = Symbol.for("openrath.registry.v1");

/**
 * The process-wide registry that `session.to(key)` and `memory: key` resolve against unless a
 * scope is given. It lives on `globalThis` under `Symbol.for("openrath.registry.v1")`, so two
 * installed copies of core share it. Adapters' `./register` entries add themselves here.
 */
export function defaultRegistry(): Registry {
  const holder = globalThis as { [DEFAULT_KEY]?: Registry };
  holder[DEFAULT_KEY] ??= new MapRegistry();
  return holder[DEFAULT_KEY];
}
