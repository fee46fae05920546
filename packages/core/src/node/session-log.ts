import { constants, existsSync } from "node:fs";
import { type FileHandle, mkdir, open, readdir, readFile, rename, unlink } from "node:fs/promises";
import { homedir, hostname } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import type { Chunk } from "../chunk.js";
import { OpenRathError, SessionLogError } from "../errors.js";
import { isSessionId } from "../internal/id.js";
import { lineageToJSON } from "../internal/session-json.js";
import type { JsonValue } from "../json.js";
import type { Placement } from "../placement.js";
import { type LineageNodeJSON, restoreSession, Session, type SessionJSON } from "../session.js";
import { type Usage, ZERO_USAGE } from "../usage.js";
import { checkSessionId, sessionLogPath } from "./internal/log-path.js";

/** The log format version this core writes and the newest it reads. */
export const SESSION_LOG_VERSION = 1;

const PARTIAL = ".partial";
const LOCK = ".lock";

/** First line of a session log. */
export interface SessionLogHeader {
  readonly record_type: "header";
  readonly format: "openrath.session-log";
  readonly schema_version: number;
  readonly id: string;
  /** ISO-8601 UTC time the log was opened. */
  readonly created_at: string;
  readonly lineage: readonly LineageNodeJSON[];
  readonly placement: { readonly key: string; readonly spec?: JsonValue } | null;
}

/** Last line of a cleanly closed session log. */
export interface SessionLogTrailer {
  readonly record_type: "trailer";
  /** ISO-8601 UTC time the log was closed. */
  readonly closed_at: string;
  readonly final_chunk_count: number;
  readonly cumulative_usage: Usage;
}

/** A session log read back by {@link readSessionLog}. */
export interface SessionLog {
  /** The session, equal to the one written (same id, chunks, lineage and placement). */
  readonly session: Session;
  readonly header: SessionLogHeader;
  /** The trailer, present when the writer closed cleanly. */
  readonly trailer?: SessionLogTrailer;
  /** Whether the writer closed cleanly. A log without a trailer was abandoned or its writer crashed. */
  readonly closed: boolean;
  /** Whether an incomplete last line (a write cut short by a crash) was dropped. */
  readonly torn: boolean;
  /** The file that was read. */
  readonly path: string;
}

/** Where logs go by default: `$OPENRATH_HOME/sessions`, else `./.openrath/sessions` if `./.openrath` exists, else `~/.openrath/sessions`. */
export function defaultSessionLogDir(): string {
  const home = process.env.OPENRATH_HOME;
  if (home) return join(resolve(home), "sessions");
  const local = resolve(".openrath");
  return join(existsSync(local) ? local : join(homedir(), ".openrath"), "sessions");
}

/** Options for {@link SessionLogWriter.open} and {@link writeSessionLog}. */
export interface SessionLogWriterOptions {
  /** Directory for `<session id>.jsonl`; defaults to {@link defaultSessionLogDir}. Ignored when `path` is given. */
  readonly dir?: string;
  /** Exact final path of the log (must end in `.jsonl`). */
  readonly path?: string;
  /** Call fsync after every write, not only on close. Slower; survives power loss mid-run. */
  readonly fsyncEachWrite?: boolean;
}

function logError(code: string, message: string, details: Record<string, unknown> = {}, cause?: unknown) {
  return new SessionLogError(code, message, { details, ...(cause === undefined ? {} : { cause }) });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Takes the writer lock, clearing a lock left by a process that no longer runs on this host. */
async function takeLock(lockPath: string, logPath: string): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lockPath, "wx", 0o600);
      await handle.writeFile(
        JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() }),
      );
      await handle.close();
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      let owner: { pid?: number; host?: string } = {};
      try {
        owner = JSON.parse(await readFile(lockPath, "utf8"));
      } catch {
        // An unreadable lock is treated as live: a writer may be between create and write.
      }
      const stale = owner.host === hostname() && typeof owner.pid === "number" && !isAlive(owner.pid);
      if (!stale || attempt > 0) {
        throw logError(
          "log_locked",
          `Session log ${logPath} is being written by another writer (process ${owner.pid ?? "?"} on ${owner.host ?? "?"}). One writer per session: close the other writer first.`,
          { path: logPath, lock: lockPath, owner },
        );
      }
      await unlink(lockPath).catch(() => {});
    }
  }
}

