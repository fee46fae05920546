import {
  type ForgetSelector,
  type MemoryEntry,
  MemoryError,
  type MemoryHit,
  type MemoryInput,
  type MemoryScope,
  type MemoryV1,
  OpenRathError,
  type RecallOptions,
  type Session,
} from "@openrath/core";
import {
  parseCommitArgs,
  parseForgetArgs,
  parseMemoryInputs,
  parseRecallArgs,
  scopeVisible,
} from "@openrath/core/backend";
import { parseEntry, serializeEntry } from "./entry-file.js";
import { isAlreadyExists, isMissingRoot, isNotFound, toMemoryError } from "./errors.js";
import type { HttpClient, HttpRequest } from "./http-client.js";
import { type Layout, segment } from "./layout.js";
import { mapLimit } from "./map-limit.js";

/** Settings of an open store. */
export interface StoreConfig {
  readonly client: HttpClient;
  readonly layout: Layout;
  readonly baseUrl: string;
  /** The store's default scope (normalized). */
  readonly scope: MemoryScope;
  readonly commitSessions: boolean;
  readonly waitForExtraction: boolean;
  readonly extractionTimeoutMs: number;
  readonly pollIntervalMs: number;
  /** Send `wait: true` with every write (read-your-writes on a server that indexes asynchronously). */
  readonly waitForIndex: boolean;
  readonly maxScan: number;
  readonly concurrency: number;
}

/** One hit of `POST /search/find`, as much of it as we read. */
interface FindHit {
  readonly uri?: unknown;
  readonly score?: unknown;
  readonly level?: unknown;
}

interface FindResult {
  readonly memories?: FindHit[];
  readonly resources?: FindHit[];
  readonly skills?: FindHit[];
}

/** One row of `GET /fs/ls` in `output=original`. */
interface ListRow {
  readonly uri?: unknown;
  readonly isDir?: unknown;
}

interface CommitResult {
  readonly status?: unknown;
  readonly task_id?: unknown;
}

interface TaskResult {
  readonly status?: unknown;
  readonly error?: unknown;
  readonly result?: unknown;
}

const API = "/api/v1";
/** Most hits one recall asks the server for while over-fetching. */
const FETCH_CAP = 2000;
/** The server's limits on one `content/batch-write`: 256 files and 16 MiB (we keep a margin). */
const BATCH_OPERATIONS = 256;
const BATCH_BYTES = 15 * 1024 * 1024;
/** The server's limit on one `messages/batch`. */
const MESSAGES_PER_BATCH = 100;

/** An open OpenViking memory store. */
export class OpenVikingStore implements MemoryV1 {
  private closed = false;

  constructor(private readonly config: StoreConfig) {}

  async remember(entries: MemoryInput | readonly MemoryInput[]): Promise<MemoryEntry[]> {
    this.checkOpen("remember");
    const parsed = parseMemoryInputs(entries, this.config.scope, Date.now());
    await this.writeEntries(parsed, "remember");
    return parsed;
  }

