import type ELK from "elkjs/lib/elk.bundled.js";

/** Node size in the drawing, in CSS pixels. */
export const NODE_WIDTH = 184;
export const NODE_HEIGHT = 64;

/**
 * Above this many nodes the layout trades polish for time (scripts/graph-bench.ts): no wrapping,
 * one crossing-minimisation pass, Brandes-Koepf placement; and the graph opens on its final
 * session rather than fitted whole.
 */
export const LARGE_GRAPH = 300;

export interface Placed {
  readonly x: number;
  readonly y: number;
}

export type LayoutNodes = readonly { id: string; parents: readonly string[] }[];

/**
 * Lays the DAG out left to right with ELK's layered algorithm (parents left of children, edge
 * crossings reduced, long edges kept straight); returns each node's top-left corner. Runs in the
 * layout worker, and in Node for scripts/graph-bench.ts.
 */
export async function layoutWith(
  elk: InstanceType<typeof ELK>,
  nodes: LayoutNodes,
  aspectRatio: number,
): Promise<Map<string, Placed>> {
  const ids = new Set(nodes.map((n) => n.id));
  const large = nodes.length > LARGE_GRAPH;
  const graph = (options: Record<string, string>) => ({
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.layered.spacing.nodeNodeBetweenLayers": "56",
      "elk.spacing.nodeNode": "22",
      "elk.layered.crossingMinimization.strategy": "LAYER_SWEEP",
      // React Flow draws the edges itself; ELK's cheapest routing is enough for node spacing.
      "elk.edgeRouting": "POLYLINE",
      // Network simplex places nodes best but grows steeply; past a few dozen nodes (and on
      // deep chains, where it overflows the stack) Brandes-Koepf.
      "elk.layered.nodePlacement.strategy": nodes.length > 40 ? "BRANDES_KOEPF" : "NETWORK_SIMPLEX",
      ...(large
        ? {
            // Measured on 2,000 nodes: a fifth less time than the defaults, layers unchanged.
            "elk.layered.thoroughness": "1",
            // A lineage has no cycles to break: the cheapest breaker.
            "elk.layered.cycleBreaking.strategy": "DEPTH_FIRST",
            // A lineage is one component: skip looking for others.
            "elk.separateConnectedComponents": "false",
          }
        : {}),
      ...options,
    },
    children: nodes.map((n) => ({ id: n.id, width: NODE_WIDTH, height: NODE_HEIGHT })),
    edges: nodes.flatMap((n) =>
      n.parents
        .filter((p) => ids.has(p) && p !== n.id)
        .map((p, i) => ({ id: `${p}->${n.id}#${i}`, sources: [p], targets: [n.id] })),
    ),
  });
  let result: Awaited<ReturnType<typeof elk.layout>>;
  try {
    // A long chain wraps into rows near the window's shape, so it opens readable when fitted; a
    // large graph opens on its final session instead, and wrapping it costs a fifth more.
    result = await elk.layout(
      graph(
        large
          ? {}
          : { "elk.layered.wrapping.strategy": "MULTI_EDGE", "elk.aspectRatio": aspectRatio.toFixed(2) },
      ),
    );
  } catch (error) {
    if (large) throw error;
    // The wrapping pass recurses per layer; a graph too deep for it is laid out unwrapped.
    result = await elk.layout(graph({}));
  }
  const out = new Map<string, Placed>();
  for (const child of result.children ?? []) out.set(child.id, { x: child.x ?? 0, y: child.y ?? 0 });
  return out;
}
