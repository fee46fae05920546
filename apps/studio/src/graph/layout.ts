import type ELK from "elkjs/lib/elk.bundled.js";

/** Node size in the drawing, in CSS pixels. */
export const NODE_WIDTH = 184;
export const NODE_HEIGHT = 64;

export interface Placed {
  readonly x: number;
  readonly y: number;
}

let engine: InstanceType<typeof ELK> | undefined;

/**
 * Lays the DAG out left to right with ELK's layered algorithm (parents left of children, edge
 * crossings reduced, long edges kept straight); returns each node's top-left corner.
 */
export async function layoutLineage(
  nodes: readonly { id: string; parents: readonly string[] }[],
  aspectRatio = 1.6,
): Promise<Map<string, Placed>> {
  const start = performance.now();
  if (!engine) {
    // Loaded on first use: the layout engine is most of the bundle, and only the graph needs it.
    const { default: Elk } = await import("elkjs/lib/elk.bundled.js");
    engine = new Elk();
  }
  const out = await layoutWith(engine, nodes, aspectRatio);
  performance.measure("studio graph layout", { start, end: performance.now() });
  return out;
}

export async function layoutWith(
  elk: InstanceType<typeof ELK>,
  nodes: readonly { id: string; parents: readonly string[] }[],
  aspectRatio: number,
): Promise<Map<string, Placed>> {
  const ids = new Set(nodes.map((n) => n.id));
  const large = nodes.length > 40;
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
    result = await elk.layout(
      graph({
        // Network simplex places nodes best but grows steeply; past a few hundred nodes (and on
        // deep chains, where it overflows the stack) Brandes-Koepf.
        "elk.layered.nodePlacement.strategy": large ? "BRANDES_KOEPF" : "NETWORK_SIMPLEX",
        // A long chain wraps into rows near the window's shape, so it opens readable when fitted.
        "elk.layered.wrapping.strategy": "MULTI_EDGE",
        "elk.aspectRatio": aspectRatio.toFixed(2),
      }),
    );
  } catch {
    // The wrapping pass recurses per layer; a graph too deep for it is laid out unwrapped.
    result = await elk.layout(graph({ "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF" }));
  }
  const out = new Map<string, Placed>();
  for (const child of result.children ?? []) out.set(child.id, { x: child.x ?? 0, y: child.y ?? 0 });
  return out;
}
