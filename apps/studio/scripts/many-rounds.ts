import type { LineageGraphNode } from "@openrath/core";
import type { LineageViewData, ViewChunk } from "@openrath/lineage-view";

/**
 * A lineage like many MAMS rounds one after another, for measuring the graph at size: each round
 * plans (a loop), forks to two to four specialists whose branches run one to three loops (some
 * with a memory recall), merges them pairwise, compresses, selects and answers, and the next
 * round starts from that answer. Deterministic for a seed. With `traced`, every node carries the
 * `trace.id`/`trace.span_id` extras a tracing observer writes.
 */
export function manyRounds(size: number, options: { seed?: number; traced?: boolean } = {}): LineageViewData {
  let state = options.seed ?? 25;
  const random = () => {
    // A small linear congruential generator: the same graph for the same seed.
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const hex = (length: number) =>
    Array.from({ length }, () => Math.floor(random() * 16).toString(16)).join("");
  const nodes: LineageGraphNode[] = [];
  const chunks: ViewChunk[] = [];
  let traceId = hex(32);
  const add = (op: string, operator: string, parents: string[], extras: Record<string, unknown> = {}) => {
    const id = `s-${String(nodes.length).padStart(5, "0")}-${hex(8)}`;
    const createdAt = 1_764_000_000_000 + nodes.length * 1_000;
    const trace = options.traced ? { "trace.id": traceId, "trace.span_id": hex(16) } : {};
    nodes.push({
      id,
      op,
      operator,
      parents,
      extras: { ...extras, ...trace } as LineageGraphNode["extras"],
      createdAt,
      chunkCount: nodes.length + 1,
      usage: { promptTokens: 120, completionTokens: 30, totalTokens: 150 },
    });
    chunks.push({
      id: `c-${id}`,
      kind: "assistant",
      sessionId: id,
      createdAt,
      author: operator,
      content: `${operator} wrote round ${nodes.length} of the findings.`,
    });
    return id;
  };
  let last = add("leaf_user", "Session.user", []);
  for (let round = 0; nodes.length < size; round++) {
    if (options.traced) traceId = hex(32);
    const planned = add("loop", "Agent.planner", [last]);
    const branches: string[] = [];
    const specialists = 2 + Math.floor(random() * 3);
    for (let s = 0; s < specialists; s++) {
      let tip = add("fork", `Session.fork planner→specialist${s}`, [planned]);
      const turns = 1 + Math.floor(random() * 3);
      for (let t = 0; t < turns; t++) {
        if (random() < 0.2) tip = add("memory", "Memory.recall", [tip]);
        tip = add("loop", `Agent.specialist${s}`, [tip]);
      }
      branches.push(tip);
    }
    let merged = branches[0]!;
    for (const right of branches.slice(1))
      merged = add("merge", "Session.merge", [merged, right], {
        "merge.shared": 2,
        "merge.left": 1,
        "merge.right": 1,
      });
    const summary = add("compress", "Compressor", [merged]);
    const routed = add("select", "Selector.router", [summary]);
    const answer = add("loop", random() < 0.85 ? "Agent.writer" : "Agent.reviewer", [routed]);
    last = add("workflow", `Workflow.mams round ${round + 1}`, [answer]);
  }
  const edges = nodes.flatMap((n) => n.parents.map((p) => ({ from: p, to: n.id, op: n.op })));
  return { graph: { nodes, edges }, chunks, finalId: last };
}
