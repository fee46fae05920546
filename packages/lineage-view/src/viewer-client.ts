// The client of the self-contained lineage page that `openrath lineage --format html` writes. It
// is bundled into one script (src/generated/viewer-client-script.ts, by scripts/generate.ts) and
// inlined into the page. It reads the JSON data block, wires clicks on the server-drawn SVG nodes
// to the side panel, and runs the search. Recorded text only ever reaches the page through
// `textContent` and text nodes, never as markup.
import type { LineageGraph } from "@openrath/core";
import { allPaths, haystack, type ViewChunk } from "./lineage-data.js";

interface Usage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
  readonly cachedPromptTokens?: number;
  readonly reasoningTokens?: number;
}

interface PageNode {
  readonly id: string;
  readonly op: string;
  readonly operator: string;
  readonly parents: readonly string[];
  readonly extras: Readonly<Record<string, unknown>>;
  readonly createdAt: number;
  readonly chunkCount: number;
  readonly usage: Usage | null;
  readonly usageDerived?: boolean;
}

/** A chunk as the page's data holds it (tool calls flattened to name and arguments). */
interface PageChunk {
  readonly id: string;
  readonly kind: string;
  readonly role: string;
  readonly sessionId: string;
  readonly createdAt: number;
  readonly author?: string;
  readonly content?: string | null;
  readonly toolCalls?: readonly { id: string; name: string; arguments: string }[];
  readonly name?: string;
  readonly isError?: boolean;
  readonly data?: unknown;
  readonly usage?: Usage;
  readonly model?: string;
  readonly finishReason?: string;
  readonly untrusted?: boolean;
  readonly source?: string;
}

interface PageData {
  readonly finalId: string | null;
  readonly kinds: Readonly<Record<string, { fill: string; stroke: string; accent: string }>>;
  readonly nodes: readonly PageNode[];
  readonly edges: LineageGraph["edges"];
  readonly chunks: readonly PageChunk[];
}

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

