/**
 * A wire-faithful fake of `openviking-server` (OpenViking 0.5.x HTTP API) for tests: node:http on
 * 127.0.0.1, in-memory state, the `/api/v1` envelope with its explicit-null and omitted variants,
 * pydantic-style validation errors, `dev` and `api_key` auth, URI scopes and `~` expansion,
 * sessions with asynchronous commit tasks, content/fs routes and a term-overlap `search/find`.
 * Not exported from the package entry.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type FieldSpec, ValidationFailure, validateBody, validateQuery } from "./fake-validation.js";

/** A user API key the fake accepts in `api_key` mode. */
export interface FakeUserKey {
  readonly account: string;
  readonly user: string;
  /** `admin` may read other users' spaces of its account. Default `user`. */
  readonly role?: "user" | "admin";
}

/** Options of {@link startFakeOpenViking}. */
export interface FakeOpenVikingOptions {
  /**
   * User keys: with any key (or `rootKey`) the fake runs in `api_key` mode (identity from the key,
   * account/user headers ignored); without, in `dev` mode (identity from the headers).
   */
  readonly userKeys?: Readonly<Record<string, FakeUserKey>>;
  /** A ROOT key: accepted by `/health`, refused (403) on data routes. */
  readonly rootKey?: string;
  /** Polls a commit task answers `running` before `completed` (default 1). */
  readonly taskPolls?: number;
  /** Also return level-0 hits for directories (their abstract) from search, as hierarchical retrieval does. */
  readonly directoryHits?: boolean;
  /** `version` in `/health` (default `fake`). */
  readonly version?: string;
}

/** A request as the fake received it. */
export interface RecordedRequest {
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body, the raw text when it is not JSON, undefined when empty. */
  readonly body: unknown;
}

/** A scripted misbehaviour. */
export type FakeFault =
  /** Answer an error envelope (`{status:"error", error:{code,message,details}}`). */
  | {
      readonly kind: "error";
      readonly status: number;
      readonly code: string;
      readonly message: string;
      readonly details?: unknown;
    }
  /** Answer anything (a proxy's HTML 502, a 200 with an error envelope…). */
  | { readonly kind: "raw"; readonly status: number; readonly body: string; readonly contentType?: string }
  /** Wait, then answer normally. */
  | { readonly kind: "delay"; readonly ms: number }
  /** Destroy the connection without an answer. */
  | { readonly kind: "drop" }
  /** Never answer (until the fake closes). */
  | { readonly kind: "hang" };

/** When a fault applies. */
export interface FakeScript {
  /** HTTP method; any when absent. */
  readonly method?: string;
  /** Exact path (without query) or a pattern; any when absent. */
  readonly path?: string | RegExp;
  /** How many matching requests it applies to (default 1; `Infinity` for all). */
  readonly times?: number;
  readonly fault: FakeFault;
}

/** A running fake. */
export interface FakeOpenViking {
  /** Base URL, such as `http://127.0.0.1:40123`. */
  readonly url: string;
  /** Every request received, oldest first. */
  readonly requests: RecordedRequest[];
  /** Adds a scripted fault. */
  script(script: FakeScript): void;
  /** Removes all scripted faults. */
  clearScripts(): void;
  /** Makes the next commit task fail with `code` (default `PROCESSING_ERROR`) when it finishes. */
  failNextTask(code?: string, message?: string): void;
  /** Makes every later commit of this session answer 412 FAILED_PRECONDITION (an earlier archive failed). */
  breakArchive(account: string, user: string, sessionId: string): void;
  /** A file's content (expanded `viking://` URI), or undefined. */
  readFile(uri: string, account?: string): string | undefined;
  /** Every file URI of an account, sorted. */
  files(account?: string): string[];
  /** A session's live messages and counters, or undefined. */
  session(
    account: string,
    user: string,
    sessionId: string,
  ):
    | { messages: { role: string; content: string }[]; commitCount: number; totalMessageCount: number }
    | undefined;
  /** Stops the server, dropping open connections. */
  close(): Promise<void>;
}

interface Identity {
  readonly account: string;
  readonly user: string;
  readonly agent: string;
  readonly role: "root" | "admin" | "user";
}

interface FsNode {
  readonly isDir: boolean;
  content: string;
  modTimeNs: bigint;
}

interface Message {
  readonly role: string;
  readonly content: string;
  readonly created_at: string;
  readonly turn_id?: string;
  readonly message_kind?: string;
  readonly source_message_ids?: readonly string[];
}

interface FakeSession {
  readonly id: string;
  readonly createdAt: string;
  updatedAt: string;
  messages: Message[];
  totalMessageCount: number;
  commitCount: number;
  archives: number;
  lastCommitAt: string | null;
  memoriesExtracted: Record<string, number>;
  broken: boolean;
}

interface FakeTask {
  readonly id: string;
  readonly type: "session_commit" | "add_resource";
  readonly account: string;
  readonly user: string;
  readonly resourceId: string;
  readonly createdAt: string;
  updatedAt: string;
  status: "running" | "completed" | "failed";
  polls: number;
  readonly messages: Message[];
  readonly archiveUri: string | null;
  readonly failWith?: { code: string; message: string };
  result?: Record<string, unknown>;
  error?: string;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown = null,
  ) {
    super(message);
  }
}

/** Status per code (OpenViking's ERROR_CODE_TO_HTTP_STATUS). */
const STATUS: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  INVALID_URI: 400,
  UNSUPPORTED_URI: 400,
  INVALID_FILTER: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  CONFLICT: 409,
  ABORTED: 409,
  WRITE_CONFLICT: 409,
  FAILED_PRECONDITION: 412,
  SESSION_EXPIRED: 410,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  PROCESSING_ERROR: 500,
  EMBEDDING_FAILED: 500,
  VLM_FAILED: 500,
  NOT_INITIALIZED: 500,
  UNKNOWN: 500,
  UNIMPLEMENTED: 501,
  UNAVAILABLE: 503,
  MODEL_UNAVAILABLE: 503,
  NO_VECTOR_DB: 503,
  DEADLINE_EXCEEDED: 504,
};

function fail(code: string, message: string, details: unknown = null): ApiError {
  return new ApiError(STATUS[code] ?? 500, code, message, details);
}

function notFound(type: string, resource: string): ApiError {
  return fail("NOT_FOUND", `${type[0]!.toUpperCase()}${type.slice(1)} not found: ${resource}`, {
    type,
    resource,
  });
}

function invalidUri(uri: string, reason: string): ApiError {
  return fail("INVALID_URI", `Invalid URI: ${uri} (${reason})`, { uri, reason });
}

const PUBLIC_SCOPES = ["agent", "resources", "session", "user"];
const INTERNAL_SCOPES = new Set(["temp", "queue", "upload"]);
const USER_RESERVED = new Set(["memories", "resources", "skills", "peers", "sessions", "profile.md"]);
const CREATE_EXTENSIONS = [".md", ".txt", ".json", ".yaml", ".yml", ".toml", ".py", ".js", ".ts"];
const SIDECARS = new Set([".abstract.md", ".overview.md"]);
const FILE_MODE = 420;
const DIR_MODE = 16877;
const MEMORY_FIELDS = /\n\n<!--\s*MEMORY_FIELDS\s*\n[\s\S]*?\n-->$/;

