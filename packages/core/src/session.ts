import {
  type AssistantChunk,
  type Chunk,
  type ChunkInput,
  chunkToMessage,
  createChunk,
  type Message,
  messagesToChunkInputs,
} from "./chunk.js";
import { OpenRathError } from "./errors.js";
import { ChunkList } from "./internal/chunk-list.js";
import { newId } from "./internal/id.js";
import {
  invalidSessionJson,
  type LineageNodeJSON,
  lineageToJSON,
  readSessionJSON,
} from "./internal/session-json.js";
import type { JsonValue } from "./json.js";
import { type LineageExtras, LineageNode, type LineageOp } from "./lineage.js";
import { reportBranch } from "./observer.js";
import { mergedPlacement, Placement } from "./placement.js";
import { defaultRegistry, type Registry, type SandboxBackends, type SandboxKey } from "./registry.js";
import { SandboxError, type SandboxV1 } from "./sandbox.js";
import type { Usage } from "./usage.js";

export type { LineageNodeJSON } from "./internal/session-json.js";

/** How {@link Session.merge} combines two transcripts. */
export type MergeStrategy = "three-way" | "concat";

/** Options for operations that create a new session identity. */
export interface BranchOptions {
  /** Who performed the operation; defaults to the method name (`"Session.fork"`). */
  readonly operator?: string;
  /** Annotations recorded on the lineage node. */
  readonly extras?: LineageExtras;
}

/** Options for {@link Session.derive}. */
export interface DeriveOptions extends BranchOptions {
  readonly op: LineageOp;
  readonly operator: string;
  /** Replace the transcript with these chunks (a compressor's summary); by default it is kept. */
  readonly chunks?: readonly ChunkInput[];
}

/** The serialized form of a session: `session.toJSON()`, accepted by `Session.fromJSON()`. */
export interface SessionJSON {
  readonly format: "openrath.session";
  readonly version: 1;
  readonly id: string;
  readonly chunks: readonly Chunk[];
  readonly placement?: { readonly key: string; readonly spec?: JsonValue };
  /** The lineage DAG behind the session, its own node first, each node once. */
  readonly lineage: readonly LineageNodeJSON[];
}

let build: (node: LineageNode, list: ChunkList, placement: Placement | undefined) => Session;

/**
 * The one value that flows: an immutable transcript of chunks plus its lineage and placement.
 *
 * Every operation returns a new Session. `append` and `to` return a new version of the same
 * session (same id, same lineage node); `fork`, `detach`, `merge` and `derive` return a new
 * identity with a lineage node pointing at its parents.
 *
 * Costs (n chunks, whatever the branching history): `fork`, `detach`, `length`, `usage` O(1);
 * `append` O(1) amortized; `at`, `indexOf`, `chunksFrom` (to start) O(log n); `merge` O(log n)
 * plus O(log n) per chunk the other side holds beyond the prefix both share; `messages()`,
 * `toJSON()` and the first read of `chunks` O(n). Forks share their parent's chunks, and a dropped
 * fork frees what it appended.
 *
 * @example
 * ```ts
 * const question = Session.fromUserMessage("Plan a trip to Kyoto");
 * const a = question.fork().append({ kind: "assistant", content: "Temples first." });
 * const b = question.fork().append({ kind: "assistant", content: "Food first." });
 * const both = a.merge(b); // the question once, then each branch's answer
 * ```
 */
export class Session {
  private constructor(
    /** This session's lineage node: the operation that created its identity. */
    readonly lineage: LineageNode,
    private readonly list: ChunkList,
    /** Where tools run, or `undefined` for an unplaced session. */
    readonly placement: Placement | undefined,
  ) {}

  /** A new session holding one user message (a `leaf_user` lineage root). */
  static fromUserMessage(text: string, options: { author?: string } = {}): Session {
    return Session.leaf("leaf_user", "Session.fromUserMessage", [
      { kind: "user", content: text, ...options },
    ]);
  }

  /** A new session holding one system prompt (a `leaf_system` lineage root). */
  static fromAgentPrompt(text: string, options: { author?: string } = {}): Session {
    return Session.leaf("leaf_system", "Session.fromAgentPrompt", [
      { kind: "system", content: text, ...options },
    ]);
  }

  /** A new session with no chunks (lineage op `create`). */
  static empty(): Session {
    return Session.leaf("create", "Session.empty", []);
  }

  /** A new session from OpenAI-shaped messages (lineage op `create`). */
  static fromMessages(messages: readonly Message[]): Session {
    return Session.leaf("create", "Session.fromMessages", messagesToChunkInputs(messages));
  }

