import {
  type ForgetSelector,
  type MemoryEntry,
  MemoryError,
  type MemoryHit,
  type MemoryInput,
  type MemoryScope,
  type RecallOptions,
  type Session,
} from "@openrath/core";
import { parseCommitArgs, parseForgetArgs, parseMemoryInputs, parseRecallArgs } from "@openrath/core/backend";
import type { Bm25Store } from "./bm25-store.js";
import type { Settings } from "./settings.js";

/**
 * One handle on a {@link Bm25Store}. Handles of one directory share the store; each has its own
 * default scope, ranking settings and closed state. Arguments are checked by core's shared checks
 * before the store is touched.
 */
export class Bm25MemoryHandle {
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly store: Bm25Store,
    private readonly settings: Settings,
    private readonly defaultScope: MemoryScope,
    readonly directory: string | undefined,
    private readonly releaseStore: () => Promise<void>,
  ) {}

  async remember(entries: MemoryInput | readonly MemoryInput[]): Promise<MemoryEntry[]> {
    this.checkOpen("remember");
    return this.store.put(parseMemoryInputs(entries, this.defaultScope, Date.now()), false);
  }

  async recall(query: string, options?: RecallOptions): Promise<MemoryHit[]> {
    this.checkOpen("recall");
    const parsed = parseRecallArgs(query, options, this.defaultScope);
    return this.store.recall({ ...parsed, ranking: this.settings });
  }

  async commit(session: Session, options?: { readonly scope?: MemoryScope }): Promise<MemoryEntry[]> {
    this.checkOpen("commit");
    const { entries } = parseCommitArgs(session, options, this.defaultScope, Date.now());
    return this.store.put(entries, true);
  }

  async forget(selector: ForgetSelector): Promise<number> {
    this.checkOpen("forget");
    const parsed = parseForgetArgs(selector, this.defaultScope);
    return parsed.kind === "ids"
      ? this.store.deleteIds(parsed.ids, parsed.scope)
      : this.store.deleteScope(parsed.scope);
  }

  /** Compacts the change log into the snapshot now (no-op for a store kept in memory). */
  async flush(): Promise<void> {
    this.checkOpen("flush");
    await this.store.flush();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing ??= this.releaseStore();
    await this.closing;
  }

  private checkOpen(method: string): void {
    if (this.closed) {
      throw new MemoryError(
        "memory_closed",
        `Cannot ${method}: this bm25 memory store was closed. Open it again.`,
      );
    }
  }
}
