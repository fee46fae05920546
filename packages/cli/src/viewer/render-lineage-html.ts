import {
  type Chunk,
  type LineageGraph,
  type LineageGraphNode,
  type LineageSource,
  lineageGraph,
  shortId,
  type Usage,
} from "@openrath/core";
import { deriveUsage } from "./internal/derive-usage.js";
import { layoutGraph } from "./internal/layout.js";
import { NODE_KINDS, nodeKindOf, nodeShapePath } from "./internal/node-kinds.js";
import { VIEWER_SCRIPT } from "./internal/viewer-script.js";
import { VIEWER_STYLES } from "./internal/viewer-styles.js";

/** A session as the viewer needs it: lineage, chunk count, usage and chunks (a `Session` is one). */
export interface ViewerSession extends LineageSource {
  readonly chunks: readonly Chunk[];
}

/** A lineage graph with the chunks to show in it (each chunk belongs to the node its `sessionId` names). */
export interface LineageViewerData {
  readonly graph: LineageGraph;
  readonly chunks: readonly Chunk[];
}

/** What {@link renderLineageHtml} draws: the sessions of a run (all of them, for chunk counts and usage), or a graph and chunks. */
export type LineageViewerInput = readonly ViewerSession[] | LineageViewerData;

/** Options of {@link renderLineageHtml}. */
export interface RenderLineageHtmlOptions {
  /** The page title (default: `OpenRath lineage`). */
  readonly title?: string;
  /**
   * The session a search's provenance path leads to (default: among the sessions nothing was
   * derived from, the newest).
   */
  readonly finalSessionId?: string;
  /** A line under the title, such as the directory the logs came from. */
  readonly subtitle?: string;
}

/** One chunk as the page's JSON data holds it. */
interface ViewerChunk {
  readonly id: string;
  readonly kind: Chunk["kind"];
  /** `tool` for a tool result, else the kind. */
  readonly role: string;
  readonly sessionId: string;
  readonly createdAt: number;
  readonly author?: string;
  readonly content?: string | null;
  readonly toolCalls?: readonly { id: string; name: string; arguments: string }[];
  readonly toolCallId?: string;
  readonly name?: string;
  readonly isError?: boolean;
  readonly data?: unknown;
  readonly usage?: Usage;
  readonly model?: string;
  readonly finishReason?: string;
  readonly untrusted?: boolean;
  readonly source?: string;
}

const NODE_WIDTH = 178;
const NODE_HEIGHT = 62;

/** Escapes text for HTML content and attribute values. */
function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** JSON that is safe inside a `<script>` element: no `<` (so no `</script>` or `<!--`), no line separators. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

function toViewerChunk(c: Chunk): ViewerChunk {
  const any = c as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {
    id: c.id,
    kind: c.kind,
    role: c.kind === "tool_result" ? "tool" : c.kind,
    sessionId: c.sessionId,
    createdAt: c.createdAt,
  };
  if (c.author !== undefined) out.author = c.author;
  if (c.kind === "assistant" && c.toolCalls) {
    out.toolCalls = c.toolCalls.map((t) => ({
      id: t.id,
      name: t.function.name,
      arguments: t.function.arguments,
    }));
  }
  for (const key of [
    "content",
    "toolCallId",
    "name",
    "isError",
    "data",
    "usage",
    "model",
    "finishReason",
    "untrusted",
    "source",
  ]) {
    if (any[key] !== undefined) out[key] = any[key];
  }
  return out as unknown as ViewerChunk;
}

function isViewerData(input: LineageViewerInput): input is LineageViewerData {
  return !Array.isArray(input);
}