  /**
   * Restores a session from {@link Session.toJSON} output (an object or its JSON text). The result
   * equals the original: same id, chunks, lineage and placement. A chunk id may appear more than
   * once only for the same chunk (a `concat` merge holds chunks twice).
   *
   * @throws {OpenRathError} code `invalid_session_json` naming what is wrong: a malformed field, a
   *   session or lineage id that is not a session id (a UUID in lower-case canonical form, such as
   *   core makes; so `"../x"` never becomes a file name), a chunk that fails validation, two
   *   different chunks with one id, a session lineage node that claims more chunks than the JSON
   *   holds, data nested deeper than 512 levels.
   */
  static fromJSON(json: SessionJSON | string, options: { registry?: Registry } = {}): Session {
    return restoreSession(json, options.registry, false);
  }

  static {
    // Lets restoreSession (for core's session-log reader) build sessions; the constructor stays private.
    build = (node, list, placement) => new Session(node, list, placement);
  }

  private static leaf(op: LineageOp, operator: string, inputs: readonly ChunkInput[]): Session {
    const now = Date.now();
    const id = newId(now);
    const chunks = inputs.map((c) => createChunk(c, id, now));
    const extras = op === "create" ? undefined : { source: operator };
    return new Session(
      new LineageNode(id, op, operator, undefined, extras, chunks.length, now),
      ChunkList.from(chunks),
      undefined,
    );
  }

  /**
   * The session id (a UUID v7 in lower-case canonical form; `isSessionId` checks the format).
   * Stable across `append` and `to`; new for every branch.
   */
  get id(): string {
    return this.lineage.id;
  }

  /**
   * All chunks in order, as a frozen array, built on first read (O(n)) and then shared by every
   * session holding the same transcript. To walk part of a long transcript, use
   * {@link Session.chunksFrom} or {@link Session.at}, which build no array.
   */
  get chunks(): readonly Chunk[] {
    return this.list.toArray();
  }

  /** Number of chunks. O(1). */
  get length(): number {
    return this.list.length;
  }

  /** The chunk at `index` (negative counts from the end), or `undefined`. O(log n). */
  at(index: number): Chunk | undefined {
    return this.list.at(index);
  }

  /**
   * The chunks from position `start` to the end, in order, without building an array: O(log n)
   * to start, then O(1) per chunk. A negative `start` counts from the end; past the end gives
   * nothing. For reading only what was appended since some point, such as a checkpoint that
   * recorded `length` (or, with {@link Session.indexOf}, its last chunk id).
   *
   * @example
   * ```ts
   * const seen = checkpoint.length;
   * for (const chunk of session.chunksFrom(seen)) store(chunk);
   * ```
   */
  chunksFrom(start = 0): IterableIterator<Chunk> {
    const n = this.list.length;
    const from = Number.isFinite(start) ? Math.trunc(start) : start > 0 ? n : 0;
    return this.list.chunksFrom(from < 0 ? Math.max(0, n + from) : from);
  }

  /** Position of the chunk with id `chunkId` (its first, should it appear twice), or -1. O(log n). */
  indexOf(chunkId: string): number {
    return typeof chunkId === "string" ? this.list.indexOf(chunkId) : -1;
  }

  /**
   * Total usage of the model calls recorded in this session: the sum over its distinct chunks, so
   * a fork inherits its parent's usage and a merge counts what both sides share once. Kept up to
   * date as chunks are added: O(1) to read.
   */
  get usage(): Usage {
    return this.list.usage;
  }

  /**
   * A new version of this session (same id and lineage) with `chunks` appended. Each input gets
   * an id, a timestamp and this session as its branch unless it already has them. A chunk copied
   * from another session keeps its id; if this session already holds it, its usage is not counted
   * again.
   *
   * @throws {OpenRathError} code `invalid_chunk` for a malformed chunk, or for a chunk whose id
   *   this session (or the same call) already uses for a different chunk; nothing is appended then.
   */
  append(...chunks: ChunkInput[]): Session {
    if (chunks.length === 0) return this;
    const now = Date.now();
    const id = this.lineage.id;
    if (chunks.length === 1) {
      const made = createChunk(chunks[0]!, id, now);
      const copied = (chunks[0] as { id?: unknown }).id !== undefined;
      if (copied) this.list.checkCopied([made]);
      return new Session(this.lineage, this.list.append([made], !copied), this.placement);
    }
    let copied = false;
    const made = chunks.map((c) => {
      const chunk = createChunk(c, id, now);
      if ((c as { id?: unknown }).id !== undefined) copied = true;
      return chunk;
    });
    if (copied) this.list.checkCopied(made);
    return new Session(this.lineage, this.list.append(made, !copied), this.placement);
  }

  /** The model-visible transcript: every chunk but `event`s, as OpenAI-shaped messages. O(n). */
  messages(): Message[] {
    const out: Message[] = [];
    this.list.forEach(0, (chunk) => {
      const message = chunkToMessage(chunk);
      if (message) out.push(message);
    });
    return out;
  }

