import "@xyflow/react/dist/style.css";
import "../../src/styles.css";
import { createRoot } from "react-dom/client";
import { LineageView } from "../../src/graph/lineage-view.js";
import { manyRounds } from "../many-rounds.js";

/**
 * Studio's graph alone, on a lineage of `?size=` nodes (default 2,000), for scripts/graph-bench.ts:
 * it records when the first node is drawn and the longest main-thread task until then.
 */
const size = Number(new URLSearchParams(location.search).get("size") ?? 2000);
const marks = { drawnAt: 0, drawn: 0, longestTask: 0, tasksOver50: 0 };
Object.assign(window, { graphBench: marks });
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    marks.longestTask = Math.max(marks.longestTask, entry.duration);
    if (entry.duration > 50) marks.tasksOver50 += 1;
  }
}).observe({ type: "longtask", buffered: true });
new MutationObserver((_, observer) => {
  const drawn = document.querySelectorAll(".lineage-node").length;
  if (drawn > 0) {
    marks.drawnAt = performance.now();
    marks.drawn = drawn;
    observer.disconnect();
  }
}).observe(document.body, { childList: true, subtree: true });
const data = manyRounds(size, { traced: true });
createRoot(document.getElementById("root")!).render(
  <div className="graph-screen">
    <LineageView data={data} />
  </div>,
);