  async recall(query: string, options?: RecallOptions): Promise<MemoryHit[]> {
    this.checkOpen("recall");
    const parsed = parseRecallArgs(query, options, this.config.scope);
    const { topK, scope } = parsed;
    const minScore = Number.isFinite(parsed.minScore) ? parsed.minScore : undefined;
    if (query.trim() === "" || topK === 0) return [];

    const { layout } = this.config;
    const dirs = layout.visibleEntriesDirs(scope);
    const dirSet = new Set(dirs);
    const seen = new Map<string, MemoryEntry | null>();
    let limit = Math.min(FETCH_CAP, topK * 2 + 8);
    for (;;) {
      const body: Record<string, unknown> = { query, target_uri: dirs, limit };
      if (minScore !== undefined) body.score_threshold = minScore;
      const result = await this.call<FindResult>(
        { method: "POST", path: `${API}/search/find`, body },
        "recall",
      );
      const raw = [...(result?.memories ?? []), ...(result?.resources ?? []), ...(result?.skills ?? [])];
      const best = new Map<string, { uri: string; score: number }>();
      for (const hit of raw) {
        if (typeof hit?.uri !== "string" || typeof hit.score !== "number" || !Number.isFinite(hit.score))
          continue;
        // The server may answer with directory (L0/L1) hits and, if it cannot filter exactly,
        // with entries of other scopes: keep entry files directly in the visible directories.
        if (!layout.isEntryIn(hit.uri, dirSet)) continue;
        if (hit.score <= 0 || (minScore !== undefined && hit.score < minScore)) continue;
        const key = layout.canonical(hit.uri);
        const prior = best.get(key);
        if (!prior || prior.score < hit.score) best.set(key, { uri: hit.uri, score: hit.score });
      }
      const candidates = [...best.entries()].sort(
        ([ka, a], [kb, b]) => b.score - a.score || (ka < kb ? -1 : ka > kb ? 1 : 0),
      );
      const hits: MemoryHit[] = [];
      for (let i = 0; i < candidates.length && hits.length < topK; ) {
        const batch = candidates.slice(i, i + Math.max(topK - hits.length, 1));
        i += batch.length;
        const entries = await mapLimit(batch, this.config.concurrency, async ([key, c]) => {
          if (!seen.has(key)) seen.set(key, await this.readEntry(c.uri, scope, dirs));
          return seen.get(key) ?? null;
        });
        batch.forEach(([, c], j) => {
          const entry = entries[j];
          if (entry && hits.length < topK) hits.push({ entry, score: c.score });
        });
      }
      if (hits.length >= topK || raw.length < limit || limit >= FETCH_CAP) return hits;
      limit = Math.min(FETCH_CAP, limit * 4);
    }
  }

  async commit(session: Session, options?: { readonly scope?: MemoryScope }): Promise<MemoryEntry[]> {
    this.checkOpen("commit");
    const { scope, entries } = parseCommitArgs(session, options, this.config.scope, Date.now());
    const candidates = [...entries];
    const { layout } = this.config;
    const exists = await mapLimit(candidates, this.config.concurrency, async (entry) => {
      try {
        await this.call(
          { method: "GET", path: `${API}/fs/stat`, query: { uri: layout.entryUri(scope, entry.id) } },
          "commit",
        );
        return true;
      } catch (error) {
        if (OpenRathError.isInstance(error, "memory_not_found")) return false;
        throw error;
      }
    });
    const fresh = candidates.filter((_, i) => !exists[i]);
    if (fresh.length === 0) return [];
    const taskId = this.config.commitSessions ? await this.commitToSession(session.id, fresh) : undefined;
    // Upsert: a concurrent commit of the same session writes the same text under the same id.
    await this.writeEntries(fresh, "commit");
    const committed = fresh;
    // Our entries are stored whatever the server's own extraction does; with waitForExtraction a
    // failed extraction is still reported, naming what was stored.
    if (taskId !== undefined && this.config.waitForExtraction) {
      await this.waitForTask(taskId, committed);
    }
    return committed;
  }