  /** Text of the last assistant chunk with non-blank text (tool-call-only turns are skipped). */
  text(): string | undefined {
    for (let i = this.list.length - 1; i >= 0; i--) {
      const chunk = this.list.at(i)!;
      if (chunk.kind === "assistant" && chunk.content !== null && chunk.content.trim() !== "")
        return chunk.content;
    }
    return undefined;
  }

  /** The last assistant chunk, if any. */
  lastAssistant(): AssistantChunk | undefined {
    for (let i = this.list.length - 1; i >= 0; i--) {
      const chunk = this.list.at(i)!;
      if (chunk.kind === "assistant") return chunk;
    }
    return undefined;
  }

  /**
   * A new version of this session placed on sandbox backend `key`. Nothing is opened: the sandbox
   * opens on first tool use. The key is checked now against `options.registry` (default: the
   * process-wide registry), and the spec through the backend's `parseSpec` when it has one.
   *
   * @throws {OpenRathError} code `unknown_backend` listing the registered keys, or the backend's
   *   `invalid_spec` error.
   */
  to<K extends SandboxKey>(
    key: K,
    spec?: SandboxBackends[K],
    options: { registry?: Registry } = {},
  ): Session {
    const backend = (options.registry ?? defaultRegistry()).sandbox(key);
    const parsed = backend.parseSpec ? backend.parseSpec(spec) : spec;
    return new Session(this.lineage, this.list, new Placement(key, parsed, () => backend));
  }

  /**
   * The sandbox this session is placed on, opened on first use and shared with its forks.
   *
   * @throws {SandboxError} `not_placed` for an unplaced session, `sandbox_closed` after release,
   *   or the backend's open error.
   */
  sandbox(options: { signal?: AbortSignal } = {}): Promise<SandboxV1> {
    if (!this.placement) {
      return Promise.reject(
        new SandboxError(
          "not_placed",
          `Session ${this.id} is not placed on a sandbox. Place it first: session.to("local").`,
          {
            details: { sessionId: this.id },
          },
        ),
      );
    }
    return this.placement.sandbox(options.signal);
  }

  /**
   * Lets go of this session's hold on its sandbox (every version of this session shares the hold).
   * The sandbox closes when its last holder releases it. A no-op for an unplaced session; idempotent.
   */
  release(): Promise<void> {
    return this.placement?.release() ?? Promise.resolve();
  }

  /**
   * A branch: new id, same chunks (shared, not copied), lineage op `fork` with this as parent. O(1).
   * The branch shares this session's memory scope, unless `memory: "isolate"` gives it its own
   * session-level scope (agents then neither see nor write the parent's session memories).
   */
  fork(options: BranchOptions & { memory?: "share" | "isolate" } = {}): Session {
    const node = new LineageNode(
      newId(),
      "fork",
      options.operator ?? "Session.fork",
      this.lineage,
      options.memory === "isolate" ? { ...options.extras, "memory.scope": "isolate" } : options.extras,
      this.list.length,
    );
    const forked = new Session(node, this.list, this.placement?.share());
    reportBranch("fork", forked, [this]);
    return forked;
  }

  /** A new lineage root with the same chunks and placement (lineage op `detach`, no parents). */
  detach(options: BranchOptions = {}): Session {
    const node = new LineageNode(
      newId(),
      "detach",
      options.operator ?? "Session.detach",
      undefined,
      options.extras,
      this.list.length,
    );
    return new Session(node, this.list, this.placement?.share());
  }