/**
 * Writes one session's log: a header, one line per chunk as the session grows, and a trailer on
 * close. While open the file is `<id>.jsonl.partial`; {@link SessionLogWriter.close} writes the
 * trailer and renames it to `<id>.jsonl`, so a file without a trailer marks a crash. Only one
 * writer per session may be open at a time (a lock file next to the log enforces it).
 *
 * @example
 * ```ts
 * const log = await SessionLogWriter.open(session, { dir: "./logs" });
 * session = session.append({ kind: "user", content: "more" });
 * await log.write(session);
 * await log.close(session);
 * ```
 */
export class SessionLogWriter {
  private written = 0;
  private lastId: string | undefined;
  private latest: Session | undefined;
  /** The placement last written, as JSON, and (weakly, so no sandbox is kept open) its object. */
  private placementJson: string;
  private placementSeen: WeakRef<Placement> | undefined;
  private queue: Promise<void> = Promise.resolve();
  private state: "open" | "closed" | "abandoned" = "open";

  private constructor(
    /** Final path of the log (`<id>.jsonl`). */
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly id: string,
    private readonly options: SessionLogWriterOptions,
    placementJson: string,
  ) {
    this.placementJson = placementJson;
  }

  /** Path of the log while it is open. */
  get partialPath(): string {
    return this.path + PARTIAL;
  }

  /**
   * Opens a log for `session` and writes its header and current chunks.
   *
   * @throws {SessionLogError} `log_locked` if another writer holds the session; `log_exists` if a
   *   closed log for this session is already there; `log_conflict` if a crashed partial log holds
   *   chunks this session does not have (nothing is overwritten then); `log_path_outside_dir` if
   *   `<dir>/<id>.jsonl` would resolve outside `dir`.
   * @throws {OpenRathError} `invalid_session_id` if the session's id is not a session id (only a
   *   forged session has one), before any file is touched.
   */
  static async open(session: Session, options: SessionLogWriterOptions = {}): Promise<SessionLogWriter> {
    if (!(session instanceof Session)) {
      throw new OpenRathError("invalid_argument", "SessionLogWriter.open expects a Session.", {
        details: { value: session },
      });
    }
    checkSessionId(session.id, "SessionLogWriter.open");
    const path = options.path
      ? resolve(options.path)
      : sessionLogPath(options.dir ?? defaultSessionLogDir(), session.id, "SessionLogWriter.open");
    if (!path.endsWith(".jsonl")) {
      throw new OpenRathError("invalid_argument", `A session log path must end in ".jsonl", got ${path}.`, {
        details: { path },
      });
    }
    await mkdir(dirname(path), { recursive: true });
    if (existsSync(path)) {
      throw logError(
        "log_exists",
        `A closed log for session ${session.id} already exists at ${path}. Fork the session to log a new branch.`,
        {
          path,
        },
      );
    }
    const lockPath = path + LOCK;
    await takeLock(lockPath, path);
    let handle: FileHandle | undefined;
    try {
      if (existsSync(path + PARTIAL)) {
        // A writer crashed. Its chunks must all be in this session, or rewriting would lose them.
        let previous: SessionLog;
        try {
          previous = await readSessionLog(path + PARTIAL);
        } catch (cause) {
          throw logError(
            "log_corrupt",
            `Cannot reopen the log of session ${session.id}: the unfinished log at ${path + PARTIAL} cannot be read (${(cause as Error).message}). Nothing was overwritten; move the file aside (or delete it if it holds nothing you need) and open the log again.`,
            { path: path + PARTIAL, ...(cause as OpenRathError).details },
            cause,
          );
        }
        const theirs = previous.session;
        let covered = theirs.id === session.id && theirs.length <= session.length;
        for (let i = 0; covered && i < theirs.length; i++) covered = theirs.at(i)!.id === session.at(i)!.id;
        if (!covered) {
          throw logError(
            "log_conflict",
            `An unfinished log at ${path + PARTIAL} holds chunks that session ${session.id} does not; refusing to overwrite it. Read it with readSessionLog() and move it aside.`,
            { path: path + PARTIAL },
          );
        }
      }
      handle = await open(path + PARTIAL, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o600);
      const header: SessionLogHeader = {
        record_type: "header",
        format: "openrath.session-log",
        schema_version: SESSION_LOG_VERSION,
        id: session.id,
        created_at: new Date().toISOString(),
        lineage: lineageToJSON(session.lineage),
        placement: placementOf(session.placement),
      };
      await handle.write(`${JSON.stringify(header)}\n`);
      const writer = new SessionLogWriter(
        path,
        handle,
        session.id,
        options,
        JSON.stringify(header.placement),
      );
      writer.placementSeen = session.placement ? new WeakRef(session.placement) : undefined;
      await writer.write(session);
      return writer;
    } catch (e) {
      await handle?.close().catch(() => {});
      await unlink(lockPath).catch(() => {});
      throw e;
    }
  }