const FIND_FIELDS: Record<string, FieldSpec> = {
  query: { type: "str" },
  image_url: { type: "str", nullable: true },
  target_uri: { type: "str|list[str]" },
  context_type: { type: "str|list[str]", nullable: true },
  limit: { type: "int" },
  node_limit: { type: "int", nullable: true },
  score_threshold: { type: "float", nullable: true },
  filter: { type: "dict", nullable: true },
  tags: { type: "list[str]", nullable: true },
  since: { type: "str", nullable: true },
  until: { type: "str", nullable: true },
  time_field: { type: { literal: ["updated_at", "created_at"] }, nullable: true },
  level: { type: "int|str|list[int]", nullable: true },
  include_provenance: { type: "bool" },
  telemetry: { type: "bool|dict" },
};

const SEARCH_FIELDS: Record<string, FieldSpec> = {
  ...FIND_FIELDS,
  session_id: { type: "str", nullable: true },
  mode: { type: { literal: ["list", "context"] } },
};

const WRITE_FIELDS: Record<string, FieldSpec> = {
  uri: { type: "str", required: true },
  content: { type: "str", required: true },
  mode: { type: "str" },
  wait: { type: "bool" },
  timeout: { type: "float", nullable: true },
  telemetry: { type: "bool|dict" },
  processing_mode: { type: { literal: ["semantic_and_vectors", "vectors_only"] } },
};

const BATCH_WRITE_FIELDS: Record<string, FieldSpec> = {
  root_uri: { type: "str", required: true },
  operations: { type: "list[dict]", required: true },
  wait: { type: "bool" },
  timeout: { type: "float", nullable: true },
  telemetry: { type: "bool|dict" },
};

const BATCH_OPERATION_FIELDS: Record<string, FieldSpec> = {
  uri: { type: "str", required: true },
  content: { type: "str", nullable: true },
  content_base64: { type: "str", nullable: true },
  mode: { type: { literal: ["replace", "append", "create", "upsert"] } },
};

/** The real server's limits on one batch-write. */
const BATCH_MAX_OPERATIONS = 256;
const BATCH_MAX_FILE_BYTES = 8 * 1024 * 1024;
const BATCH_MAX_TOTAL_BYTES = 16 * 1024 * 1024;

const RESOURCE_FIELDS: Record<string, FieldSpec> = {
  path: { type: "str", nullable: true },
  temp_file_id: { type: "str", nullable: true },
  to: { type: "str", nullable: true },
  parent: { type: "str", nullable: true },
  reason: { type: "str" },
  instruction: { type: "str" },
  wait: { type: "bool" },
  timeout: { type: "float", nullable: true },
  strict: { type: "bool" },
  telemetry: { type: "bool|dict" },
};

const MESSAGE_FIELDS: Record<string, FieldSpec> = {
  role: { type: "str", required: true },
  role_id: { type: "str", nullable: true },
  content: { type: "str", nullable: true },
  parts: { type: "list[dict]", nullable: true },
  created_at: { type: "str", nullable: true },
  peer_id: { type: "str", nullable: true },
  turn_id: { type: "str", nullable: true },
  message_kind: {
    type: { literal: ["user_query", "assistant_step", "tool_transport", "checkpoint"] },
    nullable: true,
  },
  source_message_ids: { type: "list[str]", nullable: true },
  telemetry: { type: "bool|dict" },
};

function nowIso(): string {
  return new Date().toISOString();
}

function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
}

/** The storage's nanosecond timestamp with offset, as `output=original` reports it. */
function originalTime(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const base = new Date(ms).toISOString().slice(0, 19);
  const frac = (ns % 1_000_000_000n).toString().padStart(9, "0");
  return `${base}.${frac}+00:00`;
}

function bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

const CJK = /[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]/u;
const CJK_RUNS =
  /[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]+|[^\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]+/gu;

/**
 * Lower-cased letter/digit runs; runs of CJK characters become overlapping bigrams (a lone
 * character stays a unigram), so "東京" finds "東京タワー" without a dictionary.
 */
function tokens(text: string): string[] {
  const out: string[] = [];
  for (const run of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    for (const part of run.match(CJK_RUNS) ?? []) {
      if (!CJK.test(part)) {
        out.push(part);
        continue;
      }
      const chars = [...part];
      if (chars.length === 1) out.push(part);
      for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
    }
  }
  return out;
}

function slug(text: string): string {
  const s = text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}-]+/gu, "_")
    .replace(/_+/g, "_")
    .replace(/^_|_$/g, "")
    .slice(0, 50);
  return s || "unnamed";
}

