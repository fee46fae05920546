import { MergeConflictError } from "./errors.js";
import { differingKeys, sameData } from "./internal/json-checks.js";
import type { SandboxBackendV1 } from "./registry.js";
import { SandboxError, type SandboxV1 } from "./sandbox.js";

const live = new Set<SandboxSlot>();

// A placement that becomes unreachable without release() (every version of its session dropped)
// lets go of its sandbox then, so a forgotten release cannot keep a sandbox open forever.
const unreleased =
  typeof FinalizationRegistry === "function"
    ? new FinalizationRegistry<SandboxSlot>((slot) => {
        slot.release().catch(() => {});
      })
    : undefined;

/**
 * One sandbox shared by every session that holds it: opened lazily by the first user, closed when
 * the last holder lets go. Opening is single-flight, so parallel first-use tool calls open one sandbox.
 */
class SandboxSlot {
  private refs = 0;
  private opening: Promise<SandboxV1> | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    readonly key: string,
    readonly spec: unknown,
    private readonly backend: () => SandboxBackendV1,
  ) {}

  get closed(): boolean {
    return this.closing !== undefined;
  }

  hold(): void {
    this.refs++;
  }

  release(): Promise<void> {
    if (--this.refs > 0 || this.closed) return this.closing ?? Promise.resolve();
    return this.close();
  }

  get(signal?: AbortSignal): Promise<SandboxV1> {
    if (this.closed) {
      return Promise.reject(
        new SandboxError(
          "sandbox_closed",
          `The "${this.key}" sandbox was closed: every session holding it released it.`,
          {
            details: { key: this.key },
          },
        ),
      );
    }
    if (!this.opening) {
      const opening = Promise.resolve()
        .then(() => this.backend().open(this.spec, signal ? { signal } : {}))
        .then((sandbox) => {
          live.add(this);
          return sandbox;
        });
      // A failed open is not cached: the next tool call tries again.
      opening.catch(() => {
        if (this.opening === opening) this.opening = undefined;
      });
      this.opening = opening;
    }
    return this.opening;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      const opening = this.opening;
      live.delete(this);
      if (!opening) return;
      const sandbox = await opening.catch(() => undefined);
      await sandbox?.close();
    })();
    return this.closing;
  }
}

/**
 * Where a session's tools run: a sandbox backend key and spec, plus this session's hold on the
 * shared sandbox. Every version of a session (`append`, …) shares one placement; every branch
 * (`fork`, `merge`, `derive`, `detach`) takes its own hold on the same sandbox.
 */
export class Placement {
  /** The sandbox backend key. */
  readonly key: string;
  /** The spec the sandbox opens with (as returned by the backend's `parseSpec`). */
  readonly spec: unknown;
  #slot: SandboxSlot;
  #released = false;

  /** @internal Use `session.to(key, spec)`. */
  constructor(key: string, spec: unknown, backend: () => SandboxBackendV1);
  /** @internal */
  constructor(slot: SandboxSlot);
  constructor(keyOrSlot: string | SandboxSlot, spec?: unknown, backend?: () => SandboxBackendV1) {
    this.#slot = typeof keyOrSlot === "string" ? new SandboxSlot(keyOrSlot, spec, backend!) : keyOrSlot;
    this.#slot.hold();
    unreleased?.register(this, this.#slot, this);
    this.key = this.#slot.key;
    this.spec = this.#slot.spec;
  }

  /** Whether this hold was released. */
  get released(): boolean {
    return this.#released;
  }

  /** Whether `other` is a hold on the same sandbox as this one (the same placement, shared by forks). */
  sharesSandboxWith(other: Placement): boolean {
    return this.#slot === other.#slot;
  }

  /** A new hold on the same sandbox, for a new branch. */
  share(): Placement {
    return new Placement(this.#slot);
  }

  /** The open sandbox, opening it on first use. @throws `sandbox_closed` after release. */
  sandbox(signal?: AbortSignal): Promise<SandboxV1> {
    if (this.#released) {
      return Promise.reject(
        new SandboxError(
          "sandbox_closed",
          `This session released its "${this.key}" sandbox; place it again with .to("${this.key}").`,
          {
            details: { key: this.key },
          },
        ),
      );
    }
    return this.#slot.get(signal);
  }

  /** Lets go of the sandbox; the last holder's release closes it. Idempotent. */
  release(): Promise<void> {
    if (this.#released) return Promise.resolve();
    this.#released = true;
    unreleased?.unregister(this);
    return this.#slot.release();
  }

  /** `{ key, spec }`, the serializable part. */
  toJSON(): { key: string; spec: unknown } {
    return { key: this.key, spec: this.spec };
  }
}

/**
 * The placement a merge of `left` and `right` keeps (before the merge takes its own hold): either
 * side's when they hold the same sandbox or only one is placed, else `left`'s when both are placed
 * on one backend with equal specs.
 *
 * @throws {MergeConflictError} code `merge_conflict` for different backends, or one backend with
 *   different specs (the message names the spec keys that differ, never their values).
 */
export function mergedPlacement(
  left: { readonly id: string; readonly placement: Placement | undefined },
  right: { readonly id: string; readonly placement: Placement | undefined },
): Placement | undefined {
  const a = left.placement;
  const b = right.placement;
  if (!a || !b || a.sharesSandboxWith(b)) return a ?? b;
  if (a.key !== b.key) {
    throw new MergeConflictError(
      "merge_conflict",
      `Cannot merge session ${left.id} placed on "${a.key}" with session ${right.id} placed on "${b.key}": a merged session runs its tools on one backend. Move one with .to("${a.key}") first.`,
      { details: { left: { id: left.id, backend: a.key }, right: { id: right.id, backend: b.key } } },
    );
  }
  if (!sameData(a.spec, b.spec)) {
    const keys = differingKeys(a.spec, b.spec);
    const which = keys.length > 0 ? ` (they differ in ${keys.join(", ")})` : "";
    throw new MergeConflictError(
      "merge_conflict",
      `Cannot merge session ${left.id} with session ${right.id}: both are placed on "${a.key}" but with different specs${which}, and a merged session runs its tools in one sandbox. Place one like the other with .to("${a.key}", spec) first.`,
      {
        details: {
          left: { id: left.id, backend: a.key },
          right: { id: right.id, backend: b.key },
          differingKeys: keys,
        },
      },
    );
  }
  return a;
}

/**
 * Closes every sandbox opened through a session placement in this process, whoever still holds
 * it. For shutdown paths (signal handlers, test teardown). Errors from individual closes are
 * collected and thrown together after all were attempted.
 */
export async function closeAllSandboxes(): Promise<void> {
  const results = await Promise.allSettled([...live].map((slot) => slot.close()));
  const errors = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
  if (errors.length > 0) throw new AggregateError(errors, `${errors.length} sandbox(es) failed to close.`);
}
