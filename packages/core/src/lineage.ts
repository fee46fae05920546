import type { Chunk } from "./chunk.js";
import { OpenRathError } from "./errors.js";
import { exceedsDepth, MAX_JSON_DEPTH } from "./internal/json-checks.js";
import { dotText, mermaidText, terminalText } from "./internal/label-escape.js";
import type { JsonValue } from "./json.js";
import { creditedRecall, type RecallCredit } from "./memory-provenance.js";
import type { Usage } from "./usage.js";

/**
 * What made a session. The first group matches the Python original's lineage kinds; `unknown` is
 * what a session restored without lineage gets. Other strings are allowed for new operators.
 */
export type LineageOp =
  | "leaf_user"
  | "leaf_system"
  | "create"
  | "fork"
  | "detach"
  | "merge"
  | "loop"
  | "compress"
  | "select"
  | "workflow"
  | "unknown"
  | (string & {});

/** Annotations on a lineage node, such as `{ "loop.truncated": true }`. Values are JSON. */
export type LineageExtras = Readonly<Record<string, JsonValue>>;

const NO_PARENTS: readonly LineageNode[] = Object.freeze([]);
const NO_EXTRAS: LineageExtras = Object.freeze({});

/** The Unix-millisecond time inside a UUID v7, or `undefined` for any other id. */
function timeOfId(id: string): number | undefined {
  if (id.length !== 36 || id.charCodeAt(14) !== 55 /* "7" */) return undefined;
  const ms = Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * One immutable node of the lineage DAG: the operation that created a session identity. It points
 * at its parents' nodes, never at their chunks, so holding a node keeps no transcript alive.
 */
export class LineageNode {
  /** Annotations (JSON values). */
  readonly extras: LineageExtras;
  // A fork costs one node, so a single parent is kept bare (no array) and the creation time is
  // read from the UUID v7 id unless it differs from it (ids restored from elsewhere).
  private readonly up: LineageNode | readonly LineageNode[] | undefined;
  private readonly at: number | undefined;

  /**
   * @param id - the session id this node stands for.
   * @param op - the operation kind.
   * @param operator - who ran it: `"Session.fork"`, an agent or workflow name.
   * @param parents - the parent node, or parent nodes in operation order.
   * @param length - the session's chunk count when the node was made.
   * @param createdAt - Unix epoch milliseconds (default: the time in a UUID v7 id, else now).
   */
  constructor(
    readonly id: string,
    readonly op: LineageOp,
    readonly operator: string,
    parents: LineageNode | readonly LineageNode[] = NO_PARENTS,
    extras: LineageExtras = NO_EXTRAS,
    readonly length: number = 0,
    createdAt?: number,
  ) {
    this.up =
      parents instanceof LineageNode
        ? parents
        : parents.length === 0
          ? undefined
          : parents.length === 1
            ? parents[0]
            : Object.freeze(parents.slice());
    if (extras === NO_EXTRAS || Object.keys(extras).length === 0) {
      this.extras = NO_EXTRAS;
    } else {
      // Extras are serialized with the session (JSON, logs), which absurd nesting would overflow.
      if (exceedsDepth(extras, MAX_JSON_DEPTH)) {
        throw new OpenRathError(
          "invalid_argument",
          `Lineage extras of session ${id} nest deeper than ${MAX_JSON_DEPTH} levels; flatten them or store a JSON string.`,
          { details: { id } },
        );
      }
      this.extras = Object.freeze({ ...extras });
    }
    const idTime = timeOfId(id);
    this.at =
      idTime !== undefined && (createdAt === undefined || createdAt === idTime)
        ? undefined
        : (createdAt ?? Date.now());
  }

  /**
   * The trace and span of the work that made this session (an agent loop, a workflow), when it ran
   * under a tracing observer: read from the extras `trace.id` and `trace.span_id`. `undefined` otherwise.
   */
  get trace(): { readonly traceId: string; readonly spanId: string } | undefined {
    const traceId = this.extras["trace.id"];
    const spanId = this.extras["trace.span_id"];
    return typeof traceId === "string" && typeof spanId === "string" ? { traceId, spanId } : undefined;
  }

  /** When the operation ran, in Unix epoch milliseconds. */
  get createdAt(): number {
    return this.at ?? timeOfId(this.id)!;
  }

  /** Parent nodes in operation order (for a merge: `[self, other]`). Empty for a root. */
  get parents(): readonly LineageNode[] {
    const up = this.up;
    return up === undefined ? NO_PARENTS : up instanceof LineageNode ? [up] : (up as readonly LineageNode[]);
  }

  /** Number of parents, without building the array. */
  get parentCount(): number {
    const up = this.up;
    return up === undefined ? 0 : up instanceof LineageNode ? 1 : (up as readonly LineageNode[]).length;
  }

  /** Parent number `index`, without building the array. */
  parentAt(index: number): LineageNode | undefined {
    const up = this.up;
    if (up === undefined) return undefined;
    if (up instanceof LineageNode) return index === 0 ? up : undefined;
    return (up as readonly LineageNode[])[index];
  }
}

/** Anything with a lineage node, a chunk count and usage: a `Session`, for one. */
export interface LineageSource {
  readonly lineage: LineageNode;
  readonly length: number;
  readonly usage: Usage;
}

/** A node of a {@link LineageGraph}. */
export interface LineageGraphNode {
  readonly id: string;
  readonly op: LineageOp;
  readonly operator: string;
  readonly parents: readonly string[];
  readonly extras: LineageExtras;
  readonly createdAt: number;
  /** Chunks in the newest version known: exact for the sessions passed in, else the most seen. */
  readonly chunkCount: number;
  /** Usage, known only for the sessions passed in (`null` for ancestors reached through parents). */
  readonly usage: Usage | null;
}

/** A parent → child edge of a {@link LineageGraph}, labelled with the child's operation. */
export interface LineageGraphEdge {
  readonly from: string;
  readonly to: string;
  readonly op: LineageOp;
}

/** The lineage DAG reachable from some sessions, nodes in topological order (parents first). */
export interface LineageGraph {
  readonly nodes: readonly LineageGraphNode[];
  readonly edges: readonly LineageGraphEdge[];
}

/**
 * Walks the lineage DAG from `sources` (sessions or bare nodes) to every ancestor. Nodes come out
 * parents first, in a stable order; a session id reached twice appears once.
 */
export function lineageGraph(...sources: readonly (LineageSource | LineageNode)[]): LineageGraph {
  const known = new Map<string, { length: number; usage: Usage }>();
  const roots: LineageNode[] = [];
  for (const source of sources) {
    if (source instanceof LineageNode) {
      roots.push(source);
      continue;
    }
    roots.push(source.lineage);
    const prev = known.get(source.lineage.id);
    if (!prev || prev.length < source.length)
      known.set(source.lineage.id, { length: source.length, usage: source.usage });
  }
  const order: LineageNode[] = [];
  const state = new Map<string, "visiting" | "done">();
  const maxLength = new Map<string, number>();
  // Iterative post-order DFS: lineage chains can be far deeper than the call stack.
  for (const root of roots) {
    const stack: { node: LineageNode; next: number }[] = [{ node: root, next: 0 }];
    if (state.has(root.id)) continue;
    state.set(root.id, "visiting");
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const parent = top.node.parentAt(top.next++);
      if (parent === undefined) {
        stack.pop();
        state.set(top.node.id, "done");
        order.push(top.node);
        continue;
      }
      // What a child records tells how long its parent was at that moment: a fork starts as a
      // copy of its parent, and a merge records the shared prefix and each side's own chunks.
      const seenLength = parentLengthAt(top.node, top.next - 1);
      if (seenLength !== undefined)
        maxLength.set(parent.id, Math.max(maxLength.get(parent.id) ?? 0, seenLength));
      const seen = state.get(parent.id);
      if (seen === "visiting") {
        throw new OpenRathError("lineage_cycle", `Lineage has a cycle through session ${parent.id}.`, {
          details: { id: parent.id },
        });
      }
      if (seen === undefined) {
        state.set(parent.id, "visiting");
        stack.push({ node: parent, next: 0 });
      }
    }
  }
  const nodes: LineageGraphNode[] = [];
  const edges: LineageGraphEdge[] = [];
  for (const node of order) {
    const k = known.get(node.id);
    nodes.push({
      id: node.id,
      op: node.op,
      operator: node.operator,
      parents: node.parents.map((p) => p.id),
      extras: node.extras,
      createdAt: node.createdAt,
      chunkCount: k?.length ?? Math.max(node.length, maxLength.get(node.id) ?? 0),
      usage: k?.usage ?? null,
    });
    for (const parent of node.parents) edges.push({ from: parent.id, to: node.id, op: node.op });
  }
  return { nodes, edges };
}