/** Starts a fake OpenViking server on 127.0.0.1 (a free port). */
export async function startFakeOpenViking(options: FakeOpenVikingOptions = {}): Promise<FakeOpenViking> {
  const userKeys = options.userKeys ?? {};
  const apiKeyMode = Object.keys(userKeys).length > 0 || options.rootKey !== undefined;
  const taskPolls = options.taskPolls ?? 1;
  const nodes = new Map<string, FsNode>();
  const sessions = new Map<string, FakeSession>();
  const tasks = new Map<string, FakeTask>();
  const requests: RecordedRequest[] = [];
  const scripts: { script: FakeScript; left: number }[] = [];
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  const pendingTaskFailures: { code: string; message: string }[] = [];

  // ---- filesystem --------------------------------------------------------------------------

  const key = (account: string, path: string) => `${account}\u0000${path}`;
  const uriOf = (path: string) => `viking://${path}`;

  function ensureDir(account: string, path: string): void {
    const parts = path.split("/");
    for (let i = 1; i <= parts.length; i++) {
      const p = parts.slice(0, i).join("/");
      const node = nodes.get(key(account, p));
      if (node && !node.isDir) throw fail("INVALID_ARGUMENT", `Not a directory: ${uriOf(p)}`);
      if (!node) nodes.set(key(account, p), { isDir: true, content: "", modTimeNs: nowNs() });
    }
  }

  function ensureUserDirs(id: Identity): void {
    for (const dir of [
      "resources",
      "agent",
      `user/${id.user}/memories`,
      `user/${id.user}/resources`,
      `user/${id.user}/skills`,
    ]) {
      ensureDir(id.account, dir);
    }
  }

  function children(account: string, path: string): string[] {
    const prefix = `${key(account, path)}/`;
    const out: string[] = [];
    for (const k of nodes.keys()) {
      if (k.startsWith(prefix) && !k.slice(prefix.length).includes("/"))
        out.push(k.slice(account.length + 1));
    }
    return out.sort();
  }

  function descendants(account: string, path: string): string[] {
    const prefix = path === "" ? key(account, "") : `${key(account, path)}/`;
    const out: string[] = [];
    for (const k of nodes.keys()) {
      if (k.startsWith(prefix) && k !== key(account, path)) out.push(k.slice(account.length + 1));
    }
    return out.sort();
  }

  function contextType(path: string): "memory" | "resource" | "skill" {
    const p = path.split("/");
    if (p[0] === "user" && (p[2] === "memories" || (p[2] === "peers" && p[4] === "memories")))
      return "memory";
    if (p[0] === "agent" && p[1] === "memories") return "memory";
    if ((p[0] === "user" && p[2] === "skills") || (p[0] === "agent" && p[1] === "skills")) return "skill";
    return "resource";
  }

  function abstractOf(account: string, path: string, limit: number): string {
    const text = children(account, path)
      .map((p) => nodes.get(key(account, p))!)
      .filter((n) => !n.isDir)
      .map((n) => n.content)
      .join("\n");
    return text.slice(0, limit);
  }

  /**
   * Validates and expands a URI: `~` → the caller's `user/<uid>`, the legacy `session/<id>` →
   * `user/<uid>/sessions/<id>`; internal, unknown and uid-less scopes are refused.
   */
  function resolve(raw: unknown, id: Identity, field = "uri"): string {
    const uri = typeof raw === "string" ? raw.trim() : "";
    if (uri === "") throw invalidUri(String(raw ?? ""), `${field} must not be empty`);
    if (!uri.startsWith("viking://")) {
      const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)?.[1];
      throw invalidUri(
        uri,
        scheme && scheme !== "viking"
          ? `unsupported URI scheme '${scheme}'`
          : "URI must start with 'viking://'",
      );
    }
    const rest = uri.slice("viking://".length).replace(/\/+$/, "");
    if (rest === "") return "";
    const parts = rest.split("/");
    if (parts.some((p) => p === "")) throw invalidUri(uri, "empty path segment");
    if (parts.some((p) => p === "." || p === "..")) throw invalidUri(uri, "path traversal is not allowed");
    const scope = parts[0]!;
    let path: string[];
    if (scope === "~") path = ["user", id.user, ...parts.slice(1)];
    else if (scope === "session") path = ["user", id.user, "sessions", ...parts.slice(1)];
    else if (scope === "resources" || scope === "agent") path = parts;
    else if (scope === "user") {
      if (parts.length >= 2 && USER_RESERVED.has(parts[1]!)) {
        throw invalidUri(
          uri,
          `user URIs need a user id: use viking://~/${parts.slice(1).join("/")} or viking://user/<uid>/${parts.slice(1).join("/")}`,
        );
      }
      if (parts.length >= 2 && parts[1] !== id.user && id.role === "user") {
        throw fail("PERMISSION_DENIED", `Access denied: ${uri} belongs to another user`, { uri });
      }
      path = parts;
    } else if (INTERNAL_SCOPES.has(scope)) {
      throw invalidUri(uri, `Invalid scope '${scope}'. Must be one of: ${PUBLIC_SCOPES.join(", ")}`);
    } else {
      throw invalidUri(uri, `Invalid scope '${scope}'. Must be one of: ${PUBLIC_SCOPES.join(", ")}`);
    }
    return path.join("/");
  }

  function listRow(account: string, base: string, path: string, output: string, withRel: boolean) {
    const node = nodes.get(key(account, path))!;
    const name = path.slice(path.lastIndexOf("/") + 1);
    const rel = base === "" ? path : path.slice(base.length + 1);
    const size = node.isDir ? 4096 : bytes(node.content);
    if (output === "original") {
      return {
        name,
        size,
        mode: node.isDir ? DIR_MODE : FILE_MODE,
        modTime: originalTime(node.modTimeNs),
        isDir: node.isDir,
        ...(withRel ? { rel_path: rel } : {}),
        uri: uriOf(path),
      };
    }
    return {
      uri: uriOf(path),
      size: node.isDir ? 0 : size,
      isDir: node.isDir,
      modTime: new Date(Number(node.modTimeNs / 1_000_000n)).toISOString().replace(/\.\d+Z$/, "Z"),
      ...(withRel ? { rel_path: rel } : {}),
      abstract: node.isDir ? abstractOf(account, path, 256) : node.content.slice(0, 256),
    };
  }

  // ---- sessions and tasks --------------------------------------------------------------------

  const sessionKey = (id: Identity, sid: string) => `${id.account}\u0000${id.user}\u0000${sid}`;

  function checkSessionId(sid: string): void {
    if (!/^[A-Za-z0-9_.-]{1,128}$/.test(sid) || sid === "." || sid === "..") {
      throw fail("INVALID_ARGUMENT", `Invalid session_id '${sid}': use letters, digits, '_', '-' and '.'`);
    }
  }

  function newSession(id: Identity, sid: string): FakeSession {
    const s: FakeSession = {
      id: sid,
      createdAt: nowIso(),
      updatedAt: nowIso(),
      messages: [],
      totalMessageCount: 0,
      commitCount: 0,
      archives: 0,
      lastCommitAt: null,
      memoriesExtracted: {},
      broken: false,
    };
    sessions.set(sessionKey(id, sid), s);
    return s;
  }

  function sessionMeta(id: Identity, s: FakeSession) {
    return {
      session_id: s.id,
      created_at: s.createdAt,
      updated_at: s.updatedAt,
      message_count: s.messages.length,
      total_message_count: s.totalMessageCount,
      commit_count: s.commitCount,
      memories_extracted: s.memoriesExtracted,
      last_commit_at: s.lastCommitAt,
      uri: `viking://user/${id.user}/sessions/${s.id}`,
      user: { account_id: id.account, user_id: id.user },
      pending_tokens: pendingTokens(s),
      auto_commit_policy: null,
    };
  }

  function pendingTokens(s: FakeSession): number {
    return s.messages.reduce((n, m) => n + Math.floor(m.content.length / 4), 0);
  }

  function messageOf(body: unknown, where: string[] = []): Message {
    let m: Record<string, unknown>;
    try {
      m = validateBody(body, MESSAGE_FIELDS, false);
    } catch (error) {
      if (error instanceof ValidationFailure && where.length > 0) {
        throw new ValidationFailure(
          error.issues.map((i) => ({ ...i, loc: ["body", ...where, ...i.loc.slice(1)] })),
        );
      }
      throw error;
    }
    if ((m.content === undefined || m.content === null) && (m.parts === undefined || m.parts === null)) {
      throw new ValidationFailure([
        {
          loc: ["body", ...where],
          message: "Value error, Either 'content' or 'parts' must be provided",
          type: "value_error",
        },
      ]);
    }
    if (m.role !== "user" && m.role !== "assistant") {
      throw fail("INVALID_ARGUMENT", `Invalid role '${String(m.role)}': must be 'user' or 'assistant'`);
    }
    if (m.role_id !== undefined && m.role_id !== null) {
      throw fail(
        "INVALID_ARGUMENT",
        "USER requests cannot explicitly set role_id; it is derived from the request context.",
      );
    }
    let content = typeof m.content === "string" ? m.content : "";
    if (Array.isArray(m.parts)) {
      content = (m.parts as Record<string, unknown>[])
        .filter((p) => (p.type ?? "text") === "text")
        .map((p) => String(p.text ?? ""))
        .join("\n");
    }
    return {
      role: m.role as string,
      content,
      created_at: typeof m.created_at === "string" ? m.created_at : nowIso(),
      ...(typeof m.turn_id === "string" ? { turn_id: m.turn_id } : {}),
      ...(typeof m.message_kind === "string" ? { message_kind: m.message_kind } : {}),
      ...(Array.isArray(m.source_message_ids)
        ? { source_message_ids: m.source_message_ids as string[] }
        : {}),
    };
  }

  function taskView(t: FakeTask) {
    return {
      task_id: t.id,
      task_type: t.type,
      status: t.status,
      ...(t.status === "running" ? { stage: t.type === "session_commit" ? "extracting" : "processing" } : {}),
      resource_id: t.resourceId,
      created_at: t.createdAt,
      updated_at: t.updatedAt,
      ...(t.result !== undefined ? { result: t.result } : {}),
      ...(t.error !== undefined ? { error: t.error } : {}),
    };
  }

  /** Runs a task's background phase: for a commit, one `preferences` memory per user message. */
  function finishTask(t: FakeTask): void {
    if (t.status !== "running") return;
    t.updatedAt = nowIso();
    if (t.failWith) {
      t.status = "failed";
      t.error = `${t.failWith.code}: ${t.failWith.message}`;
      return;
    }
    t.status = "completed";
    if (t.type === "add_resource") {
      t.result = { root_uri: t.resourceId };
      return;
    }
    const extracted: Record<string, number> = {};
    for (const m of t.messages) {
      if (m.role !== "user" || m.content.trim() === "") continue;
      const path = `user/${t.user}/memories/preferences/${slug(m.content)}.md`;
      ensureDir(t.account, path.slice(0, path.lastIndexOf("/")));
      nodes.set(key(t.account, path), { isDir: false, content: m.content, modTimeNs: nowNs() });
      extracted.preferences = (extracted.preferences ?? 0) + 1;
    }
    const s = sessions.get(`${t.account}\u0000${t.user}\u0000${t.resourceId}`);
    if (s) {
      for (const [k, n] of Object.entries(extracted))
        s.memoriesExtracted[k] = (s.memoriesExtracted[k] ?? 0) + n;
    }
    t.result = {
      memories_extracted: extracted,
      archive_uri: t.archiveUri,
      memory_diff_uri: t.archiveUri ? `${t.archiveUri}/memory_diff.json` : null,
      token_usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    };
  }

  // ---- search --------------------------------------------------------------------------------

  function levels(level: unknown): Set<number> | undefined {
    if (level === undefined || level === null) return undefined;
    if (typeof level === "number") return new Set([level]);
    if (Array.isArray(level)) return new Set(level as number[]);
    const parsed = String(level)
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .map(Number);
    if (parsed.some((n) => !Number.isInteger(n) || n < 0 || n > 2)) {
      throw fail(
        "INVALID_ARGUMENT",
        `Invalid level '${String(level)}': use 0, 1, 2 or a comma-separated list`,
      );
    }
    return new Set(parsed);
  }

  function find(id: Identity, req: Record<string, unknown>) {
    const query = (req.query as string | undefined) ?? "";
    const imageUrl = req.image_url as string | null | undefined;
    if (query.trim() === "" && !imageUrl) {
      throw fail("INVALID_ARGUMENT", "query must not be empty unless image_url is given");
    }
    const rawTargets = req.target_uri ?? "";
    const targetList = (Array.isArray(rawTargets) ? rawTargets : [rawTargets]).filter((t) => t !== "");
    const targets =
      targetList.length === 0
        ? [`user/${id.user}`, "resources"]
        : targetList.map((t) => resolve(t, id, "target_uri"));
    const types =
      req.context_type === undefined || req.context_type === null
        ? undefined
        : new Set(
            Array.isArray(req.context_type) ? (req.context_type as string[]) : [req.context_type as string],
          );
    for (const t of types ?? []) {
      if (!["memory", "resource", "skill"].includes(t)) {
        throw fail("INVALID_ARGUMENT", `Invalid context_type '${t}': must be memory, resource or skill`);
      }
    }
    const wanted = levels(req.level);
    const limit = (req.node_limit as number | null | undefined) ?? (req.limit as number | undefined) ?? 10;
    const threshold = req.score_threshold as number | null | undefined;
    const q = [...new Set(tokens(query))];
    // Candidates first, then BM25 (k1 1.2, b 0.75) over them, squashed into (0, 1) as s / (s + 1):
    // a stand-in for the real server's 0–1 vector similarity that still ranks rare terms and
    // short entries first.
    const docs: { path: string; level: number; text: string; terms: string[] }[] = [];
    for (const k of nodes.keys()) {
      if (!k.startsWith(`${id.account}\u0000`)) continue;
      const path = k.slice(id.account.length + 1);
      if (!targets.some((t) => t === "" || path === t || path.startsWith(`${t}/`))) continue;
      if (/^user\/[^/]+\/sessions(\/|$)/.test(path)) continue;
      const node = nodes.get(k)!;
      if (node.isDir && !options.directoryHits) continue;
      const level = node.isDir ? 0 : 2;
      if (wanted && !wanted.has(level)) continue;
      if (types && !types.has(contextType(path))) continue;
      const text = node.isDir ? abstractOf(id.account, path, 256) : node.content;
      docs.push({ path, level, text, terms: tokens(text) });
    }
    const df = new Map<string, number>();
    for (const doc of docs) for (const t of new Set(doc.terms)) df.set(t, (df.get(t) ?? 0) + 1);
    const avgdl = docs.reduce((n, d) => n + d.terms.length, 0) / Math.max(docs.length, 1) || 1;
    const scored = new Map<string, { level: number; score: number; abstract: string }>();
    for (const doc of docs) {
      let sum = 0;
      for (const term of q) {
        const tf = doc.terms.filter((t) => t === term).length;
        if (tf === 0) continue;
        const n = df.get(term) ?? 0;
        const idf = Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
        sum += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * doc.terms.length) / avgdl));
      }
      if (sum <= 0) continue;
      const score = sum / (sum + 1);
      if (threshold !== undefined && threshold !== null && score < threshold) continue;
      scored.set(doc.path, {
        level: doc.level,
        score,
        abstract: doc.level === 0 ? doc.text : doc.text.slice(0, 256),
      });
    }
    const ranked = [...scored.entries()]
      .sort(([pa, a], [pb, b]) => b.score - a.score || (pa < pb ? -1 : pa > pb ? 1 : 0))
      .slice(0, Math.max(limit, 0));
    const result = {
      memories: [] as unknown[],
      resources: [] as unknown[],
      skills: [] as unknown[],
      total: 0,
    };
    for (const [path, hit] of ranked) {
      const type = contextType(path);
      const bucket =
        type === "memory" ? result.memories : type === "skill" ? result.skills : result.resources;
      // The real server's hit: exactly these fields (its search tags surface as `tags`).
      bucket.push({
        context_type: type,
        uri: uriOf(path),
        level: hit.level,
        score: hit.score,
        abstract: hit.abstract,
        tags: [],
      });
    }
    result.total = ranked.length;
    if (req.include_provenance === true) {
      return {
        ...result,
        provenance: [
          {
            query,
            searched_directories: targets.map(uriOf),
            matched_contexts: ranked.map(([path, hit]) => ({
              uri: uriOf(path),
              tier: `L${hit.level}`,
              context_type: contextType(path),
              score: hit.score,
              match_reason: "",
            })),
            thinking_trace: { events: [] },
          },
        ],
      };
    }
    return result;
  }

  // ---- HTTP plumbing -------------------------------------------------------------------------

  const ok = (result: unknown) => ({ status: "ok", result, error: null, telemetry: null, profile: null });
  const okLean = (result: unknown) => ({ status: "ok", result });

  function send(res: ServerResponse, status: number, body: unknown, started: bigint): void {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      "Content-Type": "application/json",
      "Content-Length": String(Buffer.byteLength(text)),
      "X-Process-Time": (Number(process.hrtime.bigint() - started) / 1e9).toFixed(6),
      "X-Request-ID": randomUUID(),
    });
    res.end(text);
  }

  function identify(req: IncomingMessage, path: string): Identity {
    const header = (name: string) => {
      const v = req.headers[name];
      return typeof v === "string" && v !== "" ? v : undefined;
    };
    const agent = header("x-openviking-agent") ?? header("x-openviking-actor-peer") ?? "default";
    if (!apiKeyMode) {
      return {
        account: header("x-openviking-account") ?? "default",
        user: header("x-openviking-user") ?? "default",
        agent,
        role: "root",
      };
    }
    const bearer = /^Bearer\s+(.+)$/i.exec(header("authorization") ?? "")?.[1];
    const apiKey = header("x-api-key") ?? bearer;
    if (apiKey === undefined) throw fail("UNAUTHENTICATED", "Missing API Key");
    if (options.rootKey !== undefined && apiKey === options.rootKey) {
      if (!path.startsWith("/api/v1/system/")) {
        throw fail(
          "PERMISSION_DENIED",
          "ROOT API keys cannot access tenant-scoped data APIs; use a user API key (create one under /api/v1/admin/accounts).",
        );
      }
      return { account: "default", user: "default", agent, role: "root" };
    }
    const user = userKeys[apiKey];
    if (!user) throw fail("UNAUTHENTICATED", "Invalid API Key");
    return { account: user.account, user: user.user, agent, role: user.role ?? "user" };
  }

  function parseJson(text: string, required: boolean): unknown {
    if (text.trim() === "") {
      if (required)
        throw new ValidationFailure([{ loc: ["body"], message: "Field required", type: "missing" }]);
      return undefined;
    }
    try {
      return JSON.parse(text);
    } catch (error) {
      const pos = /position (\d+)/.exec((error as Error).message)?.[1] ?? "0";
      throw new ValidationFailure([
        { loc: ["body", pos], message: "JSON decode error", type: "json_invalid" },
      ]);
    }
  }

  type Handler = (ctx: { id: Identity; query: URLSearchParams; text: string; params: string[] }) => {
    status?: number;
    body: unknown;
  };

  const routes: { method: string; pattern: RegExp; handler: Handler }[] = [];
  const route = (method: string, pattern: RegExp, handler: Handler) =>
    routes.push({ method, pattern, handler });

  // Sessions
  route("POST", /^\/api\/v1\/sessions$/, ({ id, text }) => {
    const body = parseJson(text, false);
    const req =
      body === undefined || body === null
        ? {}
        : validateBody(
            body,
            {
              session_id: { type: "str", nullable: true },
              memory_policy: { type: "dict", nullable: true },
              auto_commit_policy: { type: "dict", nullable: true },
            },
            false,
          );
    const sid = (req.session_id as string | null | undefined) ?? randomUUID().replace(/-/g, "");
    checkSessionId(sid);
    if (sessions.has(sessionKey(id, sid))) {
      throw fail("ALREADY_EXISTS", `Session already exists: ${sid}`, { type: "session", resource: sid });
    }
    ensureUserDirs(id);
    newSession(id, sid);
    return {
      body: ok({
        session_id: sid,
        uri: `viking://user/${id.user}/sessions/${sid}`,
        user: { account_id: id.account, user_id: id.user },
        auto_commit_policy: (req.auto_commit_policy as unknown) ?? null,
        memory_extraction_config: {
          enabled: true,
          memory_types: ["profile", "preferences", "entities", "events"],
        },
      }),
    };
  });
  route("GET", /^\/api\/v1\/sessions$/, ({ id }) => {
    const prefix = `${id.account}\u0000${id.user}\u0000`;
    const list = [...sessions.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .map(([, s]) => ({
        session_id: s.id,
        uri: `viking://user/${id.user}/sessions/${s.id}`,
        message_count: s.messages.length,
        created_at: s.createdAt,
        updated_at: s.updatedAt,
      }));
    return { body: ok(list) };
  });
  route("GET", /^\/api\/v1\/sessions\/([^/]+)$/, ({ id, query, params }) => {
    const sid = decodeURIComponent(params[0]!);
    const q = validateQuery(query, { auto_create: { type: "bool", default: false } });
    let s = sessions.get(sessionKey(id, sid));
    if (!s && q.auto_create) {
      checkSessionId(sid);
      s = newSession(id, sid);
    }
    if (!s) throw fail("NOT_FOUND", `Session ${sid} not found`);
    return { body: ok(sessionMeta(id, s)) };
  });
  route("DELETE", /^\/api\/v1\/sessions\/([^/]+)$/, ({ id, params }) => {
    const sid = decodeURIComponent(params[0]!);
    if (!sessions.delete(sessionKey(id, sid))) throw notFound("session", sid);
    return { body: ok({ session_id: sid }) };
  });
  route("POST", /^\/api\/v1\/sessions\/([^/]+)\/messages$/, ({ id, text, params }) => {
    const sid = decodeURIComponent(params[0]!);
    const message = messageOf(parseJson(text, true));
    checkSessionId(sid);
    const s = sessions.get(sessionKey(id, sid)) ?? newSession(id, sid);
    s.messages.push(message);
    s.totalMessageCount++;
    s.updatedAt = nowIso();
    return {
      body: ok({ session_id: sid, message_count: s.messages.length, pending_tokens: pendingTokens(s) }),
    };
  });
  route("POST", /^\/api\/v1\/sessions\/([^/]+)\/messages\/batch$/, ({ id, text, params }) => {
    const sid = decodeURIComponent(params[0]!);
    const req = validateBody(
      parseJson(text, true),
      { messages: { type: "list[dict]", required: true } },
      false,
    );
    const list = req.messages as unknown[];
    if (list.length > 100) {
      throw new ValidationFailure([
        {
          loc: ["body", "messages"],
          message: "List should have at most 100 items after validation",
          type: "too_long",
        },
      ]);
    }
    const messages = list.map((m, i) => messageOf(m, ["messages", String(i)]));
    checkSessionId(sid);
    const s = sessions.get(sessionKey(id, sid)) ?? newSession(id, sid);
    s.messages.push(...messages);
    s.totalMessageCount += messages.length;
    s.updatedAt = nowIso();
    return {
      body: ok({
        session_id: sid,
        message_count: s.messages.length,
        added: messages.length,
        pending_tokens: pendingTokens(s),
      }),
    };
  });
  route("POST", /^\/api\/v1\/sessions\/([^/]+)\/commit$/, ({ id, text, params }) => {
    const sid = decodeURIComponent(params[0]!);
    const body = parseJson(text, false);
    const req =
      body === undefined || body === null
        ? {}
        : validateBody(body, { keep_recent_count: { type: "int" } }, false);
    const s = sessions.get(sessionKey(id, sid));
    if (!s) throw notFound("session", sid);
    if (s.broken) {
      throw fail(
        "FAILED_PRECONDITION",
        `Session ${sid} has an archive whose memory extraction failed; resolve it before committing again`,
        { session_id: sid },
      );
    }
    if (s.messages.length === 0) {
      return {
        body: okLean({
          session_id: sid,
          status: "skipped",
          task_id: null,
          archive_uri: null,
          archived: false,
          reason: "no_messages",
        }),
      };
    }
    const keep = Math.max(0, (req.keep_recent_count as number | undefined) ?? 0);
    const archived = keep > 0 ? s.messages.slice(0, -keep) : s.messages;
    s.messages = keep > 0 ? s.messages.slice(-keep) : [];
    s.archives++;
    s.commitCount++;
    s.lastCommitAt = nowIso();
    s.updatedAt = s.lastCommitAt;
    const archiveUri = `viking://user/${id.user}/sessions/${sid}/history/archive_${String(s.archives).padStart(3, "0")}`;
    const failure = pendingTaskFailures.shift();
    const task: FakeTask = {
      id: randomUUID(),
      type: "session_commit",
      account: id.account,
      user: id.user,
      resourceId: sid,
      createdAt: nowIso(),
      updatedAt: nowIso(),
      status: "running",
      polls: 0,
      messages: archived,
      archiveUri,
      ...(failure ? { failWith: failure } : {}),
    };
    tasks.set(task.id, task);
    return {
      body: okLean({
        session_id: sid,
        status: "accepted",
        task_id: task.id,
        archive_uri: archiveUri,
        archived: true,
      }),
    };
  });

  // Tasks and queues
  route("GET", /^\/api\/v1\/tasks\/([^/]+)$/, ({ id, params }) => {
    const tid = decodeURIComponent(params[0]!);
    const t = tasks.get(tid);
    if (!t || t.account !== id.account || t.user !== id.user) throw notFound("task", tid);
    if (t.status === "running") {
      t.polls++;
      if (t.polls > taskPolls) finishTask(t);
    }
    return { body: ok(taskView(t)) };
  });
  route("POST", /^\/api\/v1\/system\/wait$/, ({ id, text }) => {
    const body = parseJson(text, false);
    if (body !== undefined && body !== null)
      validateBody(body, { timeout: { type: "float", nullable: true } }, false);
    let processed = 0;
    for (const t of tasks.values()) {
      if (t.account === id.account && t.status === "running") {
        finishTask(t);
        processed++;
      }
    }
    const queue = { pending: 0, in_progress: 0, processed, error_count: 0, errors: [] };
    return { body: ok({ Semantic: queue, Embedding: { ...queue, processed: 0 } }) };
  });

  // Content
  route("POST", /^\/api\/v1\/content\/write$/, ({ id, text }) => {
    const req = validateBody(parseJson(text, true), WRITE_FIELDS, true);
    const mode = (req.mode as string | undefined) ?? "replace";
    if (!["replace", "append", "create"].includes(mode)) {
      throw fail("INVALID_ARGUMENT", `Invalid write mode '${mode}'. Must be one of: replace, append, create`);
    }
    const path = resolve(req.uri, id);
    const uri = uriOf(path);
    const name = path.slice(path.lastIndexOf("/") + 1);
    if (path.split("/").length < 2 || path === `user/${id.user}`) {
      throw fail("INVALID_ARGUMENT", `Cannot write to a scope root: ${uri}`);
    }
    if (SIDECARS.has(name))
      throw fail("INVALID_ARGUMENT", `${name} is generated by OpenViking and cannot be written: ${uri}`);
    const content = req.content as string;
    const node = nodes.get(key(id.account, path));
    const before = node?.content;
    if (mode === "create") {
      if (node) throw fail("ALREADY_EXISTS", `File already exists: ${uri}`, { type: "file", resource: uri });
      if (!CREATE_EXTENSIONS.some((ext) => name.endsWith(ext))) {
        throw fail(
          "INVALID_ARGUMENT",
          `mode=create only supports ${CREATE_EXTENSIONS.join(" ")} files: ${uri}`,
        );
      }
      ensureUserDirs(id);
      ensureDir(id.account, path.slice(0, path.lastIndexOf("/")));
      nodes.set(key(id.account, path), { isDir: false, content, modTimeNs: nowNs() });
    } else {
      if (!node) throw notFound("file", uri);
      if (node.isDir) throw fail("INVALID_ARGUMENT", `Cannot write to a directory: ${uri}`);
      node.content = mode === "append" ? node.content + content : content;
      node.modTimeNs = nowNs();
    }
    const after = nodes.get(key(id.account, path))!.content;
    return {
      body: okLean({
        uri,
        root_uri: uriOf(path.slice(0, path.lastIndexOf("/"))),
        context_type: contextType(path),
        mode,
        written_bytes: bytes(content),
        content_updated: before !== after,
        semantic_status: "queued",
        vector_status: "queued",
        ...(req.wait ? { queue_status: { Semantic: { pending: 0 }, Embedding: { pending: 0 } } } : {}),
      }),
    };
  });
  route("POST", /^\/api\/v1\/content\/batch-write$/, ({ id, text }) => {
    const req = validateBody(parseJson(text, true), BATCH_WRITE_FIELDS, true);
    const rootPath = resolve(req.root_uri, id, "root_uri");
    const rootUri = uriOf(rootPath);
    if (contextType(rootPath) !== "memory" && contextType(rootPath) !== "resource") {
      throw fail("INVALID_ARGUMENT", "batch-write root must be a resource or memory directory");
    }
    const root = nodes.get(key(id.account, rootPath));
    if (!root?.isDir)
      throw fail("INVALID_ARGUMENT", `batch-write root must be an existing directory: ${rootUri}`);
    const raw = req.operations as Record<string, unknown>[];
    if (raw.length === 0) throw fail("INVALID_ARGUMENT", "batch-write operations must not be empty");
    if (raw.length > BATCH_MAX_OPERATIONS) {
      throw fail("RESOURCE_EXHAUSTED", `batch-write supports at most ${BATCH_MAX_OPERATIONS} operations`);
    }
    const seen = new Set<string>();
    let total = 0;
    const planned: { path: string; content: string; mode: string; exists: boolean }[] = [];
    raw.forEach((operation, i) => {
      let op: Record<string, unknown>;
      try {
        op = validateBody(operation, BATCH_OPERATION_FIELDS, true);
      } catch (error) {
        if (error instanceof ValidationFailure) {
          throw new ValidationFailure(
            error.issues.map((x) => ({ ...x, loc: ["body", "operations", String(i), ...x.loc.slice(1)] })),
          );
        }
        throw error;
      }
      const path = resolve(op.uri, id, "operation uri");
      const uri = uriOf(path);
      if (seen.has(path)) throw fail("INVALID_ARGUMENT", `duplicate batch-write target: ${uri}`);
      seen.add(path);
      if (!path.startsWith(`${rootPath}/`))
        throw fail("INVALID_ARGUMENT", `batch-write target is outside root_uri: ${uri}`);
      if (
        (op.content === undefined || op.content === null) ===
        (op.content_base64 === undefined || op.content_base64 === null)
      ) {
        throw fail(
          "INVALID_ARGUMENT",
          `batch-write requires exactly one of content or content_base64: ${uri}`,
        );
      }
      if (typeof op.content !== "string") {
        throw fail("INVALID_ARGUMENT", `batch-write binary content is not supported for memories: ${uri}`);
      }
      const size = bytes(op.content);
      if (size > BATCH_MAX_FILE_BYTES)
        throw fail("RESOURCE_EXHAUSTED", `batch-write file exceeds size limit: ${uri}`);
      total += size;
      if (total > BATCH_MAX_TOTAL_BYTES)
        throw fail("RESOURCE_EXHAUSTED", "batch-write total content exceeds size limit");
      const node = nodes.get(key(id.account, path));
      if (node?.isDir) throw fail("INVALID_ARGUMENT", `batch-write target must be a file: ${uri}`);
      const requested = (op.mode as string | undefined) ?? "replace";
      const mode = requested === "upsert" ? (node ? "replace" : "create") : requested;
      if (mode === "create" && node)
        throw fail("ALREADY_EXISTS", `File already exists: ${uri}`, { type: "file", resource: uri });
      if ((mode === "replace" || mode === "append") && !node) throw notFound("file", uri);
      planned.push({ path, content: op.content, mode, exists: node !== undefined });
    });
    const created: string[] = [];
    const updated: string[] = [];
    for (const { path, content, mode, exists } of planned) {
      const node = nodes.get(key(id.account, path));
      if (node) {
        node.content = mode === "append" ? node.content + content : content;
        node.modTimeNs = nowNs();
      } else {
        ensureDir(id.account, path.slice(0, path.lastIndexOf("/")));
        nodes.set(key(id.account, path), { isDir: false, content, modTimeNs: nowNs() });
      }
      (exists ? updated : created).push(uriOf(path));
    }
    return {
      body: okLean({
        root_uri: rootUri,
        created,
        updated,
        unchanged: [],
        queue_status: req.wait === false ? null : { Semantic: { pending: 0 }, Embedding: { pending: 0 } },
        semantic_status: req.wait === false ? "queued" : "complete",
        vector_status: req.wait === false ? "queued" : "complete",
      }),
    };
  });
  route("GET", /^\/api\/v1\/content\/read$/, ({ id, query }) => {
    const q = validateQuery(query, {
      uri: { type: "str", required: true },
      offset: { type: "int", default: 0 },
      limit: { type: "int", default: -1 },
      raw: { type: "bool", default: false },
    });
    const path = resolve(q.uri, id);
    const node = nodes.get(key(id.account, path));
    if (!node) throw notFound("file", uriOf(path));
    if (node.isDir) throw fail("INVALID_ARGUMENT", `Is a directory: ${uriOf(path)}`);
    // The read route hides OpenViking's own MEMORY_FIELDS comment unless raw=true.
    const text = q.raw ? node.content : node.content.replace(MEMORY_FIELDS, "");
    const offset = q.offset as number;
    const limit = q.limit as number;
    if (offset === 0 && limit < 0) return { body: ok(text) };
    const lines = text.split(/(?<=\n)/);
    return { body: ok(lines.slice(offset, limit < 0 ? undefined : offset + limit).join("")) };
  });
  for (const [name, limit] of [
    ["abstract", 256],
    ["overview", 4000],
  ] as const) {
    route("GET", new RegExp(`^/api/v1/content/${name}$`), ({ id, query }) => {
      const q = validateQuery(query, { uri: { type: "str", required: true } });
      const path = resolve(q.uri, id);
      const node = nodes.get(key(id.account, path));
      // L0/L1 are directory sidecars: a file has none.
      if (!node?.isDir) throw notFound("file", uriOf(path));
      return { body: ok(abstractOf(id.account, path, limit)) };
    });
  }

  // Filesystem
  route("GET", /^\/api\/v1\/fs\/ls$/, ({ id, query }) => {
    const q = validateQuery(query, {
      uri: { type: "str", required: true },
      simple: { type: "bool", default: false },
      recursive: { type: "bool", default: false },
      output: { type: "str", default: "agent" },
      node_limit: { type: "int", default: 1000 },
      limit: { type: "int", nullable: true },
    });
    const path = resolve(q.uri, id);
    ensureUserDirs(id);
    const node = path === "" ? { isDir: true } : nodes.get(key(id.account, path));
    if (!node) throw notFound("file", uriOf(path));
    const limit = (q.limit as number | undefined) ?? (q.node_limit as number);
    const paths = !node.isDir
      ? [path]
      : q.recursive
        ? descendants(id.account, path)
        : children(id.account, path);
    const visible = paths
      .filter((p) => !SIDECARS.has(p.slice(p.lastIndexOf("/") + 1)))
      .slice(0, Math.max(limit, 0));
    if (q.simple) return { body: ok(visible.map((p) => (path === "" ? p : p.slice(path.length + 1)))) };
    return {
      body: ok(visible.map((p) => listRow(id.account, path, p, q.output as string, q.recursive as boolean))),
    };
  });
  route("GET", /^\/api\/v1\/fs\/tree$/, ({ id, query }) => {
    const q = validateQuery(query, {
      uri: { type: "str", required: true },
      output: { type: "str", default: "agent" },
      level_limit: { type: "int", default: 3 },
      node_limit: { type: "int", default: 1000 },
    });
    const path = resolve(q.uri, id);
    const node = path === "" ? { isDir: true } : nodes.get(key(id.account, path));
    if (!node) throw notFound("file", uriOf(path));
    const depth = (p: string) => (path === "" ? p : p.slice(path.length + 1)).split("/").length;
    const rows = descendants(id.account, path)
      .filter((p) => depth(p) <= (q.level_limit as number))
      .slice(0, q.node_limit as number)
      .map((p) => listRow(id.account, path, p, q.output as string, true));
    return { body: ok(rows) };
  });
  route("GET", /^\/api\/v1\/fs\/stat$/, ({ id, query }) => {
    const q = validateQuery(query, { uri: { type: "str", required: true } });
    const path = resolve(q.uri, id);
    const node = nodes.get(key(id.account, path));
    if (!node) throw notFound("file", uriOf(path));
    const row = listRow(id.account, path, path, "original", false);
    return {
      body: ok({
        ...row,
        isLocked: false,
        ...(node.isDir ? { count: children(id.account, path).length } : {}),
      }),
    };
  });
  route("POST", /^\/api\/v1\/fs\/mkdir$/, ({ id, text }) => {
    const req = validateBody(
      parseJson(text, true),
      { uri: { type: "str", required: true }, description: { type: "str", nullable: true } },
      false,
    );
    const path = resolve(req.uri, id);
    ensureDir(id.account, path);
    return { body: ok({ uri: uriOf(path) }) };
  });
  route("DELETE", /^\/api\/v1\/fs$/, ({ id, query }) => {
    const q = validateQuery(query, {
      uri: { type: "str", required: true },
      recursive: { type: "bool", default: false },
    });
    const path = resolve(q.uri, id);
    const node = nodes.get(key(id.account, path));
    if (!node) throw notFound("file", uriOf(path));
    if (path.split("/").length < 2 || path === `user/${id.user}`) {
      throw fail("PERMISSION_DENIED", `Cannot remove a scope root: ${uriOf(path)}`);
    }
    const below = descendants(id.account, path);
    if (node.isDir && below.length > 0 && !q.recursive) {
      throw fail("INVALID_ARGUMENT", `Directory not empty: ${uriOf(path)} (pass recursive=true)`);
    }
    for (const p of below) nodes.delete(key(id.account, p));
    nodes.delete(key(id.account, path));
    return { body: ok({ uri: uriOf(path) }) };
  });
  route("POST", /^\/api\/v1\/fs\/mv$/, ({ id, text }) => {
    const req = validateBody(
      parseJson(text, true),
      { from_uri: { type: "str", required: true }, to_uri: { type: "str", required: true } },
      false,
    );
    const from = resolve(req.from_uri, id, "from_uri");
    const to = resolve(req.to_uri, id, "to_uri");
    const node = nodes.get(key(id.account, from));
    if (!node) throw notFound("file", uriOf(from));
    if (nodes.has(key(id.account, to)))
      throw fail("ALREADY_EXISTS", `File already exists: ${uriOf(to)}`, {
        type: "file",
        resource: uriOf(to),
      });
    ensureDir(id.account, to.slice(0, to.lastIndexOf("/")));
    for (const p of [from, ...descendants(id.account, from)]) {
      const n = nodes.get(key(id.account, p))!;
      nodes.delete(key(id.account, p));
      nodes.set(key(id.account, to + p.slice(from.length)), n);
    }
    return { body: ok({ from_uri: uriOf(from), to_uri: uriOf(to) }) };
  });

  // Resources
  route("POST", /^\/api\/v1\/resources$/, ({ id, text }) => {
    const req = validateBody(parseJson(text, true), RESOURCE_FIELDS, true);
    const source = req.path as string | null | undefined;
    const tempId = req.temp_file_id as string | null | undefined;
    if (!source && !tempId)
      throw fail("INVALID_ARGUMENT", "Either 'path' or 'temp_file_id' must be provided");
    if (req.to && req.parent) throw fail("INVALID_ARGUMENT", "'to' and 'parent' are mutually exclusive");
    if (tempId) throw notFound("temp file", tempId);
    if (!/^(https?:\/\/|git@|git:\/\/|ssh:\/\/)/.test(source!)) {
      throw fail(
        "PERMISSION_DENIED",
        `Local paths are not accepted over HTTP: ${source}. Upload the file to /api/v1/resources/temp_upload and pass temp_file_id.`,
      );
    }
    const base = slug(
      source!
        .replace(/[?#].*$/, "")
        .replace(/\/+$/, "")
        .split("/")
        .pop()!
        .replace(/\.[^.]*$/, ""),
    );
    const rootPath = req.to
      ? resolve(req.to, id, "to")
      : req.parent
        ? `${resolve(req.parent, id, "parent")}/${base}`
        : `resources/${base}`;
    ensureDir(id.account, rootPath);
    nodes.set(key(id.account, `${rootPath}/${base}.md`), {
      isDir: false,
      content: `# ${base}\n\nPlaceholder for ${source} (the fake does not fetch).\n`,
      modTimeNs: nowNs(),
    });
    const result: Record<string, unknown> = {
      status: "success",
      root_uri: uriOf(rootPath),
      source_path: source,
      meta: {},
      errors: [],
    };
    if (req.wait) {
      result.queue_status = { Semantic: { pending: 0 }, Embedding: { pending: 0 } };
    } else {
      const task: FakeTask = {
        id: randomUUID(),
        type: "add_resource",
        account: id.account,
        user: id.user,
        resourceId: uriOf(rootPath),
        createdAt: nowIso(),
        updatedAt: nowIso(),
        status: "running",
        polls: 0,
        messages: [],
        archiveUri: null,
      };
      tasks.set(task.id, task);
      result.task_id = task.id;
    }
    return { body: ok(result) };
  });

  // Search
  route("POST", /^\/api\/v1\/search\/find$/, ({ id, text }) => {
    const req = validateBody(parseJson(text, true), FIND_FIELDS, true);
    return { body: okLean(find(id, req)) };
  });
  route("POST", /^\/api\/v1\/search\/search$/, ({ id, text }) => {
    const req = validateBody(parseJson(text, true), SEARCH_FIELDS, true);
    if (req.mode === "context")
      throw fail("UNIMPLEMENTED", "mode='context' is not implemented by this server");
    const result = find(id, req);
    return {
      body: okLean({
        ...result,
        query_plan: {
          reasoning: "",
          queries: [{ query: req.query ?? "", context_type: null, intent: "", priority: 1 }],
        },
      }),
    };
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = process.hrtime.bigint();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url ?? "/", "http://fake");
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
    let body: unknown;
    if (text !== "") {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    requests.push({
      method: req.method ?? "GET",
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body,
    });

    const scripted = scripts.find(
      ({ script, left }) =>
        left > 0 &&
        (script.method === undefined || script.method.toUpperCase() === req.method) &&
        (script.path === undefined ||
          (typeof script.path === "string" ? script.path === url.pathname : script.path.test(url.pathname))),
    );
    if (scripted) {
      scripted.left--;
      const fault = scripted.script.fault;
      if (fault.kind === "drop") {
        req.socket.destroy();
        return;
      }
      if (fault.kind === "hang") {
        hanging.add(res);
        return;
      }
      if (fault.kind === "raw") {
        res.writeHead(fault.status, {
          "Content-Type": fault.contentType ?? "application/json",
          "Content-Length": String(Buffer.byteLength(fault.body)),
        });
        res.end(fault.body);
        return;
      }
      if (fault.kind === "error") {
        send(
          res,
          fault.status,
          {
            status: "error",
            result: null,
            error: { code: fault.code, message: fault.message, details: fault.details ?? null },
            telemetry: null,
            profile: null,
          },
          started,
        );
        return;
      }
      await new Promise<void>((resolveDelay) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          resolveDelay();
        }, fault.ms);
        timers.add(timer);
      });
      if (res.destroyed) return;
    }

    if (url.pathname === "/health" && req.method === "GET") {
      const extra: Record<string, unknown> = {};
      const apiKey = headers["x-api-key"] ?? /^Bearer\s+(.+)$/i.exec(headers.authorization ?? "")?.[1];
      if (apiKeyMode && apiKey !== undefined) {
        if (apiKey === options.rootKey)
          Object.assign(extra, { account_id: "default", user_id: "default", role: "root" });
        else if (userKeys[apiKey]) {
          const u = userKeys[apiKey]!;
          Object.assign(extra, { account_id: u.account, user_id: u.user, role: u.role ?? "user" });
        }
      }
      send(
        res,
        200,
        {
          status: "ok",
          healthy: true,
          version: options.version ?? "fake",
          auth_mode: apiKeyMode ? "api_key" : "dev",
          ...extra,
        },
        started,
      );
      return;
    }
    if (url.pathname === "/ready" && req.method === "GET") {
      send(
        res,
        200,
        { status: "ok", checks: { storage: "ok", vector_db: "ok", api_key_manager: "ok" } },
        started,
      );
      return;
    }

    const matching = routes.filter((r) => r.pattern.test(url.pathname));
    const found = matching.find((r) => r.method === req.method);
    if (!found) {
      // Framework errors are enveloped with exclude_none (no result/telemetry/profile keys).
      const status = matching.length > 0 ? 405 : 404;
      send(
        res,
        status,
        {
          status: "error",
          error: {
            code: status === 404 ? "NOT_FOUND" : "UNKNOWN",
            message: status === 404 ? "Not Found" : "Method Not Allowed",
          },
        },
        started,
      );
      return;
    }
    try {
      const id = identify(req, url.pathname);
      const params = found.pattern.exec(url.pathname)!.slice(1);
      const out = found.handler({ id, query: url.searchParams, text, params });
      send(res, out.status ?? 200, out.body, started);
    } catch (error) {
      if (error instanceof ValidationFailure) {
        const first = error.issues[0]!;
        send(
          res,
          400,
          {
            status: "error",
            error: {
              code: "INVALID_ARGUMENT",
              message: `Invalid request parameters: ${first.loc.join(".")}: ${first.message}`,
              details: { validation_errors: error.issues },
            },
          },
          started,
        );
        return;
      }
      if (error instanceof ApiError) {
        send(
          res,
          error.status,
          {
            status: "error",
            result: null,
            error: { code: error.code, message: error.message, details: error.details },
            telemetry: null,
            profile: null,
          },
          started,
        );
        return;
      }
      send(
        res,
        500,
        {
          status: "error",
          result: null,
          error: { code: "INTERNAL", message: "Internal server error", details: null },
          telemetry: null,
          profile: null,
        },
        started,
      );
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolveListen());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script(script) {
      scripts.push({ script, left: script.times ?? 1 });
    },
    clearScripts() {
      scripts.length = 0;
    },
    failNextTask(code = "PROCESSING_ERROR", message = "memory extraction failed (scripted)") {
      pendingTaskFailures.push({ code, message });
    },
    breakArchive(account, user, sessionId) {
      const s = sessions.get(`${account}\u0000${user}\u0000${sessionId}`);
      if (!s) throw new Error(`no session ${sessionId} for ${account}/${user}`);
      s.broken = true;
    },
    readFile(uri, account = "default") {
      const node = nodes.get(key(account, uri.replace(/^viking:\/\//, "")));
      return node && !node.isDir ? node.content : undefined;
    },
    files(account = "default") {
      const prefix = `${account}\u0000`;
      return [...nodes.entries()]
        .filter(([k, n]) => k.startsWith(prefix) && !n.isDir)
        .map(([k]) => uriOf(k.slice(prefix.length)))
        .sort();
    },
    session(account, user, sessionId) {
      const s = sessions.get(`${account}\u0000${user}\u0000${sessionId}`);
      if (!s) return undefined;
      return {
        messages: s.messages.map((m) => ({ role: m.role, content: m.content })),
        commitCount: s.commitCount,
        totalMessageCount: s.totalMessageCount,
      };
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const res of hanging) res.destroy();
      hanging.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
    },
  };
}