  /** Number of chunks written so far. */
  get chunkCount(): number {
    return this.written;
  }

  /**
   * Appends the chunks `session` has beyond what the log holds. `session` must be a later version
   * of the logged session (same id, and every logged chunk still in place).
   *
   * @throws {SessionLogError} `log_conflict` for another session or a diverged version;
   *   `log_closed` after close or abandon.
   */
  write(session: Session): Promise<void> {
    return this.enqueue(async () => {
      if (session.id !== this.id) {
        throw logError("log_conflict", `This log records session ${this.id}; got session ${session.id}.`, {
          expected: this.id,
          got: session.id,
        });
      }
      if (
        session.length < this.written ||
        (this.written > 0 && session.at(this.written - 1)!.id !== this.lastId)
      ) {
        throw logError(
          "log_conflict",
          `Session ${this.id} no longer extends the ${this.written} chunk(s) already logged; a log only grows.`,
          { path: this.path, logged: this.written, length: session.length },
        );
      }
      const lines: string[] = [];
      // Placement is compared by object first: every version of a session shares one, so only
      // a session placed anew (`to`) costs a look at its spec, and never at its chunks.
      const placed = session.placement;
      if (placed !== this.placementSeen?.deref()) {
        const placement = placementOf(placed);
        const json = JSON.stringify(placement);
        if (json !== this.placementJson) {
          lines.push(JSON.stringify({ record_type: "placement", placement }));
          this.placementJson = json;
        }
        this.placementSeen = placed ? new WeakRef(placed) : undefined;
      }
      let index = this.written;
      for (const chunk of session.chunksFrom(this.written)) {
        lines.push(JSON.stringify({ record_type: "chunk", index: index++, chunk }));
      }
      if (lines.length === 0) {
        this.latest = session;
        return;
      }
      await this.handle.write(`${lines.join("\n")}\n`);
      if (this.options.fsyncEachWrite) await this.handle.datasync();
      this.written = session.length;
      this.lastId = session.at(session.length - 1)?.id;
      this.latest = session;
    });
  }

  /**
   * Writes any remaining chunks of `session`, then the trailer; flushes to disk and renames the
   * partial file to its final name. Idempotent: a second call returns the same path.
   *
   * @returns the final path.
   */
  async close(session?: Session): Promise<string> {
    if (this.state === "closed") return this.path;
    if (session) await this.write(session);
    await this.enqueue(async () => {
      const usage = this.latest?.usage ?? ZERO_USAGE;
      const trailer: SessionLogTrailer = {
        record_type: "trailer",
        closed_at: new Date().toISOString(),
        final_chunk_count: this.written,
        cumulative_usage: usage,
      };
      await this.handle.write(`${JSON.stringify(trailer)}\n`);
      await this.handle.sync();
      await this.handle.close();
      await rename(this.partialPath, this.path);
      await syncDir(dirname(this.path));
      this.state = "closed";
      await unlink(this.path + LOCK).catch(() => {});
    });
    return this.path;
  }

  /**
   * Stops writing without a trailer: the partial file stays as the record of an unfinished run.
   * Use when the run failed. Idempotent.
   */
  async abandon(): Promise<void> {
    if (this.state !== "open") return;
    this.state = "abandoned";
    await this.queue.catch(() => {});
    await this.handle.close().catch(() => {});
    await unlink(this.path + LOCK).catch(() => {});
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.queue.then(() => {
      if (this.state !== "open") {
        throw logError(
          "log_closed",
          `The log ${this.path} is ${this.state}; open a new writer to continue.`,
          { path: this.path },
        );
      }
      return task();
    });
    // A failed write leaves later writes free to report their own errors.
    this.queue = run.catch(() => {});
    return run;
  }
}