/** The chunk count of `child`'s parent number `index` when `child` was made, where it can be told. */
function parentLengthAt(child: LineageNode, index: number): number | undefined {
  if (child.op === "fork") return child.length;
  if (child.op === "merge") {
    const shared = child.extras["merge.shared"];
    const side = child.extras[index === 0 ? "merge.left" : "merge.right"];
    if (typeof shared === "number" && typeof side === "number") return shared + side;
  }
  return undefined;
}

function toGraph(input: LineageGraph | LineageSource | readonly LineageSource[]): LineageGraph {
  if (Array.isArray(input)) return lineageGraph(...input);
  if ("nodes" in input && "edges" in input) return input as LineageGraph;
  return lineageGraph(input as LineageSource);
}

const ORIGINAL_KIND: Record<string, string> = {
  leaf_user: "leaf_user",
  leaf_system: "leaf_system",
  unknown: "unknown",
  create: "op_create",
  fork: "op_fork",
  detach: "op_detach",
  merge: "op_merge",
  loop: "op_session_loop",
  compress: "op_session_compress",
};

/** The Python original's `lineage_kind` string for `op` (`fork` → `op_fork`, `loop` → `op_session_loop`). */
export function originalLineageKind(op: LineageOp): string {
  return ORIGINAL_KIND[op] ?? `op_${op}`;
}