  /**
   * A new session combining this one and `other` (lineage op `merge`, parents `[this, other]`).
   *
   * - `"three-way"` (default): this session's transcript unchanged, then the chunks of `other`
   *   this session does not hold, in `other`'s order. What both share, such as the common
   *   ancestor's chunks, appears once, also after earlier merges and in diamonds (chunks are
   *   compared by id), so merging again after `other` kept going adds only its new chunks. The
   *   result extends this session, so a model continuing from it sees its own history unchanged.
   *   O(log n) plus O(log n) per chunk `other` holds beyond the prefix the two share.
   * - `"concat"`: all of this session's chunks, then all of `other`'s (the Python original's
   *   behaviour; shared chunks appear twice, though usage still counts each chunk once).
   *
   * Lineage extras record `merge.shared` (chunks of `other` this side already held),
   * `merge.left` (this side's chunks `other` lacked) and `merge.right` (chunks taken from `other`).
   *
   * The result keeps this session's placement, or `other`'s when this one is unplaced, and takes
   * its own hold on that sandbox.
   *
   * @throws {MergeConflictError} code `merge_conflict` when the two are placed on different
   *   backends, or on the same backend with different specs.
   */
  merge(other: Session, options: BranchOptions & { strategy?: MergeStrategy } = {}): Session {
    if (!(other instanceof Session)) {
      throw new OpenRathError("invalid_argument", "Session.merge expects a Session.", {
        details: { value: other },
      });
    }
    const strategy = options.strategy ?? "three-way";
    if (strategy !== "three-way" && strategy !== "concat") {
      throw new OpenRathError(
        "invalid_argument",
        `Unknown merge strategy ${JSON.stringify(strategy)}; use "three-way" or "concat".`,
        {
          details: { strategy },
        },
      );
    }
    const placement = mergedPlacement(this, other);
    let list: ChunkList;
    let shared: number;
    let right: number;
    if (strategy === "three-way") {
      const merged = this.list.mergeThreeWay(other.list);
      list = merged.list;
      shared = merged.shared;
      right = merged.added;
    } else {
      list = this.list.append(other.list.slice(), false);
      shared = 0;
      right = other.list.length;
    }
    const extras: LineageExtras = {
      ...options.extras,
      strategy,
      "merge.shared": shared,
      "merge.left": this.list.length - shared,
      "merge.right": right,
    };
    const node = new LineageNode(
      newId(),
      "merge",
      options.operator ?? "Session.merge",
      [this.lineage, other.lineage],
      extras,
      list.length,
    );
    const merged = new Session(node, list, placement?.share());
    reportBranch("merge", merged, [this, other]);
    return merged;
  }

  /**
   * A new session identity made by an operation on this one (an agent run is `loop`, a compressor
   * `compress`), with this session as its only parent. The transcript is kept unless `chunks` is
   * given, which replaces it.
   */
  derive(options: DeriveOptions): Session {
    const id = newId();
    const list = options.chunks ? ChunkList.from(options.chunks.map((c) => createChunk(c, id))) : this.list;
    const node = new LineageNode(id, options.op, options.operator, this.lineage, options.extras, list.length);
    return new Session(node, list, this.placement?.share());
  }

  /**
   * A version of this session whose lineage node also carries `extras`. For the operation that
   * created this identity to record how it ended (an agent run that hit its turn limit), before
   * the session is handed to anyone else: forks made earlier keep pointing at the old node.
   */
  annotate(extras: LineageExtras): Session {
    const n = this.lineage;
    const node = new LineageNode(
      n.id,
      n.op,
      n.operator,
      n.parents,
      { ...n.extras, ...extras },
      n.length,
      n.createdAt,
    );
    return new Session(node, this.list, this.placement);
  }

  /** The JSON form: chunks, placement and the whole lineage DAG behind this session. O(n). */
  toJSON(): SessionJSON {
    return {
      format: "openrath.session",
      version: 1,
      id: this.id,
      chunks: this.list.slice(),
      ...(this.placement
        ? { placement: { key: this.placement.key, spec: this.placement.spec as JsonValue } }
        : {}),
      lineage: lineageToJSON(this.lineage),
    };
  }

  /** A short preview: id, lineage op and the first and last chunks. */
  toString(): string {
    const preview = (c: Chunk) => {
      const text =
        c.kind === "event"
          ? c.name
          : c.kind === "assistant" && c.content === null
            ? `${c.toolCalls?.length} tool call(s)`
            : c.content;
      const flat = String(text).replace(/\s+/g, " ");
      return `  ${c.kind}: ${flat.length > 60 ? `${flat.slice(0, 57)}...` : flat}`;
    };
    const n = this.list.length;
    const lines = [`Session ${this.id} (${this.lineage.op}, ${n} chunks)`];
    const shown = n <= 8 ? [...Array(n).keys()] : [0, 1, 2, 3, -1, n - 4, n - 3, n - 2, n - 1];
    for (const i of shown)
      lines.push(i >= 0 ? preview(this.list.at(i)!) : `  ... (${n - 8} chunks omitted) ...`);
    return lines.join("\n");
  }
}

/**
 * {@link Session.fromJSON}, for core's own readers. With `truncated`, the JSON may hold fewer
 * chunks than the session's lineage node records: an unfinished session log whose writer crashed
 * before every chunk reached the disk.
 */
export function restoreSession(json: unknown, registry: Registry | undefined, truncated: boolean): Session {
  const { node, chunks, placement } = readSessionJSON(json, truncated);
  let list: ChunkList;
  try {
    list = ChunkList.from(chunks);
  } catch (cause) {
    const details = (cause as OpenRathError).details ?? {};
    throw invalidSessionJson((cause as Error).message.replace(/\.$/, ""), details, cause);
  }
  if (!placement) return build(node, list, undefined);
  const { key, spec } = placement;
  // The backend is looked up when the sandbox is first needed, so a log can be read anywhere.
  return build(node, list, new Placement(key, spec, () => (registry ?? defaultRegistry()).sandbox(key)));
}