/** A placement as the log records it (the shape `toJSON` gives), or null. */
function placementOf(placement: Placement | undefined): SessionLogHeader["placement"] {
  return placement ? { key: placement.key, spec: placement.spec as JsonValue } : null;
}

async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    await handle.sync().finally(() => handle.close());
  } catch {
    // Some file systems refuse fsync on directories; the rename itself has already happened.
  }
}

/** Writes a whole session as a closed log in one go. Returns the final path. */
export async function writeSessionLog(
  session: Session,
  options: SessionLogWriterOptions = {},
): Promise<string> {
  const writer = await SessionLogWriter.open(session, options);
  return writer.close();
}

/**
 * Reads a session log back. `path` may name the final file or, for an unfinished log, the
 * `.partial` file (a final path that does not exist falls back to its partial). An incomplete last
 * line is dropped (`torn: true`); any other damage is an error naming the file and line.
 *
 * @throws {SessionLogError} `log_corrupt` with `file:line`, or `log_unsupported_version`.
 */
export async function readSessionLog(path: string): Promise<SessionLog> {
  let file = resolve(path);
  if (!existsSync(file) && existsSync(file + PARTIAL)) file += PARTIAL;
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (cause) {
    throw logError(
      "log_not_found",
      `Cannot read session log ${file}: ${(cause as Error).message}`,
      { path: file },
      cause,
    );
  }
  return parseSessionLog(text, file);
}

/** Parses the text of a session log; `file` is used in error messages. See {@link readSessionLog}. */
export function parseSessionLog(text: string, file = "<session log>"): SessionLog {
  const lines = text.split("\n");
  let torn = false;
  const last = lines.pop()!;
  if (last !== "") {
    // No newline at the end: a crash cut the last write short, unless the line is complete.
    try {
      JSON.parse(last);
      lines.push(last);
    } catch {
      torn = true;
    }
  }
  const corrupt = (line: number, why: string, cause?: unknown) =>
    logError("log_corrupt", `${file}:${line}: ${why}`, { file, line }, cause);
  let header: SessionLogHeader | undefined;
  let trailer: SessionLogTrailer | undefined;
  let placement: SessionLogHeader["placement"] = null;
  const chunks: Chunk[] = [];
  const chunkLines: number[] = [];
  for (const [i, raw] of lines.entries()) {
    const line = i + 1;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(raw);
    } catch (cause) {
      throw corrupt(line, `not valid JSON (${(cause as Error).message})`, cause);
    }
    if (typeof record !== "object" || record === null || Array.isArray(record))
      throw corrupt(line, "a record must be a JSON object");
    if (trailer) throw corrupt(line, "a record after the trailer");
    switch (record.record_type) {
      case "header": {
        if (header) throw corrupt(line, "a second header");
        if (line !== 1) throw corrupt(line, "the header must be the first line");
        const version = record.schema_version;
        if (typeof version !== "number") throw corrupt(line, "header without schema_version");
        if (version > SESSION_LOG_VERSION) {
          throw logError(
            "log_unsupported_version",
            `${file}:${line}: log schema_version ${version} is newer than this core reads (${SESSION_LOG_VERSION}); refusing to downgrade. Upgrade @openrath/core.`,
            { file, line, version },
          );
        }
        if (typeof record.id !== "string" || !Array.isArray(record.lineage))
          throw corrupt(line, "header without id or lineage");
        header = record as unknown as SessionLogHeader;
        placement = header.placement ?? null;
        continue;
      }
      case "chunk": {
        if (!header) throw corrupt(line, "a chunk before the header");
        if (record.index !== chunks.length)
          throw corrupt(
            line,
            `chunk index ${JSON.stringify(record.index)} where ${chunks.length} was expected`,
          );
        chunks.push(record.chunk as Chunk);
        chunkLines.push(line);
        continue;
      }
      case "placement":
        if (!header) throw corrupt(line, "a placement before the header");
        placement = (record.placement as SessionLogHeader["placement"]) ?? null;
        continue;
      case "trailer":
        if (!header) throw corrupt(line, "a trailer before the header");
        if (record.final_chunk_count !== chunks.length) {
          throw corrupt(
            line,
            `trailer says ${JSON.stringify(record.final_chunk_count)} chunks, the log holds ${chunks.length}`,
          );
        }
        trailer = record as unknown as SessionLogTrailer;
        continue;
      default:
        throw corrupt(line, `unknown record_type ${JSON.stringify(record.record_type)}`);
    }
  }
  if (!header && lines.length === 0 && torn) {
    throw logError(
      "log_corrupt",
      `${file}:1: the header line is incomplete: the writer stopped (crashed) while opening the log, before any chunk was written. The file holds no chunks; delete it to log the session again.`,
      { file, line: 1, tornHeader: true },
    );
  }
  if (!header) throw corrupt(1, lines.length === 0 ? "empty log (no header)" : "no header");
  const json: SessionJSON = {
    format: "openrath.session",
    version: 1,
    id: header.id,
    chunks,
    ...(placement ? { placement } : {}),
    lineage: header.lineage,
  };
  let session: Session;
  try {
    session = restoreSession(json, undefined, trailer === undefined);
  } catch (cause) {
    const index = (cause as OpenRathError).details?.index;
    throw corrupt(typeof index === "number" ? (chunkLines[index] ?? 1) : 1, (cause as Error).message, cause);
  }
  return {
    session,
    header,
    ...(trailer ? { trailer } : {}),
    closed: trailer !== undefined,
    torn,
    path: file,
  };
}