/**
 * The lineage as JSONL, one node per line in the Python original's export shape: `id`,
 * `parent_session_ids`, `lineage_operator`, `lineage_kind`, `lineage_extras` (`[[key, value]]`),
 * `chunk_count`, `cumulative_usage` (`{prompt_tokens, completion_tokens, total_tokens}` or null).
 */
export function lineageToJsonl(input: LineageGraph | LineageSource | readonly LineageSource[]): string {
  return toGraph(input)
    .nodes.map((n) =>
      JSON.stringify({
        id: n.id,
        parent_session_ids: n.parents,
        lineage_operator: n.operator,
        lineage_kind: originalLineageKind(n.op),
        lineage_extras: Object.entries(n.extras),
        chunk_count: n.chunkCount,
        cumulative_usage: n.usage
          ? {
              prompt_tokens: n.usage.promptTokens,
              completion_tokens: n.usage.completionTokens,
              total_tokens: n.usage.totalTokens,
            }
          : null,
      }),
    )
    .map((line) => `${line}\n`)
    .join("");
}

/** Short display form of a session id: its last eight hex digits (the random part of a UUID v7). */
export function shortId(id: string): string {
  return id.replace(/-/g, "").slice(-8);
}

function label(n: LineageGraphNode): string[] {
  const lines = [
    n.op,
    n.operator,
    `${shortId(n.id)} · ${n.chunkCount} chunk${n.chunkCount === 1 ? "" : "s"}`,
  ];
  if (n.usage && n.usage.totalTokens > 0) lines.push(`${n.usage.totalTokens} tokens`);
  return lines;
}

const MERMAID_SHAPE: Record<string, [string, string]> = {
  leaf_user: ["([", "])"],
  leaf_system: ["([", "])"],
  fork: ["{{", "}}"],
  merge: ["{", "}"],
  loop: ["[[", "]]"],
  compress: ["[/", "\\]"],
  detach: [">", "]"],
};

const MERMAID_STYLE: Record<string, string> = {
  fork: "fill:#e0f2fe,stroke:#0369a1",
  merge: "fill:#fef3c7,stroke:#b45309",
  loop: "fill:#dcfce7,stroke:#15803d",
  compress: "fill:#f3e8ff,stroke:#7e22ce",
  leaf_user: "fill:#f1f5f9,stroke:#334155",
  leaf_system: "fill:#f1f5f9,stroke:#334155",
};

/**
 * The lineage as a Mermaid flowchart, left to right. Fork, merge, loop, compress and leaf nodes
 * have distinct shapes and classes (`op-fork`, `op-merge`, …) for styling. Every label is
 * escaped: characters with a meaning in Mermaid (quotes, brackets, `#`, `%%`, newlines, …)
 * become entity codes, so no operator name or id can break out of its node.
 */
