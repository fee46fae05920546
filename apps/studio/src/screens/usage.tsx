import type { ViewChunk } from "@openrath/lineage-view";
import { useQuery } from "@tanstack/react-query";
import { useClient } from "../api.js";
import { shortId, tokens } from "../format.js";
import { href } from "../router.js";
import { useRunLineage } from "./graph.js";

interface Row {
  readonly key: string;
  readonly prompt: number;
  readonly completion: number;
  readonly calls: number;
}

function group(chunks: readonly ViewChunk[], keyOf: (c: ViewChunk) => string): Row[] {
  const rows = new Map<string, { prompt: number; completion: number; calls: number }>();
  for (const c of chunks) {
    if (!c.usage) continue;
    const key = keyOf(c);
    const row = rows.get(key) ?? { prompt: 0, completion: 0, calls: 0 };
    row.prompt += c.usage.promptTokens;
    row.completion += c.usage.completionTokens;
    row.calls += 1;
    rows.set(key, row);
  }
  return [...rows.entries()]
    .map(([key, r]) => ({ key, ...r }))
    .sort((a, b) => b.prompt + b.completion - (a.prompt + a.completion));
}

/** A horizontal stacked bar chart: prompt and completion tokens per key. */
function BarChart({ title, rows }: { title: string; rows: Row[] }) {
  const max = Math.max(1, ...rows.map((r) => r.prompt + r.completion));
  const total = rows.reduce((s, r) => s + r.prompt + r.completion, 0);
  return (
    <figure className="chart" aria-label={`Tokens by ${title}`}>
      <figcaption>
        <strong>By {title}</strong> <span className="muted">{tokens(total)} tokens</span>
      </figcaption>
      {rows.length === 0 ? <p className="muted">No model calls.</p> : null}
      <ul>
        {rows.map((r) => (
          <li key={r.key}>
            <span className="bar-label" title={r.key}>
              {r.key}
            </span>
            <span
              className="bar-track"
              role="img"
              aria-label={`${r.key}: ${r.prompt} prompt and ${r.completion} completion tokens in ${r.calls} calls`}
            >
              <span className="bar-prompt" style={{ width: `${(r.prompt / max) * 100}%` }} />
              <span className="bar-completion" style={{ width: `${(r.completion / max) * 100}%` }} />
            </span>
            <span className="bar-value">
              {tokens(r.prompt + r.completion)} <span className="muted">· {r.calls} calls</span>
            </span>
          </li>
        ))}
      </ul>
    </figure>
  );
}

/**
 * Usage of a run by agent (chunk author), model and branch (the session that appended the
 * chunk), in tokens. Cost needs prices, which the server does not hold: tokens only.
 */
export function UsageScreen({ runId }: { runId?: string }) {
  const client = useClient();
  const recent = useQuery({ queryKey: ["runs", "recent"], queryFn: () => client.runs.list({ limit: 50 }) });
  const chosen = runId ?? recent.data?.items.find((r) => r.lastCheckpoint > 0)?.id;
  const lineage = useRunLineage(chosen);
  const chunks = lineage.data?.data.chunks ?? [];
  const operator = new Map((lineage.data?.data.graph.nodes ?? []).map((n) => [n.id, n.operator]));
  return (
    <section aria-labelledby="usage-title">
      <div className="screen-head">
        <h1 id="usage-title">Usage</h1>
        <label>
          Run
          <select
            value={chosen ?? ""}
            onChange={(e) => {
              window.location.hash = href({ screen: "usage", runId: e.target.value });
            }}
          >
            {(recent.data?.items ?? []).map((r) => (
              <option key={r.id} value={r.id}>
                {shortId(r.id)} · {r.workflow} · {r.status}
              </option>
            ))}
          </select>
        </label>
        <span className="legend-inline">
          <span className="swatch prompt" /> prompt <span className="swatch completion" /> completion
        </span>
      </div>
      {lineage.data ? (
        <div className="charts">
          <BarChart title="agent" rows={group(chunks, (c) => c.author ?? "(no author)")} />
          <BarChart title="model" rows={group(chunks, (c) => c.model ?? "(unknown model)")} />
          <BarChart
            title="branch"
            rows={group(chunks, (c) => `${operator.get(c.sessionId) ?? "?"} ${shortId(c.sessionId)}`)}
          />
        </div>
      ) : (
        <p className="muted">{chosen ? "Loading…" : "No run with a checkpoint yet."}</p>
      )}
    </section>
  );
}