/** Truncates `text` to about `max` characters of a proportional font, with an ellipsis. */
function fit(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function svgNode(n: LineageGraphNode, x: number, y: number, isFinal: boolean): string {
  const kind = nodeKindOf(n.op);
  const w = NODE_WIDTH;
  const h = NODE_HEIGHT;
  const inset = kind.kind === "fork" || kind.kind === "merge" || kind.kind === "select" ? 18 : 14;
  const tokens =
    n.usage && n.usage.totalTokens > 0 ? ` · ${n.usage.totalTokens.toLocaleString("en-US")} tok` : "";
  const facts = `${n.chunkCount} chunk${n.chunkCount === 1 ? "" : "s"}${tokens}`;
  const label = `${n.op} ${n.operator} ${shortId(n.id)}`;
  const top = kind.kind === "workflow" ? y + 7 : kind.kind === "memory" ? y + 5 : y;
  const parts = [
    `<g class="node kind-${kind.kind}" data-id="${escapeHtml(n.id)}" data-op="${escapeHtml(n.op)}" tabindex="0" role="button" aria-label="${escapeHtml(label)}">`,
    `<title>${escapeHtml(`${n.op} · ${n.operator}\n${n.id}\n${facts}`)}</title>`,
    `<path class="shape" d="${nodeShapePath(kind.kind, x, y, w, h)}" fill="${kind.fill}" stroke="${kind.stroke}"/>`,
  ];
  if (kind.kind === "loop") {
    parts.push(
      `<path class="inner" d="${nodeShapePath("loop", x + 4, y + 4, w - 8, h - 8)}" stroke="${kind.stroke}"/>`,
    );
  }
  parts.push(
    `<text class="op" x="${x + inset}" y="${top + 18}" fill="${kind.accent}">${escapeHtml(fit(n.op, 14))}${kind.kind === "loop" ? " ↻" : ""}</text>`,
    `<text class="sid" x="${x + w - inset}" y="${top + 18}" text-anchor="end">${escapeHtml(shortId(n.id))}</text>`,
    `<text class="operator" x="${x + inset}" y="${top + 36}">${escapeHtml(fit(n.operator.replace(/^Session\./, ""), 21))}</text>`,
    `<text class="facts" x="${x + inset}" y="${top + 52}">${escapeHtml(facts)}</text>`,
  );
  if (isFinal) {
    parts.push(
      `<rect class="badge" x="${x + w - 46}" y="${y - 9}" width="42" height="16" rx="8"/>`,
      `<text class="badge-text" x="${x + w - 25}" y="${y + 3}" text-anchor="middle">final</text>`,
    );
  }
  parts.push("</g>");
  return parts.join("");
}

function edgePath(points: readonly { x: number; y: number }[]): string {
  const r = (n: number) => Math.round(n * 10) / 10;
  let d = `M${r(points[0]!.x)},${r(points[0]!.y)}`;
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1]!;
    const b = points[i]!;
    if (i % 2 === 0) {
      // Across a column the edge runs straight through its dummy's slot.
      d += ` L${r(b.x)},${r(b.y)}`;
      continue;
    }
    const dx = Math.max(24, (b.x - a.x) / 2);
    d += ` C${r(a.x + dx)},${r(a.y)} ${r(b.x - dx)},${r(b.y)} ${r(b.x)},${r(b.y)}`;
  }
  return d;
}

function legend(): string {
  const items = NODE_KINDS.map((k) => {
    const shape = nodeShapePath(k.kind, 1, 1, 34, 16);
    return `<span title="${escapeHtml(k.meaning)}"><svg width="36" height="18" viewBox="0 0 36 18" aria-hidden="true"><path d="${shape}" fill="${k.fill}" stroke="${k.stroke}" stroke-width="1.3"/></svg>${escapeHtml(k.label)}</span>`;
  });
  items.push(
    `<span class="path-key"><svg width="30" height="10" viewBox="0 0 30 10" aria-hidden="true"><path d="M1,5 L29,5" stroke="#f59e0b" stroke-width="3.2"/></svg>provenance path</span>`,
  );
  return `<div class="legend" aria-label="legend">${items.join("")}</div>`;
}

/**
 * Renders a run's lineage as one self-contained HTML page: inline CSS and script, no external
 * URLs, nothing fetched when it opens (a Content-Security-Policy forbids it). The session DAG is
 * laid out left to right with fork, merge, loop, compress, memory, leaf and workflow nodes drawn
 * in distinct shapes and colours. Clicking a node opens a side panel with the chunks appended in
 * that session (role, author, text, tool calls with arguments, tool results), its usage, its
 * extras, and its parents and children as links. The search box finds the chunk that first held a
 * piece of text, opens it, and highlights the provenance path from its branch to the final
 * session. All recorded text is escaped; the data sits in a `<script type="application/json">`
 * block with the id `openrath-data`.
 *
 * @param input - every session of the run (so chunk counts and usage are known for each node),
 *   or a lineage graph with the chunks to show.
 * @example
 * ```ts
 * const logs = await readSessionLogs("./recording");
 * await writeFile("lineage.html", renderLineageHtml(logs.map((l) => l.session)));
 * ```
 */