export function lineageToMermaid(input: LineageGraph | LineageSource | readonly LineageSource[]): string {
  const graph = toGraph(input);
  const ids = new Map(graph.nodes.map((n, i) => [n.id, `s${i}`]));
  const out = ["flowchart LR"];
  for (const n of graph.nodes) {
    const [open, close] = MERMAID_SHAPE[n.op] ?? ["[", "]"];
    out.push(`  ${ids.get(n.id)}${open}"${label(n).map(mermaidText).join("<br/>")}"${close}`);
  }
  for (const e of graph.edges) out.push(`  ${ids.get(e.from)} -->|"${mermaidText(e.op)}"| ${ids.get(e.to)}`);
  const byOp = new Map<string, string[]>();
  for (const n of graph.nodes) byOp.set(n.op, [...(byOp.get(n.op) ?? []), ids.get(n.id)!]);
  for (const [op, members] of byOp) {
    const name = `op-${op.replace(/[^a-zA-Z0-9_-]/g, "_")}`;
    out.push(`  class ${members.join(",")} ${name}`);
    const style = MERMAID_STYLE[op];
    if (style) out.push(`  classDef ${name} ${style}`);
  }
  return `${out.join("\n")}\n`;
}

const DOT_SHAPE: Record<string, string> = {
  leaf_user: "ellipse",
  leaf_system: "ellipse",
  fork: "hexagon",
  merge: "diamond",
  loop: "box3d",
  compress: "trapezium",
  detach: "cds",
};

/**
 * The lineage as a Graphviz DOT digraph, left to right, one shape per operation kind. Labels are
 * escaped (quotes, backslashes; control characters shown as `\u{…}`).
 */
export function lineageToDot(input: LineageGraph | LineageSource | readonly LineageSource[]): string {
  const graph = toGraph(input);
  const ids = new Map(graph.nodes.map((n, i) => [n.id, `s${i}`]));
  const esc = dotText;
  const out = ["digraph lineage {", "  rankdir=LR;", '  node [shape=box, fontname="Helvetica"];'];
  for (const n of graph.nodes) {
    out.push(
      `  ${ids.get(n.id)} [label="${label(n).map(esc).join("\\n")}", shape=${DOT_SHAPE[n.op] ?? "box"}];`,
    );
  }
  for (const e of graph.edges) out.push(`  ${ids.get(e.from)} -> ${ids.get(e.to)} [label="${esc(e.op)}"];`);
  out.push("}");
  return `${out.join("\n")}\n`;
}

/**
 * The lineage as a terminal tree, roots first. A node with several parents (a merge) is drawn
 * under its first parent and referenced as `↳ merged into #n` under the others. Nodes are numbered
 * `#1…` in topological order; with `ids: true` each line also shows the short session id, and
 * with `traces: true` the trace and span of the work that made the node, when it was traced
 * (`trace <trace id>/<span id>`, the ids a trace viewer looks up).
 * Ops, operators and ids are printed with control characters, line separators and bidirectional
 * overrides shown as `\u{…}` escapes, so each node stays on its own line.
 */
export function lineageToText(
  input: LineageGraph | LineageSource | readonly LineageSource[],
  options: { ids?: boolean; traces?: boolean } = {},
): string {
  const graph = toGraph(input);
  const number = new Map(graph.nodes.map((n, i) => [n.id, i + 1]));
  const children = new Map<string, LineageGraphNode[]>();
  const refs = new Map<string, LineageGraphNode[]>();
  for (const n of graph.nodes) {
    n.parents.forEach((p, i) => {
      const map = i === 0 ? children : refs;
      map.set(p, [...(map.get(p) ?? []), n]);
    });
  }
  const line = (n: LineageGraphNode) => {
    const facts = [`${n.chunkCount} chunk${n.chunkCount === 1 ? "" : "s"}`];
    if (n.usage && n.usage.totalTokens > 0) facts.push(`${n.usage.totalTokens} tokens`);
    const id = options.ids ? ` ${terminalText(shortId(n.id))}` : "";
    const traceId = n.extras["trace.id"];
    const spanId = n.extras["trace.span_id"];
    const traced =
      options.traces && typeof traceId === "string" && typeof spanId === "string"
        ? ` trace ${terminalText(traceId)}/${terminalText(spanId)}`
        : "";
    return `#${number.get(n.id)}${id} ${terminalText(n.op)} ${terminalText(n.operator)} (${facts.join(", ")})${traced}`;
  };
  const out: string[] = [];
  const walk = (n: LineageGraphNode, prefix: string, last: boolean, root: boolean) => {
    out.push(root ? line(n) : `${prefix}${last ? "└─ " : "├─ "}${line(n)}`);
    const below = root ? "" : `${prefix}${last ? "   " : "│  "}`;
    const items: ({ node: LineageGraphNode } | { ref: LineageGraphNode })[] = [
      ...(children.get(n.id) ?? []).map((node) => ({ node })),
      ...(refs.get(n.id) ?? []).map((ref) => ({ ref })),
    ];
    items.forEach((item, i) => {
      const end = i === items.length - 1;
      if ("node" in item) walk(item.node, below, end, false);
      else
        out.push(
          `${below}${end ? "└─ " : "├─ "}↳ ${terminalText(item.ref.op)} into #${number.get(item.ref.id)}`,
        );
    });
  };
  for (const n of graph.nodes) if (n.parents.length === 0) walk(n, "", true, true);
  return `${out.join("\n")}\n`;
}

