import type { LineageGraph, LineageGraphNode } from "@openrath/core";

/** One chunk as the renderer shows it: the session JSON's fields (kind-specific ones beside these). */
export interface ViewChunk {
  readonly id: string;
  readonly kind: string;
  readonly sessionId: string;
  readonly createdAt: number;
  readonly author?: string;
  readonly content?: string | null;
  readonly name?: string;
  readonly toolCallId?: string;
  readonly isError?: boolean;
  readonly data?: unknown;
  readonly model?: string;
  readonly trust?: string;
  readonly usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
  readonly toolCalls?: readonly { id: string; function: { name: string; arguments: string } }[];
  readonly [key: string]: unknown;
}

/** What the graph renderer draws: the lineage DAG, the chunks, the final session. */
export interface LineageViewData {
  readonly graph: LineageGraph;
  readonly chunks: readonly ViewChunk[];
  /** The session the search's paths lead to (the run's newest), or null. */
  readonly finalId: string | null;
  /** Known transcripts by session id (sessions seen whole), for merges' sides. */
  readonly transcripts?: ReadonlyMap<string, readonly ViewChunk[]>;
}

interface LineageRecord {
  readonly id: string;
  readonly op: string;
  readonly operator: string;
  readonly parents?: readonly string[];
  readonly extras?: Record<string, unknown>;
  readonly length?: number;
  readonly createdAt?: number;
}

/** A session as the server's JSON holds it (`Session.toJSON()` with trust labels). */
export interface SessionJsonLike {
  readonly id: string;
  readonly chunks: readonly unknown[];
  readonly lineage: readonly unknown[];
}

/**
 * The lineage graph of a run from its sessions (one per checkpoint): every lineage record once
 * (with the longest length seen), parents first; every chunk once; usage summed from the chunks
 * of the sessions seen whole.
 */
export function lineageFromSessions(sessions: readonly SessionJsonLike[]): LineageViewData {
  const records = new Map<string, LineageRecord>();
  const chunks = new Map<string, ViewChunk>();
  const transcripts = new Map<string, readonly ViewChunk[]>();
  for (const session of sessions) {
    for (const raw of session.lineage as LineageRecord[]) {
      const known = records.get(raw.id);
      if (!known || (raw.length ?? 0) > (known.length ?? 0)) records.set(raw.id, raw);
    }
    const list = session.chunks as ViewChunk[];
    for (const chunk of list) if (!chunks.has(chunk.id)) chunks.set(chunk.id, chunk);
    const prev = transcripts.get(session.id);
    if (!prev || prev.length < list.length) transcripts.set(session.id, list);
  }
  // Parents first, iteratively (deep chains must not overflow the stack).
  const order: LineageRecord[] = [];
  const done = new Set<string>();
  const sorted = [...records.values()].sort((a, b) => (a.createdAt ?? 0) - (b.createdAt ?? 0));
  for (const start of sorted) {
    const stack: [LineageRecord, number][] = [[start, 0]];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const [record, i] = top;
      if (done.has(record.id)) {
        stack.pop();
        continue;
      }
      const parents = (record.parents ?? []).filter((p) => records.has(p) && !done.has(p));
      if (i < parents.length) {
        top[1] = i + 1;
        const parent = records.get(parents[i]!)!;
        if (!stack.some(([r]) => r.id === parent.id)) stack.push([parent, 0]);
        continue;
      }
      done.add(record.id);
      order.push(record);
      stack.pop();
    }
  }
  // Transcripts of the sessions not seen whole, rebuilt parents first: a fork or a derived
  // session is its parent's first `length` chunks plus its own, a merge the left parent's chunks
  // then the right's after the shared prefix, plus its own.
  const all = new Map(transcripts);
  const own = new Map<string, ViewChunk[]>();
  for (const chunk of chunks.values()) own.set(chunk.sessionId, [...(own.get(chunk.sessionId) ?? []), chunk]);
  for (const r of order) {
    if (all.has(r.id)) continue;
    const mine = own.get(r.id) ?? [];
    const parents = (r.parents ?? []).map((p) => all.get(p));
    const extras = r.extras ?? {};
    const [shared, left, right] = [extras["merge.shared"], extras["merge.left"], extras["merge.right"]];
    if (r.op === "merge" && parents.length === 2 && parents[0] && parents[1]) {
      if (typeof shared === "number" && typeof left === "number" && typeof right === "number")
        all.set(r.id, [
          ...parents[0].slice(0, shared + left),
          ...parents[1].slice(shared, shared + right),
          ...mine,
        ]);
    } else if (parents.length === 1 && parents[0]) {
      all.set(r.id, [...parents[0].slice(0, r.length ?? parents[0].length), ...mine]);
    } else if (parents.length === 0) {
      all.set(r.id, mine);
    }
  }
  const nodes: LineageGraphNode[] = order.map((r) => {
    const transcript = all.get(r.id);
    return {
      id: r.id,
      op: r.op as LineageGraphNode["op"],
      operator: r.operator,
      parents: [...(r.parents ?? [])],
      extras: (r.extras ?? {}) as LineageGraphNode["extras"],
      createdAt: r.createdAt ?? 0,
      chunkCount: transcript?.length ?? r.length ?? 0,
      usage: transcript ? sumUsage(transcript) : null,
    };
  });
  const edges = nodes.flatMap((n) =>
    n.parents.filter((p) => records.has(p)).map((p) => ({ from: p, to: n.id, op: n.op })),
  );
  const hasChild = new Set(edges.map((e) => e.from));
  const newest = sessions.length > 0 ? sessions[sessions.length - 1]!.id : undefined;
  const finalId =
    newest && records.has(newest)
      ? newest
      : (nodes.filter((n) => !hasChild.has(n.id)).sort((a, b) => b.createdAt - a.createdAt)[0]?.id ?? null);
  return { graph: { nodes, edges }, chunks: [...chunks.values()], finalId, transcripts: all };
}