export function renderLineageHtml(input: LineageViewerInput, options: RenderLineageHtmlOptions = {}): string {
  let graph: LineageGraph;
  let chunks: Chunk[];
  const transcripts = new Map<string, readonly Chunk[]>();
  if (isViewerData(input)) {
    graph = input.graph;
    chunks = [...input.chunks];
  } else {
    graph = lineageGraph(...input);
    const seen = new Set<string>();
    chunks = [];
    for (const session of input) {
      const known = transcripts.get(session.lineage.id);
      if (!known || known.length < session.chunks.length) transcripts.set(session.lineage.id, session.chunks);
      for (const chunk of session.chunks) {
        if (seen.has(chunk.id)) continue;
        seen.add(chunk.id);
        chunks.push(chunk);
      }
    }
  }
  const own = new Map<string, Chunk[]>();
  for (const c of chunks) own.set(c.sessionId, [...(own.get(c.sessionId) ?? []), c]);
  const derived = deriveUsage(graph, transcripts, own);
  const hasChild = new Set(graph.edges.map((e) => e.from));
  const sinks = graph.nodes.filter((n) => !hasChild.has(n.id));
  const finalId =
    (options.finalSessionId && graph.nodes.some((n) => n.id === options.finalSessionId)
      ? options.finalSessionId
      : undefined) ??
    sinks.reduce<LineageGraphNode | undefined>(
      (a, b) => (!a || b.createdAt >= a.createdAt ? b : a),
      undefined,
    )?.id ??
    null;
  const layout = layoutGraph(graph.nodes, { nodeWidth: NODE_WIDTH, nodeHeight: NODE_HEIGHT, columnGap: 44 });
  const edges = layout.edges.map(
    (e) =>
      `<path class="edge" data-from="${escapeHtml(e.from)}" data-to="${escapeHtml(e.to)}" d="${edgePath(e.points)}" marker-end="url(#arrow)"/>`,
  );
  const svgNodes = graph.nodes.map((n) => {
    const p = layout.nodes.get(n.id)!;
    return svgNode(n, p.x, p.y, n.id === finalId);
  });
  const width = Math.ceil(layout.width);
  const height = Math.ceil(layout.height + 40);
  const kinds: Record<string, { fill: string; stroke: string; accent: string }> = {
    "*": nodeKindOf("*"),
  };
  for (const n of graph.nodes) kinds[n.op] = nodeKindOf(n.op);
  const data = {
    format: "openrath.lineage-viewer",
    version: 1,
    finalId,
    kinds: Object.fromEntries(
      Object.entries(kinds).map(([op, k]) => [op, { fill: k.fill, stroke: k.stroke, accent: k.accent }]),
    ),
    nodes: graph.nodes.map((n) => {
      const p = layout.nodes.get(n.id)!;
      return {
        id: n.id,
        op: n.op,
        operator: n.operator,
        parents: n.parents,
        extras: n.extras,
        createdAt: n.createdAt,
        chunkCount: n.chunkCount,
        usage: n.usage ?? derived.get(n.id) ?? null,
        ...(derived.has(n.id) ? { usageDerived: true } : {}),
        x: p.x,
        y: p.y,
      };
    }),
    edges: graph.edges,
    chunks: chunks.map(toViewerChunk),
  };
  const title = options.title ?? "OpenRath lineage";
  const finalNode = graph.nodes.find((n) => n.id === finalId);
  const stats = [
    `${graph.nodes.length} session${graph.nodes.length === 1 ? "" : "s"}`,
    `${chunks.length} chunk${chunks.length === 1 ? "" : "s"}`,
    ...(finalNode?.usage ? [`${finalNode.usage.totalTokens.toLocaleString("en-US")} tokens`] : []),
    ...(options.subtitle ? [options.subtitle] : []),
  ].join(" · ");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title>
<style>${VIEWER_STYLES}</style>
</head>
<body>
<header class="top">
<h1><span class="brand">OpenRath</span> ${escapeHtml(title === "OpenRath lineage" ? "lineage" : title)}</h1>
<div class="stats">${escapeHtml(stats)}</div>
<div class="search">
<input id="search" type="search" placeholder="Find the chunk that produced a piece of text… ( / )" autocomplete="off" spellcheck="false" aria-label="Search chunks">
<button id="search-prev" type="button" title="Previous match (Shift+Enter)" aria-label="Previous match">▲</button>
<button id="search-next" type="button" title="Next match (Enter)" aria-label="Next match">▼</button>
<span id="search-status" role="status" aria-live="polite"></span>
</div>
</header>
<main>
<div class="graph-wrap">
<div id="graph">
<svg width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="Session lineage graph">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#94a3b8"/></marker><marker id="arrow-hot" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="5" markerHeight="5" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#f59e0b"/></marker></defs>
<g class="edges">${edges.join("\n")}</g>
<g class="nodes">${svgNodes.join("\n")}</g>
</svg>
</div>
<div class="toolbar" role="toolbar" aria-label="Zoom">
<button id="zoom-out" type="button" title="Zoom out (-)">−</button>
<button id="zoom-fit" type="button" title="Fit (0)">fit</button>
<button id="zoom-reset" type="button" title="Actual size">1:1</button>
<button id="zoom-in" type="button" title="Zoom in (+)">+</button>
</div>
${legend()}
</div>
<aside id="panel" aria-label="Session details">
<div class="empty">
<h2>Select a session</h2>
<p>Click a node to see the chunks appended in it (role, author, text, tool calls and results), its usage, its extras and its parents.</p>
<p>Search for a piece of text to find the chunk that produced it; its provenance path to the final session lights up in the graph.</p>
</div>
</aside>
</main>
<script type="application/json" id="openrath-data">${scriptJson(data)}</script>
<script>${VIEWER_SCRIPT}</script>
</body>
</html>
`;
}