  async forget(selector: ForgetSelector): Promise<number> {
    this.checkOpen("forget");
    const parsed = parseForgetArgs(selector, this.config.scope);
    const { layout } = this.config;
    if (parsed.kind === "ids") {
      // Ids are unique within a scope: each names one file, deleted directly (no listing).
      const removed = await mapLimit(parsed.ids, this.config.concurrency, (id) =>
        this.remove(layout.entryUri(parsed.scope, id), false, "forget"),
      );
      return removed.filter(Boolean).length;
    }
    const dir = layout.scopeDir(parsed.scope);
    const count = (await this.listEntries(dir, "forget")).length;
    if (count > 0) await this.remove(dir, true, "forget");
    return count;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private checkOpen(method: string): void {
    if (this.closed) {
      throw new MemoryError(
        "memory_closed",
        `Cannot ${method}: this OpenViking memory store was closed. Open a new one.`,
      );
    }
  }

  /**
   * Writes entries with `content/batch-write` (mode `upsert`), one batch per entries directory
   * and at most {@link BATCH_OPERATIONS} files or {@link BATCH_BYTES} bytes each; a directory that
   * does not exist yet is made first (the batch root must exist).
   */
  private async writeEntries(entries: readonly MemoryEntry[], what: string): Promise<void> {
    const { layout } = this.config;
    const byDir = new Map<string, { uri: string; content: string }[]>();
    for (const entry of entries) {
      const dir = layout.entriesDir(entry.scope);
      const list = byDir.get(dir) ?? [];
      list.push({ uri: layout.entryUri(entry.scope, entry.id), content: serializeEntry(entry) });
      byDir.set(dir, list);
    }
    const batches: { dir: string; operations: { uri: string; content: string }[] }[] = [];
    for (const [dir, files] of byDir) {
      let current: { uri: string; content: string }[] = [];
      let bytes = 0;
      for (const file of files) {
        const size = Buffer.byteLength(file.content);
        if (current.length > 0 && (current.length >= BATCH_OPERATIONS || bytes + size > BATCH_BYTES)) {
          batches.push({ dir, operations: current });
          current = [];
          bytes = 0;
        }
        current.push(file);
        bytes += size;
      }
      if (current.length > 0) batches.push({ dir, operations: current });
    }
    await mapLimit(batches, this.config.concurrency, async ({ dir, operations }) => {
      const body = {
        root_uri: dir,
        operations: operations.map((op) => ({ ...op, mode: "upsert" })),
        wait: this.config.waitForIndex,
      };
      const request = { method: "POST" as const, path: `${API}/content/batch-write`, body };
      try {
        await this.config.client.call(request);
      } catch (error) {
        if (!isMissingRoot(error)) throw this.wrap(error, what, { root_uri: dir });
        await this.call({ method: "POST", path: `${API}/fs/mkdir`, body: { uri: dir } }, what);
        await this.call(request, what);
      }
    });
  }

  /** Entry files anywhere under `dir` (none when it does not exist). */
  private async listEntries(dir: string, what: string): Promise<string[]> {
    let rows: ListRow[];
    try {
      rows =
        (await this.config.client.call<ListRow[]>({
          method: "GET",
          path: `${API}/fs/ls`,
          query: {
            uri: dir,
            recursive: true,
            simple: false,
            output: "original",
            node_limit: this.config.maxScan,
          },
        })) ?? [];
    } catch (error) {
      if (isNotFound(error)) return [];
      throw this.wrap(error, what);
    }
    if (!Array.isArray(rows)) {
      throw new MemoryError("memory_remote_error", `${what} failed: fs/ls of ${dir} did not answer a list.`, {
        details: { uri: dir, result: rows },
      });
    }
    if (rows.length >= this.config.maxScan) {
      throw new MemoryError(
        "memory_remote_error",
        `${what} failed: ${dir} holds more than ${this.config.maxScan} nodes, more than one listing returns. Raise option "maxScan".`,
        { details: { uri: dir, maxScan: this.config.maxScan } },
      );
    }
    return rows
      .filter((row) => typeof row?.uri === "string" && row.isDir !== true)
      .map((row) => row.uri as string)
      .filter((uri) => this.config.layout.isEntry(uri));
  }

  /** Deletes a file or directory; false when it was already gone. */
  private async remove(uri: string, recursive: boolean, what: string): Promise<boolean> {
    try {
      await this.config.client.call({ method: "DELETE", path: `${API}/fs`, query: { uri, recursive } });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw this.wrap(error, what);
    }
  }

  /** Reads and checks one recalled entry; null when it is gone or not where its scope says. */
  private async readEntry(
    uri: string,
    scope: MemoryScope,
    dirs: readonly string[],
  ): Promise<MemoryEntry | null> {
    const { layout } = this.config;
    let content: unknown;
    try {
      content = await this.config.client.call({
        method: "GET",
        path: `${API}/content/read`,
        query: { uri, offset: 0, limit: -1 },
      });
    } catch (error) {
      if (isNotFound(error)) return null;
      throw this.wrap(error, "recall", { uri });
    }
    if (typeof content !== "string") return null;
    const entry = parseEntry(content);
    if (entry) {
      // The file must be where its own scope and id put it, and that scope visible to the asker.
      if (layout.canonical(layout.entryUri(entry.scope, entry.id)) !== layout.canonical(uri)) return null;
      return scopeVisible(entry.scope, scope) ? entry : null;
    }
    // A file someone else put into an entries directory: its scope is the directory's.
    const parent = layout.parentOf(uri);
    const level = dirs.indexOf(parent);
    if (level < 0) return null;
    const owner: Record<string, string> = {};
    const levels = ["tenant", "user", "agent", "session"] as const;
    for (let i = 0; i <= level; i++) owner[levels[i]!] = scope[levels[i]!]!;
    const name = uri.slice(uri.lastIndexOf("/") + 1).replace(/\.md$/, "");
    return { id: name, text: content, scope: owner as MemoryScope, createdAt: 0 };
  }

  /**
   * Sends the newly kept turns to an OpenViking session and commits it (archive + server-side
   * extraction). Returns the extraction task's id, if the server started one.
   */
  private async commitToSession(
    sessionId: string,
    entries: readonly MemoryEntry[],
  ): Promise<string | undefined> {
    const sid = segment(sessionId);
    try {
      await this.config.client.call({ method: "POST", path: `${API}/sessions`, body: { session_id: sid } });
    } catch (error) {
      // Create is not idempotent (409 for an existing id); adding messages auto-creates anyway.
      if (!isAlreadyExists(error)) throw this.wrap(error, "commit", { sessionId: sid });
    }
    // messages/batch takes at most 100 messages per call.
    for (let start = 0; start < entries.length; start += MESSAGES_PER_BATCH) {
      const messages = entries.slice(start, start + MESSAGES_PER_BATCH).map((entry) => {
        const assistant = entry.metadata?.role === "assistant";
        return {
          role: assistant ? "assistant" : "user",
          content: entry.text,
          message_kind: assistant ? "assistant_step" : "user_query",
          created_at: new Date(entry.createdAt).toISOString(),
        };
      });
      await this.call(
        {
          method: "POST",
          path: `${API}/sessions/${encodeURIComponent(sid)}/messages/batch`,
          body: { messages },
        },
        "commit",
      );
    }
    const result = await this.call<CommitResult>(
      { method: "POST", path: `${API}/sessions/${encodeURIComponent(sid)}/commit`, body: {} },
      "commit",
    );
    return typeof result?.task_id === "string" && result.task_id !== "" ? result.task_id : undefined;
  }

  private async waitForTask(taskId: string, stored: readonly MemoryEntry[]): Promise<void> {
    const deadline = Date.now() + this.config.extractionTimeoutMs;
    for (;;) {
      const task = await this.call<TaskResult>(
        { method: "GET", path: `${API}/tasks/${encodeURIComponent(taskId)}` },
        "commit",
      );
      const status = task?.status;
      if (status === "completed") return;
      if (status === "failed" || status === "cancelled") {
        throw new MemoryError(
          "memory_remote_error",
          `commit stored ${stored.length} entries, but OpenViking's memory extraction task ${taskId} ${status}${typeof task?.error === "string" ? `: ${task.error}` : ""}.`,
          {
            details: {
              taskId,
              taskStatus: status,
              taskError: task?.error ?? null,
              storedIds: stored.map((e) => e.id),
              url: this.config.baseUrl,
            },
          },
        );
      }
      if (Date.now() >= deadline) {
        throw new MemoryError(
          "memory_remote_error",
          `commit stored ${stored.length} entries, but OpenViking's memory extraction task ${taskId} was still ${String(status)} after ${this.config.extractionTimeoutMs} ms. Raise option "extractionTimeoutMs" or turn off "waitForExtraction".`,
          {
            details: {
              taskId,
              taskStatus: status,
              storedIds: stored.map((e) => e.id),
              url: this.config.baseUrl,
            },
          },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, this.config.pollIntervalMs));
    }
  }

  /** One call; failures become MemoryErrors unless `raw` (the caller inspects them first). */
  private async call<T>(request: HttpRequest, what: string, raw = false): Promise<T> {
    try {
      return await this.config.client.call<T>(request);
    } catch (error) {
      if (raw) throw error;
      throw this.wrap(error, what);
    }
  }

  private wrap(error: unknown, what: string, extra: Record<string, unknown> = {}) {
    return toMemoryError(error, what, this.config.baseUrl, extra);
  }
}
