import type { LineageGraphNode } from "@openrath/core";
import { type LineageViewData, mergeSides, nodeKindOf, type ViewChunk } from "@openrath/lineage-view";
import { type ReactNode, useState } from "react";
import {
  JAEGER_TEMPLATE,
  storedTraceTemplate,
  storeTraceTemplate,
  type TraceIds,
  traceOf,
  traceUrl,
} from "./trace-link.js";

interface ChunkPanelProps {
  readonly data: LineageViewData;
  readonly node: LineageGraphNode;
  readonly query: string;
  readonly hitId: string | undefined;
  readonly onSelect: (id: string) => void;
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

/** One id with a button that copies it. */
function CopyableId({ label, id }: { label: string; id: string }) {
  const [copied, setCopied] = useState<string | null>(null);
  return (
    <>
      <dt>{label}</dt>
      <dd>
        <code className="trace-id">{id}</code>{" "}
        <button
          type="button"
          className="copy"
          aria-label={`Copy ${label}`}
          onClick={() =>
            navigator.clipboard
              .writeText(id)
              .then(() => setCopied("copied"))
              .catch(() => setCopied("select the id to copy it"))
          }
        >
          copy
        </button>
        {copied ? <span className="muted small"> {copied}</span> : null}
      </dd>
    </>
  );
}

/**
 * The trace and span that made a session: the ids with copy buttons, a link into the trace viewer
 * when this browser has its URL template (localStorage; http(s) only), and the form to set it.
 */
function TraceSection({ trace }: { trace: TraceIds }) {
  const [template, setTemplate] = useState(storedTraceTemplate);
  const [draft, setDraft] = useState(template ?? "");
  const [refusal, setRefusal] = useState<string | null>(null);
  const href = template ? traceUrl(template, trace) : undefined;
  return (
    <section className="trace" aria-label="Trace">
      <h3>Trace</h3>
      <dl className="facts">
        <CopyableId label="trace id" id={trace.traceId} />
        <CopyableId label="span id" id={trace.spanId} />
      </dl>
      {href ? (
        <a href={href} className="trace-link" target="_blank" rel="noopener noreferrer">
          Open the span in the trace viewer
        </a>
      ) : null}
      <details className="trace-settings">
        <summary>{template ? "Trace viewer URL" : "Set a trace viewer URL to link spans"}</summary>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const refused = storeTraceTemplate(draft);
            setRefusal(refused ? `${refused.message} [${refused.code}]` : null);
            if (!refused) setTemplate(storedTraceTemplate());
          }}
        >
          <label htmlFor="trace-template">
            URL template ({"{traceId}"}, {"{spanId}"})
          </label>
          <input
            id="trace-template"
            type="url"
            placeholder={JAEGER_TEMPLATE}
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
          />
          <button type="submit">Save</button>
          {refusal ? (
            <p className="error" role="alert">
              {refusal}
            </p>
          ) : null}
          <p className="muted small">Kept in this browser (localStorage). Empty to forget it.</p>
        </form>
      </details>
    </section>
  );
}

/** The side panel of a selected session. */
export function ChunkPanel({ data, node, query, hitId, onSelect }: ChunkPanelProps) {
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
      </div>
      {traceOf(node) ? <TraceSection trace={traceOf(node)!} /> : null}
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
