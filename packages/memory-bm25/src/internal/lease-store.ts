import { mkdir, realpath } from "node:fs/promises";
import { resolve } from "node:path";
import { OpenRathError } from "@openrath/core";
import { Bm25Store } from "./bm25-store.js";
import type { Settings } from "./settings.js";

interface Slot {
  readonly store: Promise<Bm25Store>;
  refs: number;
}

/** Open stores by canonical directory: every open of one directory in this process shares one store. */
const open = new Map<string, Slot>();
/** Stores whose last handle closed and that are still saving; a new open waits for them. */
const closing = new Map<string, Promise<void>>();

/** A reference to a shared store; `release` is idempotent and the last release closes the store. */
export interface StoreLease {
  readonly store: Bm25Store;
  readonly directory: string;
  release(): Promise<void>;
}

/**
 * A lease on the store of directory `path` (created when missing), opening it on first use.
 *
 * @throws {OpenRathError} `invalid_argument` when the store is already open with options that
 *   change what is indexed (tokenizer, stop words, whether entries are embedded, embedding model).
 */
export async function leaseStore(path: string, settings: Settings): Promise<StoreLease> {
  const resolved = resolve(path);
  await mkdir(resolved, { recursive: true });
  const directory = await realpath(resolved);
  for (let pending = closing.get(directory); pending; pending = closing.get(directory)) {
    await pending.catch(() => {});
  }
  let slot = open.get(directory);
  if (!slot) {
    const created: Slot = { store: Bm25Store.open(settings, directory), refs: 0 };
    open.set(directory, created);
    created.store.catch(() => {
      if (open.get(directory) === created) open.delete(directory);
    });
    slot = created;
  }
  const current = slot;
  current.refs++;
  let store: Bm25Store;
  try {
    store = await current.store;
  } catch (error) {
    current.refs--;
    throw error;
  }
  let released = false;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    current.refs--;
    if (current.refs > 0 || open.get(directory) !== current) return;
    open.delete(directory);
    const done = store.close();
    closing.set(directory, done);
    try {
      await done;
    } finally {
      if (closing.get(directory) === done) closing.delete(directory);
    }
  };
  const conflict = incompatibility(store.settings, settings);
  if (conflict) {
    await release();
    throw new OpenRathError(
      "invalid_argument",
      `The memory store at ${directory} is already open in this process with different options: ${conflict}. Every open of one directory must use the same tokenizer, stop words and embedding settings.`,
      { details: { directory } },
    );
  }
  return { store, directory, release };
}

function incompatibility(first: Settings, next: Settings): string | undefined {
  if (first.tokenizer !== next.tokenizer) return `tokenizer "${first.tokenizer}" vs "${next.tokenizer}"`;
  if (Boolean(first.embed) !== Boolean(next.embed)) {
    return first.embed
      ? "it was opened with an embed function, this open has none"
      : "it was opened without an embed function, this open has one";
  }
  if (
    first.embedModel !== undefined &&
    next.embedModel !== undefined &&
    first.embedModel !== next.embedModel
  ) {
    return `embedModel "${first.embedModel}" vs "${next.embedModel}"`;
  }
  return undefined;
}
