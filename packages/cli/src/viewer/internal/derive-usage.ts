import { type Chunk, type LineageGraph, sumUsage, type Usage } from "@openrath/core";

/**
 * Usage of the sessions a run never handed back (forks and merges reached only through lineage),
 * computed from their transcripts rebuilt out of their parents': a fork is its parent's first
 * chunks plus its own, a merge the left parent's chunks then the right's after the shared prefix.
 * A transcript is trusted only when its length matches the node's chunk count.
 *
 * @param transcripts - the known transcripts by session id (the recorded sessions').
 * @param own - chunks by the session that appended them, in order.
 * @returns usage by session id, for the nodes whose usage was unknown and could be rebuilt.
 */
export function deriveUsage(
  graph: LineageGraph,
  transcripts: ReadonlyMap<string, readonly Chunk[]>,
  own: ReadonlyMap<string, readonly Chunk[]>,
): Map<string, Usage> {
  const rebuilt = new Map<string, readonly Chunk[]>(transcripts);
  const usage = new Map<string, Usage>();
  // Nodes come parents first, so every parent is settled before its children.
  for (const node of graph.nodes) {
    if (rebuilt.has(node.id)) continue;
    const mine = own.get(node.id) ?? [];
    let chunks: readonly Chunk[] | undefined;
    if (node.op === "fork" && node.parents.length === 1) {
      const parent = rebuilt.get(node.parents[0]!);
      const base = node.chunkCount - mine.length;
      if (parent && base >= 0 && parent.length >= base) chunks = [...parent.slice(0, base), ...mine];
    } else if (node.op === "merge" && node.parents.length === 2) {
      const left = rebuilt.get(node.parents[0]!);
      const right = rebuilt.get(node.parents[1]!);
      const shared = node.extras["merge.shared"];
      const l = node.extras["merge.left"];
      const r = node.extras["merge.right"];
      if (left && right && typeof shared === "number" && typeof l === "number" && typeof r === "number") {
        if (left.length >= shared + l && right.length >= shared + r) {
          chunks = [...left.slice(0, shared + l), ...right.slice(shared, shared + r), ...mine];
        }
      }
    }
    if (chunks && chunks.length === node.chunkCount) {
      rebuilt.set(node.id, chunks);
      if (node.usage === null) usage.set(node.id, sumUsage(chunks));
    }
  }
  return usage;
}