export function sumUsage(chunks: readonly ViewChunk[]) {
  let promptTokens = 0;
  let completionTokens = 0;
  let totalTokens = 0;
  for (const c of chunks) {
    if (!c.usage) continue;
    promptTokens += c.usage.promptTokens;
    completionTokens += c.usage.completionTokens;
    totalTokens += c.usage.totalTokens;
  }
  return { promptTokens, completionTokens, totalTokens };
}

/** Children by node id. */
export function childrenOf(graph: LineageGraph): Map<string, string[]> {
  const out = new Map<string, string[]>(graph.nodes.map((n) => [n.id, []]));
  for (const e of graph.edges) out.get(e.from)?.push(e.to);
  return out;
}

/**
 * Every path from `from` down to `to`: the nodes that descend from `from` and lead to `to`, and
 * the edges between them (all of them, not only the shortest path).
 */
export function allPaths(graph: LineageGraph, from: string, to: string | null) {
  const kids = childrenOf(graph);
  const parents = new Map(graph.nodes.map((n) => [n.id, n.parents]));
  const down = new Set<string>([from]);
  const queue = [from];
  while (queue.length > 0) {
    for (const c of kids.get(queue.shift()!) ?? []) {
      if (down.has(c)) continue;
      down.add(c);
      queue.push(c);
    }
  }
  if (to === null || !down.has(to)) return { nodes: new Set([from]), edges: new Set<string>() };
  const up = new Set<string>([to]);
  queue.push(to);
  while (queue.length > 0) {
    for (const p of parents.get(queue.shift()!) ?? []) {
      if (up.has(p)) continue;
      up.add(p);
      queue.push(p);
    }
  }
  const nodes = new Set([...down].filter((id) => up.has(id)));
  const edges = new Set(
    graph.edges.filter((e) => nodes.has(e.from) && nodes.has(e.to)).map((e) => `${e.from}->${e.to}`),
  );
  return { nodes, edges };
}

/** The text a search looks in: content, tool calls and their arguments, names, event data. */
export function haystack(c: ViewChunk): string {
  const parts: string[] = [];
  if (typeof c.content === "string") parts.push(c.content);
  for (const t of c.toolCalls ?? []) parts.push(t.function.name, t.function.arguments);
  if (c.name) parts.push(c.name);
  if (c.data !== undefined) parts.push(JSON.stringify(c.data));
  return parts.join("\n");
}

/** What a merge node merged: the shared prefix and each side's chunks, or `null` when not known. */
export function mergeSides(data: LineageViewData, node: LineageGraphNode) {
  if (node.op !== "merge" || node.parents.length !== 2) return null;
  const shared = node.extras["merge.shared"];
  const l = node.extras["merge.left"];
  const r = node.extras["merge.right"];
  if (typeof shared !== "number" || typeof l !== "number" || typeof r !== "number") return null;
  const left = data.transcripts?.get(node.parents[0]!);
  const right = data.transcripts?.get(node.parents[1]!);
  if (!left || !right || left.length < shared + l || right.length < shared + r) return null;
  return {
    shared: left.slice(0, shared),
    left: left.slice(shared, shared + l),
    right: right.slice(shared, shared + r),
  };
}