/** Where a chunk came from: see {@link provenance}. */
export interface Provenance {
  readonly chunk: Chunk;
  /** Position of the chunk in the session. */
  readonly index: number;
  /** The session (branch) that first appended the chunk. */
  readonly branch: string;
  /** Who wrote the chunk, if recorded. */
  readonly author?: string;
  /** For a tool result: the tool, the call id and the assistant chunk that made the call. */
  readonly tool?: { readonly name: string; readonly callId: string; readonly callChunkId?: string };
  /**
   * The memory recall the agent run that wrote the chunk used (see {@link creditedRecall}): its
   * query and hits. Absent for chunks of runs that did not recall.
   */
  readonly memory?: RecallCredit;
  /**
   * Lineage nodes from the branch that appended the chunk down to the session asked about, both
   * included. Holds only the session's own node when the branch is not among its ancestors (the
   * chunk arrived through a detach or was copied in).
   */
  readonly path: readonly LineageNode[];
}

/**
 * Which branch, agent and tool produced chunk `chunkId` of `session`.
 *
 * @throws {OpenRathError} code `chunk_not_found` if the session has no chunk with that id.
 */
export function provenance(
  session: { readonly chunks: readonly Chunk[]; readonly lineage: LineageNode },
  chunkId: string,
): Provenance {
  const chunks = session.chunks;
  const index = chunks.findIndex((c) => c.id === chunkId);
  if (index < 0) {
    throw new OpenRathError(
      "chunk_not_found",
      `Session ${session.lineage.id} has no chunk ${JSON.stringify(chunkId)}.`,
      {
        details: { sessionId: session.lineage.id, chunkId },
      },
    );
  }
  const chunk = chunks[index]!;
  let tool: Provenance["tool"];
  if (chunk.kind === "tool_result") {
    let callChunkId: string | undefined;
    for (let i = index - 1; i >= 0 && callChunkId === undefined; i--) {
      const c = chunks[i]!;
      if (c.kind === "assistant" && c.toolCalls?.some((t) => t.id === chunk.toolCallId)) callChunkId = c.id;
    }
    tool = { name: chunk.name, callId: chunk.toolCallId, ...(callChunkId ? { callChunkId } : {}) };
  }
  const path = pathFrom(session.lineage, chunk.sessionId);
  const memory = creditedRecall(chunks, index, path[0]);
  return {
    chunk,
    index,
    branch: chunk.sessionId,
    ...(memory ? { memory } : {}),
    ...(chunk.author !== undefined ? { author: chunk.author } : {}),
    ...(tool ? { tool } : {}),
    path,
  };
}

/** Nearest-first search up the parents for `targetId`; returns the path target → start. */
function pathFrom(start: LineageNode, targetId: string): LineageNode[] {
  const via = new Map<string, LineageNode | null>([[start.id, null]]);
  const queue: LineageNode[] = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    if (node.id === targetId) {
      const path: LineageNode[] = [];
      for (let n: LineageNode | null | undefined = node; n; n = via.get(n.id)) path.push(n);
      return path;
    }
    for (const parent of node.parents) {
      if (!via.has(parent.id)) {
        via.set(parent.id, node);
        queue.push(parent);
      }
    }
  }
  return [start];
}
