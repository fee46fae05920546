import { lineageFromSessions, type SessionJsonLike } from "@openrath/lineage-view";
import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { describeError, useClient } from "../api.js";
import { shortId } from "../format.js";
import { prepareLayout } from "../graph/layout.js";
import { LineageView } from "../graph/lineage-view.js";
import { href } from "../router.js";

/** The sessions a run went through: one per checkpoint (a compression drops older chunks). */
export function useRunLineage(runId: string | undefined) {
  const client = useClient();
  return useQuery({
    queryKey: ["runs", "lineage", runId],
    enabled: runId !== undefined,
    queryFn: async () => {
      const run = await client.runs.get(runId!);
      const last = run.lastCheckpoint;
      // The newest 200 checkpoints: enough for any graph a person reads, bounded for the server.
      const sequences = Array.from({ length: Math.min(last, 200) }, (_, i) => last - i).reverse();
      const sessions = await Promise.all(
        sequences.map((sequence) => client.runs.session(runId!, { sequence })),
      );
      if (sessions.length === 0) sessions.push(await client.runs.session(runId!));
      return { run, data: lineageFromSessions(sessions as unknown as SessionJsonLike[]) };
    },
  });
}

export function GraphScreen({ runId }: { runId: string }) {
  const lineage = useRunLineage(runId);
  // ELK loads in the layout worker while the checkpoints are read.
  useEffect(prepareLayout, []);
  return (
    <section aria-labelledby="graph-title" className="graph-screen">
      <div className="screen-head">
        <h1 id="graph-title">
          Session graph of run <a href={href({ screen: "run", runId })}>{shortId(runId)}</a>
        </h1>
        {lineage.data ? (
          <span className="muted">
            {lineage.data.data.graph.nodes.length} sessions · {lineage.data.data.chunks.length} chunks
          </span>
        ) : null}
      </div>
      {lineage.error ? (
        <p className="error" role="alert">
          {describeError(lineage.error)}
        </p>
      ) : null}
      {lineage.data ? <LineageView data={lineage.data.data} /> : <p className="muted">Loading…</p>}
    </section>
  );
}