/** Starts the viewer on the page it is inlined into. */
export function startLineageViewer(): void {
  const data = JSON.parse(byId("openrath-data").textContent ?? "{}") as PageData;
  const svg = document.querySelector("#graph svg") as SVGSVGElement;
  const panel = byId<HTMLElement>("panel");
  const input = byId<HTMLInputElement>("search");
  const status = byId<HTMLElement>("search-status");
  const prevButton = byId<HTMLButtonElement>("search-prev");
  const nextButton = byId<HTMLButtonElement>("search-next");
  const graph = { nodes: data.nodes, edges: data.edges } as unknown as LineageGraph;
  const nodes = new Map(data.nodes.map((n) => [n.id, n]));
  const children = new Map<string, string[]>(data.nodes.map((n) => [n.id, []]));
  const ownChunks = new Map<string, PageChunk[]>(data.nodes.map((n) => [n.id, []]));
  for (const n of data.nodes) for (const p of n.parents) children.get(p)?.push(n.id);
  for (const c of data.chunks) {
    if (!ownChunks.has(c.sessionId)) ownChunks.set(c.sessionId, []);
    ownChunks.get(c.sessionId)!.push(c);
  }
  let selected: string | null = null;
  let matches: PageChunk[] = [];
  let current = -1;
  let query = "";
  let scale = 1;

  const el = <K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string | null, text?: unknown) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };
  const shortId = (id: string) => id.replace(/-/g, "").slice(-8);
  const fmt = (n: unknown) => (typeof n === "number" ? n.toLocaleString("en-US") : String(n));
  const kindOf = (n: PageNode) => data.kinds[n.op] ?? data.kinds["*"]!;
  const nodeEl = (id: string) => svg.querySelector(`g.node[data-id="${CSS.escape(id)}"]`);
  const time = (ms: number) => {
    const d = new Date(ms);
    return Number.isNaN(d.getTime()) ? "" : d.toISOString().replace("T", " ").replace("Z", "").slice(0, 23);
  };
  const pretty = (text: unknown) => {
    try {
      return JSON.stringify(JSON.parse(String(text)), null, 2);
    } catch {
      return String(text);
    }
  };
  const searchText = (c: PageChunk) =>
    haystack({
      ...c,
      toolCalls: (c.toolCalls ?? []).map((t) => ({
        id: t.id,
        function: { name: t.name, arguments: t.arguments },
      })),
    } as ViewChunk);

  // Text with every occurrence of the current query wrapped in <mark>, built from text nodes.
  const marked = <K extends keyof HTMLElementTagNameMap>(tag: K, cls: string | null, value: unknown) => {
    const e = el(tag, cls);
    const text = String(value);
    const q = query.toLowerCase();
    if (!q) {
      e.textContent = text;
      return e;
    }
    const lower = text.toLowerCase();
    let at = 0;
    for (let i = lower.indexOf(q); i >= 0; i = lower.indexOf(q, at)) {
      if (i > at) e.appendChild(document.createTextNode(text.slice(at, i)));
      e.appendChild(el("mark", null, text.slice(i, i + q.length)));
      at = i + q.length;
    }
    if (at < text.length) e.appendChild(document.createTextNode(text.slice(at)));
    return e;
  };

  const linkList = (ids: readonly string[], attr: string): HTMLElement => {
    if (ids.length === 0) return el("p", "none", "none");
    const ul = el("ul", "links");
    for (const id of ids) {
      const n = nodes.get(id);
      const li = el("li");
      const b = el("button");
      b.type = "button";
      b.setAttribute(attr, id);
      if (n) {
        const op = el("span", "op", n.op);
        op.style.color = kindOf(n).accent;
        b.appendChild(op);
        b.appendChild(el("span", "operator", n.operator));
      } else {
        b.appendChild(el("span", "operator", "(not in this graph)"));
      }
      b.appendChild(el("span", "sid", shortId(id)));
      b.addEventListener("click", () => select(id, { scroll: true }));
      li.appendChild(b);
      ul.appendChild(li);
    }
    return ul;
  };

  const factsList = (pairs: readonly (readonly [string, unknown, boolean?])[]) => {
    const dl = el("dl", "facts");
    for (const [label, value, code] of pairs) {
      if (value === undefined || value === null || value === "") continue;
      dl.appendChild(el("dt", null, label));
      const dd = el("dd");
      if (code) dd.appendChild(el("code", null, value));
      else dd.textContent = String(value);
      dl.appendChild(dd);
    }
    return dl;
  };

  const usageBlock = (u: Usage | null, derived: boolean | undefined) => {
    if (!u) return el("p", "none", "not known: this session was reached only through the lineage of another");
    const box = el("div");
    box.appendChild(
      factsList([
        ["prompt", fmt(u.promptTokens)],
        ["completion", fmt(u.completionTokens)],
        ["total", fmt(u.totalTokens)],
        ["cached prompt", u.cachedPromptTokens === undefined ? undefined : fmt(u.cachedPromptTokens)],
        ["reasoning", u.reasoningTokens === undefined ? undefined : fmt(u.reasoningTokens)],
      ]),
    );
    if (derived) box.appendChild(el("p", "none", "computed from the transcript rebuilt from its parents"));
    return box;
  };

  const extrasBlock = (extras: Readonly<Record<string, unknown>>) => {
    const keys = Object.keys(extras ?? {});
    if (keys.length === 0) return el("p", "none", "none");
    const t = el("table", "extras");
    for (const k of keys) {
      const tr = el("tr");
      tr.appendChild(el("td", null, k));
      const td = el("td");
      td.appendChild(el("code", null, JSON.stringify(extras[k])));
      tr.appendChild(td);
      t.appendChild(tr);
    }
    return t;
  };

  const chunkCard = (c: PageChunk) => {
    const card = el("article", "chunk");
    card.id = `chunk-${c.id}`;
    card.setAttribute("data-chunk-id", c.id);
    const head = el("div", "head");
    head.appendChild(el("span", `role role-${c.role}`, c.role));
    if (c.author) head.appendChild(el("span", "author", c.author));
    if (c.kind === "tool_result" || c.kind === "event") head.appendChild(el("span", "result-name", c.name));
    const when = el("span", "when", time(c.createdAt).slice(11));
    when.title = time(c.createdAt);
    head.appendChild(when);
    card.appendChild(head);
    const body = el("div", "body");
    if (c.kind === "tool_result") {
      if (c.isError) body.appendChild(el("div", "error", "tool error"));
      body.appendChild(marked("pre", null, pretty(c.content)));
    } else if (c.kind === "event") {
      if (c.data !== undefined) body.appendChild(marked("pre", null, JSON.stringify(c.data, null, 2)));
    } else if (typeof c.content === "string" && c.content !== "") {
      body.appendChild(marked("p", "text", c.content));
    }
    for (const t of c.toolCalls ?? []) {
      const call = el("div", "call");
      call.appendChild(el("div", "name", `→ ${t.name}  (${t.id})`));
      call.appendChild(marked("pre", null, pretty(t.arguments)));
      body.appendChild(call);
    }
    const meta: string[] = [];
    if (c.model) meta.push(`model ${c.model}`);
    if (c.usage)
      meta.push(
        `${fmt(c.usage.totalTokens)} tokens (${fmt(c.usage.promptTokens)} in, ${fmt(c.usage.completionTokens)} out)`,
      );
    if (c.finishReason) meta.push(`finish ${c.finishReason}`);
    if (c.untrusted) meta.push(`untrusted${c.source ? ` from ${c.source}` : ""}`);
    if (meta.length) body.appendChild(el("div", "meta", meta.join(" · ")));
    card.appendChild(body);
    return card;
  };

  const renderPanel = (n: PageNode) => {
    panel.textContent = "";
    const k = kindOf(n);
    const pill = el("span", "kind-pill", n.op);
    pill.style.color = k.accent;
    pill.style.borderColor = k.stroke;
    pill.style.background = k.fill;
    const head = el("div", "panel-head");
    head.append(pill, el("h2", null, n.operator), el("div", "ident", n.id));
    panel.appendChild(head);
    panel.appendChild(el("h3", null, "Session"));
    panel.appendChild(
      factsList([
        ["created", time(n.createdAt)],
        ["chunks", fmt(n.chunkCount) + (n.id === data.finalId ? " (final session)" : "")],
        ["own chunks", fmt((ownChunks.get(n.id) ?? []).length)],
      ]),
    );
    panel.appendChild(el("h3", null, `Parents (${n.parents.length})`));
    const parents = linkList(n.parents, "data-parent-id");
    parents.classList.add("parents");
    panel.appendChild(parents);
    const kids = children.get(n.id) ?? [];
    panel.appendChild(el("h3", null, `Children (${kids.length})`));
    panel.appendChild(linkList(kids, "data-child-id"));
    panel.appendChild(el("h3", null, "Usage"));
    panel.appendChild(usageBlock(n.usage, n.usageDerived));
    panel.appendChild(el("h3", null, "Extras"));
    panel.appendChild(extrasBlock(n.extras));
    const own = ownChunks.get(n.id) ?? [];
    panel.appendChild(el("h3", null, `Chunks appended here (${own.length})`));
    if (own.length === 0) {
      panel.appendChild(
        el(
          "p",
          "none",
          n.op === "fork" || n.op === "merge" ? `None: a ${n.op} shares the chunks of its parents.` : "None.",
        ),
      );
    }
    const list = el("div", "chunks");
    for (const c of own) list.appendChild(chunkCard(c));
    panel.appendChild(list);
    panel.scrollTop = 0;
  };

  function select(id: string, opts?: { scroll?: boolean }) {
    const n = nodes.get(id);
    if (!n) return;
    if (selected) nodeEl(selected)?.classList.remove("selected");
    selected = id;
    const g = nodeEl(id);
    if (g) {
      g.classList.add("selected");
      if (opts?.scroll) g.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
    renderPanel(n);
  }

  const clearPath = () => {
    svg.classList.remove("has-path");
    for (const e of svg.querySelectorAll(".on-path")) e.classList.remove("on-path");
  };

  // Every path from the chunk's branch to the final session: its sessions and the edges between them.
  const highlightPaths = (from: string) => {
    clearPath();
    svg.classList.add("has-path");
    const paths = allPaths(graph, from, data.finalId);
    for (const id of paths.nodes) nodeEl(id)?.classList.add("on-path");
    for (const e of svg.querySelectorAll("path.edge")) {
      if (paths.edges.has(`${e.getAttribute("data-from")}->${e.getAttribute("data-to")}`))
        e.classList.add("on-path");
    }
    return paths;
  };

  const showMatch = () => {
    const c = matches[current]!;
    select(c.sessionId, { scroll: true });
    const paths = highlightPaths(c.sessionId);
    const card = document.getElementById(`chunk-${c.id}`);
    if (card) {
      card.classList.add("hit");
      card.scrollIntoView({ block: "center" });
    }
    const n = nodes.get(c.sessionId);
    status.className = "";
    status.textContent = `${current + 1} of ${matches.length} · from ${c.author ?? n?.operator ?? "?"} · path of ${paths.nodes.size}`;
    prevButton.disabled = nextButton.disabled = matches.length < 2;
  };

  const search = (text: string) => {
    query = text.trim();
    matches = [];
    current = -1;
    if (!query) {
      status.textContent = "";
      prevButton.disabled = nextButton.disabled = true;
      clearPath();
      if (selected) renderPanel(nodes.get(selected)!);
      return;
    }
    const q = query.toLowerCase();
    // The earliest chunk holding the text produced it; later ones copied or quoted it.
    matches = data.chunks
      .filter((c) => searchText(c).toLowerCase().includes(q))
      .sort((a, b) => a.createdAt - b.createdAt);
    if (matches.length === 0) {
      status.className = "none";
      status.textContent = "no chunk contains it";
      prevButton.disabled = nextButton.disabled = true;
      clearPath();
      return;
    }
    current = 0;
    showMatch();
  };

  const step = (by: number) => {
    if (matches.length === 0) return;
    current = (current + by + matches.length) % matches.length;
    showMatch();
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => search(input.value), 180);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      clearTimeout(timer);
      if (input.value.trim() !== query) search(input.value);
      else step(e.shiftKey ? -1 : 1);
    } else if (e.key === "Escape") {
      input.value = "";
      search("");
    }
  });
  prevButton.addEventListener("click", () => step(-1));
  nextButton.addEventListener("click", () => step(1));

  for (const g of svg.querySelectorAll("g.node")) {
    const id = g.getAttribute("data-id") ?? "";
    g.addEventListener("click", () => select(id));
    g.addEventListener("keydown", (e) => {
      const key = (e as KeyboardEvent).key;
      if (key === "Enter" || key === " ") {
        e.preventDefault();
        select(id);
      }
    });
  }

  const box = byId<HTMLElement>("graph");
  const baseWidth = Number(svg.getAttribute("width"));
  const baseHeight = Number(svg.getAttribute("height"));
  const zoom = (to: number) => {
    scale = Math.max(0.2, Math.min(2.5, to));
    svg.setAttribute("width", String(Math.round(baseWidth * scale)));
    svg.setAttribute("height", String(Math.round(baseHeight * scale)));
  };
  const fit = () =>
    zoom(Math.min(1, (box.clientWidth - 24) / baseWidth, (box.clientHeight - 24) / baseHeight));
  byId("zoom-in").addEventListener("click", () => zoom(scale * 1.2));
  byId("zoom-out").addEventListener("click", () => zoom(scale / 1.2));
  byId("zoom-fit").addEventListener("click", fit);
  byId("zoom-reset").addEventListener("click", () => zoom(1));
  document.addEventListener("keydown", (e) => {
    if (e.target === input) return;
    if (e.key === "/") {
      e.preventDefault();
      input.focus();
    } else if (e.key === "+" || e.key === "=") zoom(scale * 1.2);
    else if (e.key === "-") zoom(scale / 1.2);
    else if (e.key === "0") fit();
  });
  // Opens fitted to the window (never larger than actual size), so no node hides behind the panel.
  fit();
  prevButton.disabled = nextButton.disabled = true;
}
