import type { LineageGraphNode } from "@openrath/core";
import { type LineageViewData, mergeSides, nodeKindOf, type ViewChunk } from "@openrath/lineage-view";
import type { ReactNode } from "react";

interface ChunkPanelProps {
  readonly data: LineageViewData;
  readonly node: LineageGraphNode;
  readonly query: string;
  readonly hitId: string | undefined;
  readonly onSelect: (id: string) => void;
  readonly traceUrl: string | undefined;
}

const shortId = (id: string) => id.replace(/-/g, "").slice(-8);

/** Text with each occurrence of `query` in a <mark>, as React text nodes. */
function Marked({ text, query }: { text: string; query: string }) {
  if (!query) return <>{text}</>;
  const out: ReactNode[] = [];
  const lower = text.toLowerCase();
  const q = query.toLowerCase();
  let at = 0;
  for (let i = lower.indexOf(q); i >= 0; i = lower.indexOf(q, at)) {
    if (i > at) out.push(text.slice(at, i));
    out.push(<mark key={i}>{text.slice(i, i + q.length)}</mark>);
    at = i + q.length;
  }
  if (at < text.length) out.push(text.slice(at));
  return <>{out}</>;
}

function pretty(text: unknown): string {
  if (typeof text !== "string") return JSON.stringify(text, null, 2);
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** One chunk: role, author, text, tool calls and results, memory recalls with scores, usage. */
export function ChunkCard({ chunk, query, hit }: { chunk: ViewChunk; query: string; hit?: boolean }) {
  const role = chunk.kind === "tool_result" ? "tool" : chunk.kind;
  const meta: string[] = [];
  if (chunk.model) meta.push(`model ${chunk.model}`);
  if (chunk.usage)
    meta.push(
      `${chunk.usage.totalTokens.toLocaleString("en-US")} tokens (${chunk.usage.promptTokens} in, ${chunk.usage.completionTokens} out)`,
    );
  if (chunk.trust) meta.push(`trust ${chunk.trust}`);
  const recalls = Array.isArray((chunk.data as { hits?: unknown } | undefined)?.hits)
    ? ((chunk.data as { hits: { text?: string; score?: number }[] }).hits ?? [])
    : [];
  return (
    <article className={`chunk${hit ? " hit" : ""}`} data-chunk-id={chunk.id} aria-label={`${role} chunk`}>
      <div className="chunk-head">
        <span className={`role role-${role}`}>{role}</span>
        {chunk.author ? <span className="author">{chunk.author}</span> : null}
        {chunk.name ? <span className="result-name">{chunk.name}</span> : null}
      </div>
      {chunk.kind === "tool_result" ? (
        <>
          {chunk.isError ? <div className="error">tool error</div> : null}
          <pre>
            <Marked text={pretty(chunk.content)} query={query} />
          </pre>
        </>
      ) : chunk.kind === "event" ? (
        chunk.data !== undefined ? (
          <pre>
            <Marked text={JSON.stringify(chunk.data, null, 2)} query={query} />
          </pre>
        ) : null
      ) : typeof chunk.content === "string" && chunk.content !== "" ? (
        <p className="text">
          <Marked text={chunk.content} query={query} />
        </p>
      ) : null}
      {(chunk.toolCalls ?? []).map((t) => (
        <div className="call" key={t.id}>
          <div className="name">
            → {t.function.name} ({t.id})
          </div>
          <pre>
            <Marked text={pretty(t.function.arguments)} query={query} />
          </pre>
        </div>
      ))}
      {recalls.length > 0 ? (
        <ul className="recalls" aria-label="Memory recalls">
          {recalls.map((r, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: recalls have no id of their own.
            <li key={i}>
              <span className="score">{typeof r.score === "number" ? r.score.toFixed(3) : "—"}</span> {r.text}
            </li>
          ))}
        </ul>
      ) : null}
      {meta.length > 0 ? <div className="meta">{meta.join(" · ")}</div> : null}
    </article>
  );
}

function Chunks({ chunks, query, hitId }: { chunks: readonly ViewChunk[]; query: string; hitId?: string }) {
  if (chunks.length === 0) return <p className="muted">None.</p>;
  return (
    <div className="chunks">
      {chunks.map((c) => (
        <ChunkCard key={c.id} chunk={c} query={query} hit={c.id === hitId} />
      ))}
    </div>
  );
}

/** The side panel of a selected session. */
export function ChunkPanel({ data, node, query, hitId, onSelect, traceUrl }: ChunkPanelProps) {
  const kind = nodeKindOf(node.op);
  const own = data.chunks.filter((c) => c.sessionId === node.id);
  const children = data.graph.edges.filter((e) => e.from === node.id).map((e) => e.to);
  const sides = node.op === "merge" ? mergeSides(data, node) : null;
  const link = (id: string, attr: "data-parent-id" | "data-child-id") => {
    const n = data.graph.nodes.find((x) => x.id === id);
    return (
      <li key={id}>
        <button type="button" {...{ [attr]: id }} onClick={() => onSelect(id)}>
          <span className="op" style={{ color: n ? nodeKindOf(n.op).accent : undefined }}>
            {n?.op ?? "?"}
          </span>
          <span className="operator">{n?.operator ?? "(not in this graph)"}</span>
          <span className="sid">{shortId(id)}</span>
        </button>
      </li>
    );
  };
  return (
    <div className="panel-content">
      <div className="panel-head">
        <span
          className="kind-pill"
          style={{ color: kind.accent, borderColor: kind.stroke, background: kind.fill }}
        >
          {node.op}
        </span>
        <h2>{node.operator}</h2>
        <div className="ident">{node.id}</div>
        {traceUrl ? (
          <a href={traceUrl} className="trace-link">
            trace span
          </a>
        ) : null}
      </div>
      <dl className="facts">
        <dt>created</dt>
        <dd>{new Date(node.createdAt).toISOString().replace("T", " ").slice(0, 23)}</dd>
        <dt>chunks</dt>
        <dd>
          {node.chunkCount}
          {node.id === data.finalId ? " (final session)" : ""}
        </dd>
        {node.usage ? (
          <>
            <dt>tokens</dt>
            <dd>
              {node.usage.totalTokens.toLocaleString("en-US")} ({node.usage.promptTokens} in,{" "}
              {node.usage.completionTokens} out)
            </dd>
          </>
        ) : null}
      </dl>
      <h3>Parents ({node.parents.length})</h3>
      {node.parents.length > 0 ? (
        <ul className="links parents">{node.parents.map((p) => link(p, "data-parent-id"))}</ul>
      ) : (
        <p className="muted">none</p>
      )}
      <h3>Children ({children.length})</h3>
      {children.length > 0 ? (
        <ul className="links">{children.map((c) => link(c, "data-child-id"))}</ul>
      ) : (
        <p className="muted">none</p>
      )}
      {node.op === "merge" ? (
        <section className="merge" aria-label="What this merge merged">
          <h3>Merged</h3>
          {sides ? (
            <>
              <h4>Shared prefix ({sides.shared.length})</h4>
              <details>
                <summary>{sides.shared.length} chunks both sides had</summary>
                <Chunks chunks={sides.shared} query={query} hitId={hitId} />
              </details>
              <div className="merge-sides">
                <div>
                  <h4>
                    Left: {shortId(node.parents[0]!)} ({sides.left.length})
                  </h4>
                  <Chunks chunks={sides.left} query={query} hitId={hitId} />
                </div>
                <div>
                  <h4>
                    Right: {shortId(node.parents[1]!)} ({sides.right.length})
                  </h4>
                  <Chunks chunks={sides.right} query={query} hitId={hitId} />
                </div>
              </div>
            </>
          ) : (
            <p className="muted">
              The parents' transcripts are not all known, so the sides cannot be rebuilt.
            </p>
          )}
        </section>
      ) : null}
      <h3>Extras</h3>
      {Object.keys(node.extras).length > 0 ? (
        <table className="extras">
          <tbody>
            {Object.entries(node.extras).map(([k, v]) => (
              <tr key={k}>
                <td>{k}</td>
                <td>
                  <code>{JSON.stringify(v)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">none</p>
      )}
      <h3>Chunks appended here ({own.length})</h3>
      <Chunks chunks={own} query={query} hitId={hitId} />
    </div>
  );
}
