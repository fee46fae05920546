import type { ArtifactCapabilities, ArtifactStoreV1 } from "@openrath/runtime-durable/store";
import { createSkipList } from "../internal/skip-list.js";

/**
 * Test hooks that change a store's objects behind its back, for the integrity tests: the suite
 * needs them to prove that a damaged or missing object is a coded error and never a successful
 * read. Each backend's test file implements them with the backend's own tools (a file write, a
 * raw SDK call).
 */
export interface ArtifactTamper {
  /** Replaces the stored bytes of `digest` with `bytes`, keeping the object's name. */
  overwrite(tenant: string, digest: string, bytes: Uint8Array): Promise<void>;
  /** Removes the object of `digest` without going through the store. */
  remove(tenant: string, digest: string): Promise<void>;
}

/**
 * What every group of the artifact conformance suite receives: how to open a fresh store and a
 * second handle to it, the manifest the backend claims, the tamper hooks, and the caller's skip
 * list.
 */
export interface ArtifactSuiteContext {
  /** Opens a fresh, empty store (its own directory, bucket prefix…). The group closes it after the test. */
  readonly create: () => Promise<ArtifactStoreV1>;
  /** Opens a second handle to the store the latest `create` made, or `undefined` when the caller gave none. */
  readonly reopen: (() => Promise<ArtifactStoreV1>) | undefined;
  /** The backend's capability manifest; the suite checks every claim it can observe. */
  readonly capabilities: ArtifactCapabilities;
  /** Hooks that damage or remove objects behind the store's back, or `undefined` when the caller gave none. */
  readonly tamper: ArtifactTamper | undefined;
  /** Size in bytes of the large object the streaming tests put and get. */
  readonly largeBytes: number;
  /** Per-test timeout in milliseconds. */
  readonly timeoutMs: number;
  /**
   * The reason the caller gave for skipping `title` (a group title, a test title, or
   * `"<group> > <test>"`), or `undefined` when it runs. Every title asked about is remembered, so
   * the suite can report skip keys that name nothing.
   */
  skipped(title: string): string | undefined;
}

/** @internal Builds the context {@link describeArtifactConformance} hands to every group. */
export function createSuiteContext(options: {
  readonly create: () => Promise<ArtifactStoreV1>;
  readonly reopen?: () => Promise<ArtifactStoreV1>;
  readonly capabilities: ArtifactCapabilities;
  readonly tamper?: ArtifactTamper;
  readonly largeBytes?: number;
  readonly skip?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}): ArtifactSuiteContext & { readonly asked: ReadonlySet<string> } {
  const skips = createSkipList(options.skip);
  return {
    create: options.create,
    reopen: options.reopen,
    capabilities: options.capabilities,
    tamper: options.tamper,
    largeBytes: options.largeBytes ?? 24 * 1024 * 1024,
    timeoutMs: options.timeoutMs ?? 30_000,
    asked: skips.asked,
    skipped: skips.skipped,
  };
}
