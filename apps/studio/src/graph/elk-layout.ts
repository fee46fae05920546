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

/**
 * The nodes (in the given topological order) cut into runs of at least `size` nodes at sessions
 * no edge passes over: every edge between two runs starts at the last node of one and ends in the
 * next, so ELK can lay each run out on its own and then the runs as a chain.
 */
export function runsOf(nodes: LayoutNodes, size: number): LayoutNodes[] {
  const at = new Map(nodes.map((n, i) => [n.id, i]));
  // over[i] > 0: some edge passes over node i (from before it to after it).
  const over = new Array<number>(nodes.length + 1).fill(0);
  nodes.forEach((n, i) => {
    for (const p of n.parents) {
      const from = at.get(p);
      if (from !== undefined && i - from > 1) {
        over[from + 1]! += 1;
        over[i]! -= 1;
      }
    }
  });
  const runs: LayoutNodes[] = [];
  let run: LayoutNodes[number][] = [];
  let passing = 0;
  nodes.forEach((n, i) => {
    passing += over[i]!;
    run.push(n);
    if (passing === 0 && run.length >= size && i < nodes.length - 1 && (over[i + 1] ?? 0) === 0) {
      runs.push(run);
      run = [];
    }
  });
  if (run.length > 0) runs.push(run);
  return runs;
}

/** Nodes per run when a large graph is laid out run by run. */
export const RUN_SIZE = 60;

const RUN_OPTIONS = {
  "elk.algorithm": "layered",
  "elk.direction": "RIGHT",
  "elk.layered.spacing.nodeNodeBetweenLayers": "56",
  "elk.spacing.nodeNode": "22",
  "elk.edgeRouting": "POLYLINE",
  "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
  "elk.layered.cycleBreaking.strategy": "DEPTH_FIRST",
  "elk.separateConnectedComponents": "false",
  "elk.padding": "[top=12,left=12,bottom=12,right=12]",
};

const runGraph = (id: string, run: LayoutNodes) => {
  const ids = new Set(run.map((n) => n.id));
  return {
    id,
    layoutOptions: RUN_OPTIONS,
    children: run.map((n) => ({ id: n.id, width: NODE_WIDTH, height: NODE_HEIGHT })),
    edges: run.flatMap((n) =>
      n.parents
        .filter((p) => ids.has(p) && p !== n.id)
        .map((p, i) => ({ id: `${p}->${n.id}#${i}`, sources: [p], targets: [n.id] })),
    ),
  };
};

/**
 * A large graph laid out by ELK run by run ({@link runsOf}): `"last"` lays out only the run that
 * ends in the newest sessions (fast, drawn first), `"all"` every run as a compound node of one ELK
 * graph, the runs chained and wrapped to the window's shape. The last run's nodes sit the same
 * relative to each other in both, so the page can swap one for the other without a jump.
 */
export async function layoutRuns(
  elk: InstanceType<typeof ELK>,
  nodes: LayoutNodes,
  aspectRatio: number,
  part: "last" | "all",
): Promise<Map<string, Placed>> {
  const runs = runsOf(nodes, RUN_SIZE);
  const out = new Map<string, Placed>();
  if (part === "last") {
    const result = await elk.layout(runGraph("root", runs[runs.length - 1]!));
    for (const child of result.children ?? []) out.set(child.id, { x: child.x ?? 0, y: child.y ?? 0 });
    return out;
  }
  const runOf = new Map<string, number>();
  runs.forEach((run, k) => {
    for (const n of run) runOf.set(n.id, k);
  });
  const links = new Set<string>();
  for (const n of nodes)
    for (const p of n.parents) {
      const [a, b] = [runOf.get(p), runOf.get(n.id)];
      if (a !== undefined && b !== undefined && a !== b) links.add(`${a}>${b}`);
    }
  const result = await elk.layout({
    id: "root",
    layoutOptions: {
      ...RUN_OPTIONS,
      "elk.hierarchyHandling": "SEPARATE_CHILDREN",
      "elk.layered.wrapping.strategy": "MULTI_EDGE",
      "elk.aspectRatio": aspectRatio.toFixed(2),
    },
    children: runs.map((run, k) => runGraph(`\u0000run ${k}`, run)),
    edges: [...links].map((link) => {
      const [a, b] = link.split(">");
      return { id: `\u0000link ${link}`, sources: [`\u0000run ${a}`], targets: [`\u0000run ${b}`] };
    }),
  });
  for (const run of result.children ?? [])
    for (const child of run.children ?? [])
      out.set(child.id, { x: (run.x ?? 0) + (child.x ?? 0), y: (run.y ?? 0) + (child.y ?? 0) });
  return out;
}
