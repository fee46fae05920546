import type { LayoutNodes, Placed } from "./elk-layout.js";
import type { LayoutReply, LayoutRequest } from "./layout.worker.js";

export { LARGE_GRAPH, NODE_HEIGHT, NODE_WIDTH, type Placed, RUN_SIZE, runsOf } from "./elk-layout.js";

let worker: Worker | undefined;
let next = 0;
const pending = new Map<
  number,
  { resolve: (placed: Map<string, Placed>) => void; reject: (e: Error) => void }
>();

/** The layout worker, started on first use (ELK is most of the bundle, and only the graph needs it). */
function layoutWorker(): Worker {
  if (worker) return worker;
  worker = new Worker(new URL("./layout.worker.ts", import.meta.url), { type: "module", name: "layout" });
  worker.onmessage = ({ data }: MessageEvent<LayoutReply>) => {
    const waiting = pending.get(data.id);
    pending.delete(data.id);
    if (!waiting) return;
    if ("error" in data) waiting.reject(new Error(`layout failed: ${data.error}`));
    else waiting.resolve(new Map(data.placed.map(([id, x, y]) => [id, { x, y }])));
  };
  worker.onerror = (event) => {
    // The worker could not start (or died): every layout still waiting fails, the next starts anew.
    for (const waiting of pending.values()) waiting.reject(new Error(`layout worker: ${event.message}`));
    pending.clear();
    worker?.terminate();
    worker = undefined;
  };
  return worker;
}

/** Starts the layout worker ahead of the first layout, so ELK has loaded by the time data arrives. */
export function prepareLayout(): void {
  layoutWorker();
}

/**
 * Lays the DAG out in the layout worker (`layoutWith` of elk-layout.ts, or `layoutRuns` with a
 * `part`); returns each node's top-left corner. Timed as the User Timing measure
 * "studio graph layout" (with the part after it).
 */
export function layoutLineage(
  nodes: LayoutNodes,
  aspectRatio = 1.6,
  part?: "last" | "all",
): Promise<Map<string, Placed>> {
  const start = performance.now();
  const id = next++;
  const request: LayoutRequest = {
    id,
    nodes: nodes.map((n) => ({ id: n.id, parents: n.parents })),
    aspectRatio,
    ...(part ? { part } : {}),
  };
  return new Promise<Map<string, Placed>>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    layoutWorker().postMessage(request);
  }).then((placed) => {
    performance.measure(part ? `studio graph layout ${part}` : "studio graph layout", {
      start,
      end: performance.now(),
    });
    return placed;
  });
}