/** One entry of {@link listSessionLogs}. */
export interface SessionLogEntry {
  readonly id: string;
  readonly path: string;
  /** Whether the log has a trailer (its file is the final `.jsonl`, not `.partial`). */
  readonly closed: boolean;
  /** ISO-8601 time the log was opened, from its header. */
  readonly createdAt: string;
}

/**
 * The logs in `dir` (default {@link defaultSessionLogDir}), oldest first. Unreadable files, and
 * files whose header id is not a session id, are skipped.
 */
export async function listSessionLogs(dir: string = defaultSessionLogDir()): Promise<SessionLogEntry[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: SessionLogEntry[] = [];
  for (const name of names) {
    if (!name.endsWith(".jsonl") && !name.endsWith(`.jsonl${PARTIAL}`)) continue;
    const path = join(dir, name);
    try {
      const first = (await readFile(path, "utf8")).split("\n", 1)[0]!;
      const header = JSON.parse(first) as SessionLogHeader;
      // A header whose id is not a session id is not a log core wrote (nor one it can read back).
      if (header.record_type !== "header" || !isSessionId(header.id)) continue;
      out.push({ id: header.id, path, closed: name.endsWith(".jsonl"), createdAt: header.created_at });
    } catch {
      // Not a log, or a header torn by a crash: nothing to list.
    }
  }
  return out.sort(
    (a, b) => a.createdAt.localeCompare(b.createdAt) || basename(a.path).localeCompare(basename(b.path)),
  );
}

/**
 * Writes each session as a closed log `<id>.jsonl` in `dir` (a run's sessions, say, from a
 * `RunRecorder`), replacing logs of the same ids. Returns the paths.
 *
 * @throws {OpenRathError} `invalid_session_id` for a session whose id is not a session id, and
 *   {@link SessionLogError} `log_path_outside_dir` for a file name that would leave `dir`; either
 *   before that session's file is removed or written.
 */
export async function writeSessionLogs(sessions: Iterable<Session>, dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const paths: string[] = [];
  for (const session of sessions) {
    // Checked before the unlink: a forged id must not reach any file outside `dir`.
    const path = sessionLogPath(dir, session.id, "writeSessionLogs");
    await unlink(path).catch(() => {});
    paths.push(await writeSessionLog(session, { path }));
  }
  return paths;
}

/** Reads every session log in `dir` (closed and unfinished), oldest first. */
export async function readSessionLogs(dir: string): Promise<SessionLog[]> {
  const entries = await listSessionLogs(dir);
  const logs: SessionLog[] = [];
  for (const entry of entries) logs.push(await readSessionLog(entry.path));
  return logs;
}
