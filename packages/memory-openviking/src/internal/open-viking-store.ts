import {
  type ForgetSelector,
  type JsonObject,
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
import { extractMemories, memoryId, scopeVisible } from "@openrath/core/backend";
import { parseEntry, serializeEntry } from "./entry-file.js";
import { isAlreadyExists, isNotFound, toMemoryError } from "./errors.js";
import type { HttpClient, HttpRequest } from "./http-client.js";
import { type Layout, segment } from "./layout.js";
import { mapLimit } from "./map-limit.js";
import { checkScope } from "./spec.js";

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

function invalidArgument(message: string, details: Record<string, unknown> = {}): OpenRathError {
  return new OpenRathError("invalid_argument", message, { details });
}

function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 77)}...` : text;
  } catch {
    return String(value);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** An open OpenViking memory store. */
export class OpenVikingStore implements MemoryV1 {
  private closed = false;

  constructor(private readonly config: StoreConfig) {}

  async remember(entries: MemoryInput | readonly MemoryInput[]): Promise<MemoryEntry[]> {
    this.checkOpen("remember");
    const inputs: readonly unknown[] = Array.isArray(entries) ? entries : [entries];
    const now = Date.now();
    const prepared = inputs.map((input, index) => this.prepare(input, index, now));
    // The last entry with an id wins, as if they had been stored one after another.
    const byId = new Map<string, { entry: MemoryEntry; explicit: boolean }>();
    for (const p of prepared) {
      byId.delete(p.entry.id);
      byId.set(p.entry.id, p);
    }
    const unique = [...byId.values()];
    // An explicit id may already name an entry at another scope of the tenant: that one is
    // replaced, so remove it. Derived ids include the scope, so they never need this.
    const explicit = unique.filter((p) => p.explicit);
    if (explicit.length > 0) await this.removeElsewhere(explicit.map((p) => p.entry));
    await mapLimit(unique, this.config.concurrency, async ({ entry }) => {
      await this.write(this.config.layout.entryUri(entry.scope, entry.id), serializeEntry(entry), "remember");
    });
    return unique.map((p) => p.entry);
  }

  async recall(query: string, options: RecallOptions = {}): Promise<MemoryHit[]> {
    this.checkOpen("recall");
    if (typeof query !== "string") {
      throw invalidArgument(`recall expects a query string; got ${describe(query)}.`, { query });
    }
    if (typeof options !== "object" || options === null) {
      throw invalidArgument(`recall options must be an object; got ${describe(options)}.`);
    }
    const topK = options.topK ?? 5;
    if (!Number.isInteger(topK) || topK < 0) {
      throw invalidArgument(`recall option topK must be a non-negative integer; got ${describe(topK)}.`, {
        topK,
      });
    }
    const minScore = options.minScore;
    if (minScore !== undefined && (typeof minScore !== "number" || Number.isNaN(minScore))) {
      throw invalidArgument(`recall option minScore must be a number; got ${describe(minScore)}.`, {
        minScore,
      });
    }
    const scope = options.scope === undefined ? this.config.scope : checkScope(options.scope, "recall scope");
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

  async commit(session: Session, options: { readonly scope?: MemoryScope } = {}): Promise<MemoryEntry[]> {
    this.checkOpen("commit");
    if (
      typeof session !== "object" ||
      session === null ||
      typeof (session as { id?: unknown }).id !== "string" ||
      !Array.isArray((session as { chunks?: unknown }).chunks)
    ) {
      throw invalidArgument(`commit expects a Session; got ${describe(session)}.`);
    }
    const scope =
      options?.scope === undefined ? this.config.scope : checkScope(options.scope, "commit scope");
    const now = Date.now();
    const byId = new Map<string, MemoryEntry>();
    for (const input of extractMemories(session)) {
      const id = memoryId(scope, input.text);
      if (byId.has(id)) continue;
      byId.set(id, {
        id,
        text: input.text,
        scope,
        ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
        ...(input.source !== undefined ? { source: input.source } : {}),
        createdAt: now,
      });
    }
    const candidates = [...byId.values()];
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
    const stored = await mapLimit(fresh, this.config.concurrency, async (entry) => {
      try {
        await this.call(
          {
            method: "POST",
            path: `${API}/content/write`,
            body: this.writeBody(layout.entryUri(scope, entry.id), serializeEntry(entry), "create"),
          },
          "commit",
          true,
        );
        return true;
      } catch (error) {
        // A concurrent commit of the same session stored it first: not ours to report.
        if (isAlreadyExists(error)) return false;
        throw this.wrap(error, "commit");
      }
    });
    const committed = fresh.filter((_, i) => stored[i]);
    // Our entries are stored whatever the server's own extraction does; with waitForExtraction a
    // failed extraction is still reported, naming what was stored.
    if (taskId !== undefined && this.config.waitForExtraction) {
      await this.waitForTask(taskId, committed);
    }
    return committed;
  }

  async forget(selector: ForgetSelector): Promise<number> {
    this.checkOpen("forget");
    if (typeof selector !== "object" || selector === null) {
      throw invalidArgument(`forget expects { ids: [...] } or { scope: {...} }; got ${describe(selector)}.`);
    }
    const { layout } = this.config;
    if ("ids" in selector) {
      const ids = selector.ids;
      if (!Array.isArray(ids) || ids.some((id) => typeof id !== "string")) {
        throw invalidArgument(`forget({ ids }) expects an array of id strings; got ${describe(ids)}.`);
      }
      if (ids.length === 0) return 0;
      const names = new Set(ids.map((id) => layout.entryFileName(id)));
      const rows = await this.listEntries(layout.root, "forget");
      const targets = rows.filter((uri) => names.has(uri.slice(uri.lastIndexOf("/") + 1)));
      const removed = await mapLimit(targets, this.config.concurrency, (uri) =>
        this.remove(uri, false, "forget"),
      );
      return removed.filter(Boolean).length;
    }
    if ("scope" in selector) {
      const scope = checkScope(selector.scope, "forget scope");
      const dir = layout.scopeDir(scope);
      const count = (await this.listEntries(dir, "forget")).length;
      if (count > 0) await this.remove(dir, true, "forget");
      return count;
    }
    throw invalidArgument(`forget expects { ids: [...] } or { scope: {...} }; got ${describe(selector)}.`);
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

  private prepare(input: unknown, index: number, now: number): { entry: MemoryEntry; explicit: boolean } {
    const where = `remember entry ${index}`;
    if (!isPlainObject(input)) {
      throw invalidArgument(`${where} must be an object such as { text: "..." }; got ${describe(input)}.`, {
        index,
      });
    }
    const i = input as Record<string, unknown>;
    if (typeof i.text !== "string") {
      throw invalidArgument(`${where}: text must be a string; got ${describe(i.text)}.`, {
        index,
        field: "text",
      });
    }
    if (i.id !== undefined && (typeof i.id !== "string" || i.id === "")) {
      throw invalidArgument(`${where}: id must be a non-empty string; got ${describe(i.id)}.`, {
        index,
        field: "id",
      });
    }
    if (i.metadata !== undefined && !isPlainObject(i.metadata)) {
      throw invalidArgument(`${where}: metadata must be a plain JSON object; got ${describe(i.metadata)}.`, {
        index,
        field: "metadata",
      });
    }
    if (i.source !== undefined && typeof i.source !== "string") {
      throw invalidArgument(`${where}: source must be a string; got ${describe(i.source)}.`, {
        index,
        field: "source",
      });
    }
    const scope = i.scope === undefined ? this.config.scope : checkScope(i.scope, `${where} scope`);
    const id = (i.id as string | undefined) ?? memoryId(scope, i.text);
    return {
      entry: {
        id,
        text: i.text,
        scope,
        ...(i.metadata !== undefined ? { metadata: i.metadata as JsonObject } : {}),
        ...(i.source !== undefined ? { source: i.source as string } : {}),
        createdAt: now,
      },
      explicit: i.id !== undefined,
    };
  }

  /** Removes entries with the ids of `entries` stored at other scopes of the same tenant. */
  private async removeElsewhere(entries: readonly MemoryEntry[]): Promise<void> {
    const { layout } = this.config;
    const byTenant = new Map<string, MemoryEntry[]>();
    for (const entry of entries) {
      const tenant = entry.scope.tenant!;
      byTenant.set(tenant, [...(byTenant.get(tenant) ?? []), entry]);
    }
    for (const [tenant, group] of byTenant) {
      const keep = new Set(group.map((e) => layout.canonical(layout.entryUri(e.scope, e.id))));
      const names = new Set(group.map((e) => layout.entryFileName(e.id)));
      const rows = await this.listEntries(layout.scopeDir({ tenant }), "remember");
      const stale = rows.filter(
        (uri) => names.has(uri.slice(uri.lastIndexOf("/") + 1)) && !keep.has(layout.canonical(uri)),
      );
      await mapLimit(stale, this.config.concurrency, (uri) => this.remove(uri, false, "remember"));
    }
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

  /**
   * A `content/write` body. `wait: true` makes the server re-index before answering, so a recall
   * right after sees the entry (content is stored either way; only the vectors lag).
   */
  private writeBody(uri: string, content: string, mode: "create" | "replace"): Record<string, unknown> {
    return this.config.waitForIndex ? { uri, content, mode, wait: true } : { uri, content, mode };
  }

  /** Writes an entry file, creating it or replacing the one there. */
  private async write(uri: string, content: string, what: string): Promise<void> {
    let mode: "create" | "replace" = "create";
    for (let attempt = 0; ; attempt++) {
      try {
        await this.config.client.call({
          method: "POST",
          path: `${API}/content/write`,
          body: this.writeBody(uri, content, mode),
        });
        return;
      } catch (error) {
        // Create refuses an existing file and replace a missing one; a concurrent writer or
        // forget can flip which is right between our calls, so try the other a few times.
        if (attempt < 3 && mode === "create" && isAlreadyExists(error)) mode = "replace";
        else if (attempt < 3 && mode === "replace" && isNotFound(error)) mode = "create";
        else throw this.wrap(error, what, { uri });
      }
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
    for (const entry of entries) {
      const role = entry.metadata?.role === "assistant" ? "assistant" : "user";
      await this.call(
        {
          method: "POST",
          path: `${API}/sessions/${encodeURIComponent(sid)}/messages`,
          body: { role, content: entry.text },
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
