import {
  type AssistantChunk,
  type Chunk,
  type ChunkInput,
  chunkToMessage,
  createChunk,
  type Message,
  messagesToChunkInputs,
} from "./chunk.js";
import { MergeConflictError, OpenRathError } from "./errors.js";
import { ChunkList } from "./internal/chunk-list.js";
import { newId } from "./internal/id.js";
import type { JsonValue } from "./json.js";
import { type LineageExtras, LineageNode, type LineageOp } from "./lineage.js";
import { Placement } from "./placement.js";
import { defaultRegistry, type Registry, type SandboxBackends, type SandboxKey } from "./registry.js";
import { SandboxError, type SandboxV1 } from "./sandbox.js";
import { sumUsage, type Usage } from "./usage.js";

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
  /** The lineage DAG, the session's own node first, every parent before it is referenced… or after. */
  readonly lineage: readonly LineageNodeJSON[];
}

/** A lineage node in JSON: parents by id. */
export interface LineageNodeJSON {
  readonly id: string;
  readonly op: LineageOp;
  readonly operator: string;
  readonly parents: readonly string[];
  readonly extras: LineageExtras;
  readonly length: number;
  readonly createdAt: number;
}

const usageCache = new WeakMap<ChunkList<Chunk>, Usage>();

/**
 * The one value that flows: an immutable transcript of chunks plus its lineage and placement.
 *
 * Every operation returns a new Session. `append` and `to` return a new version of the same
 * session (same id, same lineage node); `fork`, `detach`, `merge` and `derive` return a new
 * identity with a lineage node pointing at its parents. Forks share their parent's chunks: a fork
 * costs O(1) time and memory, and appends to it O(1) amortized.
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
    private readonly list: ChunkList<Chunk>,
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
   * equals the original: same id, chunks, lineage and placement.
   *
   * @throws {OpenRathError} code `invalid_session_json` naming what is wrong.
   */
  static fromJSON(json: SessionJSON | string, options: { registry?: Registry } = {}): Session {
    let data: unknown = json;
    if (typeof json === "string") {
      try {
        data = JSON.parse(json);
      } catch (cause) {
        throw new OpenRathError(
          "invalid_session_json",
          `Session JSON does not parse: ${(cause as Error).message}`,
          { cause },
        );
      }
    }
    const bad = (what: string, value?: unknown): never => {
      throw new OpenRathError("invalid_session_json", `Invalid session JSON: ${what}.`, {
        details: { value },
      });
    };
    if (typeof data !== "object" || data === null) bad("expected an object", data);
    const d = data as Record<string, unknown>;
    if (d.format !== "openrath.session") bad(`"format" must be "openrath.session"`, d.format);
    if (d.version !== 1)
      bad(`unsupported "version" ${JSON.stringify(d.version)}; this core reads version 1`, d.version);
    if (typeof d.id !== "string" || d.id === "") bad(`"id" must be a non-empty string`, d.id);
    if (!Array.isArray(d.chunks)) bad(`"chunks" must be an array`, d.chunks);
    if (!Array.isArray(d.lineage)) bad(`"lineage" must be an array of nodes`, d.lineage);
    const nodes = restoreLineage(d.lineage as unknown[]);
    const node = nodes.get(d.id as string) ?? bad(`no lineage node for the session id ${d.id}`, d.id);
    const chunks = (d.chunks as unknown[]).map((c, i) => {
      const chunk = c as Partial<Chunk> | null;
      if (
        typeof chunk?.id !== "string" ||
        typeof chunk.sessionId !== "string" ||
        typeof chunk.createdAt !== "number"
      ) {
        bad(`chunk ${i} lacks "id", "sessionId" or "createdAt"`, c);
      }
      try {
        return createChunk(chunk as ChunkInput, d.id as string);
      } catch (cause) {
        throw new OpenRathError(
          "invalid_session_json",
          `Invalid session JSON: chunk ${i}: ${(cause as Error).message}`,
          {
            cause,
            details: { index: i, value: c },
          },
        );
      }
    });
    let placement: Placement | undefined;
    if (d.placement !== undefined) {
      const p = d.placement as Record<string, unknown> | null;
      if (typeof p?.key !== "string") bad(`"placement.key" must be a string`, d.placement);
      const key = p!.key as string;
      const registry = options.registry;
      // The backend is looked up when the sandbox is first needed, so a log can be read anywhere.
      placement = new Placement(key, p!.spec, () => (registry ?? defaultRegistry()).sandbox(key));
    }
    return new Session(node, ChunkList.from(chunks), placement);
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

  /** The session id (a UUID v7). Stable across `append` and `to`; new for every branch. */
  get id(): string {
    return this.lineage.id;
  }

  /** All chunks in order, as a frozen array (built on first read, then shared). */
  get chunks(): readonly Chunk[] {
    return this.list.toArray();
  }

  /** Number of chunks. */
  get length(): number {
    return this.list.length;
  }

  /** The chunk at `index` (negative counts from the end), or `undefined`. */
  at(index: number): Chunk | undefined {
    return this.list.at(index);
  }

  /**
   * Total usage of the model calls recorded in this session: the sum over its distinct chunks, so
   * a fork inherits its parent's usage and a merge counts the shared prefix once.
   */
  get usage(): Usage {
    let usage = usageCache.get(this.list);
    if (usage === undefined) {
      usage = sumUsage(this.list);
      usageCache.set(this.list, usage);
    }
    return usage;
  }

  /**
   * A new version of this session (same id and lineage) with `chunks` appended. Each input gets
   * an id, a timestamp and this session as its branch unless it already has them.
   *
   * @throws {OpenRathError} code `invalid_chunk` for a malformed chunk; nothing is appended then.
   */
  append(...chunks: ChunkInput[]): Session {
    if (chunks.length === 0) return this;
    const now = Date.now();
    const made =
      chunks.length === 1
        ? [createChunk(chunks[0]!, this.lineage.id, now)]
        : chunks.map((c) => createChunk(c, this.lineage.id, now));
    return new Session(this.lineage, this.list.concat(made), this.placement);
  }

  /** The model-visible transcript: every chunk but `event`s, as OpenAI-shaped messages. O(n). */
  messages(): Message[] {
    const out: Message[] = [];
    for (const chunk of this.list) {
      const message = chunkToMessage(chunk);
      if (message) out.push(message);
    }
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
    return new Session(node, this.list, this.placement?.share());
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
   * - `"three-way"` (default): the prefix the two share (by chunk id) once, then this session's
   *   chunks after it, then `other`'s. Merging two forks of a long session costs the new chunks.
   * - `"concat"`: all of this session's chunks, then all of `other`'s (the Python original's
   *   behaviour; a shared prefix appears twice, though usage still counts each chunk once).
   *
   * The result keeps this session's placement, or `other`'s when this one is unplaced, and takes
   * its own hold on that sandbox.
   *
   * @throws {MergeConflictError} code `merge_conflict` when the two are placed on different backends.
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
    const a = this.placement;
    const b = other.placement;
    if (a && b && a.key !== b.key) {
      throw new MergeConflictError(
        "merge_conflict",
        `Cannot merge session ${this.id} placed on "${a.key}" with session ${other.id} placed on "${b.key}": a merged session runs its tools on one backend. Move one with .to("${a.key}") first.`,
        { details: { left: { id: this.id, backend: a.key }, right: { id: other.id, backend: b.key } } },
      );
    }
    const shared = strategy === "three-way" ? this.list.commonPrefix(other.list, (x, y) => x.id === y.id) : 0;
    const list = this.list.concat(other.list.slice(shared));
    const extras: LineageExtras = {
      ...options.extras,
      strategy,
      "merge.shared": shared,
      "merge.left": this.list.length - shared,
      "merge.right": other.list.length - shared,
    };
    const node = new LineageNode(
      newId(),
      "merge",
      options.operator ?? "Session.merge",
      [this.lineage, other.lineage],
      extras,
      list.length,
    );
    return new Session(node, list, (a ?? b)?.share());
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

  /** The JSON form: chunks, placement and the whole lineage DAG behind this session. */
  toJSON(): SessionJSON {
    const lineage: LineageNodeJSON[] = [];
    const seen = new Set<string>();
    const stack: LineageNode[] = [this.lineage];
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (seen.has(node.id)) continue;
      seen.add(node.id);
      lineage.push({
        id: node.id,
        op: node.op,
        operator: node.operator,
        parents: node.parents.map((p) => p.id),
        extras: node.extras,
        length: node.length,
        createdAt: node.createdAt,
      });
      for (let i = node.parentCount - 1; i >= 0; i--) stack.push(node.parentAt(i)!);
    }
    return {
      format: "openrath.session",
      version: 1,
      id: this.id,
      chunks: this.chunks,
      ...(this.placement
        ? { placement: { key: this.placement.key, spec: this.placement.spec as JsonValue } }
        : {}),
      lineage,
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
    const chunks = this.chunks;
    const lines = [`Session ${this.id} (${this.lineage.op}, ${chunks.length} chunks)`];
    const shown = chunks.length <= 8 ? chunks : [...chunks.slice(0, 4), undefined, ...chunks.slice(-4)];
    for (const c of shown) lines.push(c ? preview(c) : `  ... (${chunks.length - 8} chunks omitted) ...`);
    return lines.join("\n");
  }
}

/** Rebuilds lineage nodes from JSON, parents before children, rejecting dangling parents and cycles. */
function restoreLineage(raw: readonly unknown[]): Map<string, LineageNode> {
  const bad = (what: string, value?: unknown): never => {
    throw new OpenRathError("invalid_session_json", `Invalid session JSON: lineage ${what}.`, {
      details: { value },
    });
  };
  const byId = new Map<string, LineageNodeJSON>();
  for (const r of raw) {
    const n = r as Partial<LineageNodeJSON> | null;
    if (
      typeof n?.id !== "string" ||
      typeof n.op !== "string" ||
      typeof n.operator !== "string" ||
      !Array.isArray(n.parents) ||
      !n.parents.every((p) => typeof p === "string") ||
      typeof n.length !== "number" ||
      typeof n.createdAt !== "number" ||
      (n.extras !== undefined &&
        (typeof n.extras !== "object" || n.extras === null || Array.isArray(n.extras)))
    ) {
      bad("node is missing id, op, operator, parents, length or createdAt", r);
    }
    byId.set(n!.id!, n as LineageNodeJSON);
  }
  const built = new Map<string, LineageNode>();
  const visiting = new Set<string>();
  const build = (id: string): LineageNode => {
    const done = built.get(id);
    if (done) return done;
    // Explicit stack instead of recursion: lineage chains can be thousands of nodes deep.
    const stack: string[] = [id];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (built.has(top)) {
        stack.pop();
        continue;
      }
      const json = byId.get(top) ?? bad(`references parent ${top}, which is not in the lineage list`, top);
      const missing = json.parents.filter((p) => !built.has(p));
      if (missing.length === 0) {
        built.set(
          top,
          new LineageNode(
            json.id,
            json.op,
            json.operator,
            json.parents.map((p) => built.get(p)!),
            json.extras ?? {},
            json.length,
            json.createdAt,
          ),
        );
        visiting.delete(top);
        stack.pop();
        continue;
      }
      if (visiting.has(top)) bad(`has a cycle through ${top}`, top);
      visiting.add(top);
      for (const p of missing) {
        if (visiting.has(p)) bad(`has a cycle through ${p}`, p);
        stack.push(p);
      }
    }
    return built.get(id)!;
  };
  for (const id of byId.keys()) build(id);
  return built;
}
