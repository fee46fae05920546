/** The viewer's stylesheet, inlined into the page. System fonts only: the page loads nothing. */
export const VIEWER_STYLES = `
:root {
  --bg: #f8fafc; --surface: #ffffff; --ink: #0f172a; --muted: #64748b; --faint: #94a3b8;
  --line: #e2e8f0; --edge: #94a3b8; --hot: #f59e0b; --hot-ink: #b45309; --select: #2563eb;
  --mono: ui-monospace, "SF Mono", "Cascadia Mono", "DejaVu Sans Mono", Menlo, Consolas, monospace;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", Helvetica, Arial, sans-serif;
}
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; }
body { font: 14px/1.45 var(--sans); color: var(--ink); background: var(--bg); display: flex; flex-direction: column; }
header.top {
  display: flex; align-items: center; gap: 16px; padding: 10px 18px; background: #0f172a; color: #e2e8f0;
  border-bottom: 1px solid #1e293b; flex: none;
}
header.top h1 { font-size: 15px; margin: 0; font-weight: 650; letter-spacing: .01em; white-space: nowrap; }
header.top h1 .brand { color: #fbbf24; }
header.top .stats { color: #94a3b8; font-size: 12.5px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
header.top .search { margin-left: auto; display: flex; align-items: center; gap: 6px; }
header.top input[type=search] {
  width: 340px; padding: 7px 11px; border-radius: 8px; border: 1px solid #334155; background: #1e293b;
  color: #f1f5f9; font: inherit; outline: none;
}
header.top input[type=search]:focus { border-color: #fbbf24; box-shadow: 0 0 0 3px rgba(251,191,36,.25); }
header.top input[type=search]::placeholder { color: #64748b; }
header.top button, .toolbar button {
  font: inherit; font-size: 12.5px; border-radius: 7px; border: 1px solid #334155; background: #1e293b; color: #e2e8f0;
  padding: 6px 9px; cursor: pointer; line-height: 1;
}
header.top button:hover, .toolbar button:hover { background: #334155; }
header.top button:disabled { opacity: .4; cursor: default; }
#search-status { font-size: 12px; color: #cbd5e1; min-width: 150px; white-space: nowrap; }
#search-status.none { color: #fca5a5; }
main { flex: 1; display: flex; min-height: 0; }
.graph-wrap { position: relative; flex: 1; min-width: 0; display: flex; flex-direction: column; }
#graph { flex: 1; overflow: auto; display: flex; background:
  radial-gradient(circle, #e2e8f0 1px, transparent 1.2px) 0 0 / 22px 22px, var(--bg); }
#graph svg { display: block; margin: auto; flex: none; }
.toolbar { position: absolute; top: 12px; left: 12px; display: flex; gap: 4px; }
.toolbar button { background: rgba(255,255,255,.92); color: var(--ink); border-color: var(--line); box-shadow: 0 1px 2px rgba(15,23,42,.06); }
.toolbar button:hover { background: #f1f5f9; }
.legend {
  position: absolute; left: 12px; bottom: 12px; background: rgba(255,255,255,.94); border: 1px solid var(--line);
  border-radius: 10px; padding: 8px 10px; display: flex; flex-wrap: wrap; gap: 4px 12px; max-width: calc(100% - 24px);
  box-shadow: 0 2px 8px rgba(15,23,42,.07); font-size: 12px; color: var(--muted);
}
.legend span { display: inline-flex; align-items: center; gap: 5px; white-space: nowrap; }
.legend svg { display: block; }
.legend .path-key { border-left: 1px solid var(--line); padding-left: 12px; }
svg .edge { fill: none; stroke: var(--edge); stroke-width: 1.6; }
svg .edge.on-path { stroke: var(--hot); stroke-width: 3.2; marker-end: url(#arrow-hot); }
svg .node { cursor: pointer; }
svg .node .shape { stroke-width: 1.6; transition: filter .12s; }
svg .node .inner { fill: none; stroke-width: 1; opacity: .45; }
svg .node:hover .shape { filter: drop-shadow(0 2px 5px rgba(15,23,42,.18)); }
svg .node:focus { outline: none; }
svg .node:focus-visible .shape { stroke: var(--select); stroke-width: 2.4; }
svg .node .op { font: 700 11px var(--sans); letter-spacing: .06em; text-transform: uppercase; }
svg .node .sid { font: 11px var(--mono); fill: var(--faint); }
svg .node .operator { font: 600 13.5px var(--sans); fill: var(--ink); }
svg .node .facts { font: 12px var(--sans); fill: var(--muted); }
svg .node.selected .shape { stroke: var(--select); stroke-width: 3; filter: drop-shadow(0 3px 8px rgba(37,99,235,.35)); }
svg .node.on-path .shape { stroke: var(--hot); stroke-width: 3; }
svg .node.on-path.selected .shape { stroke: var(--select); }
svg.has-path .node:not(.on-path) { opacity: .38; }
svg.has-path .edge:not(.on-path) { opacity: .3; }
svg .node .badge { fill: var(--hot); }
svg .node .badge-text { font: 700 10px var(--sans); fill: #fff; }
aside#panel {
  width: 440px; flex: none; background: var(--surface); border-left: 1px solid var(--line); overflow: auto;
  padding: 18px 20px 40px;
}
#panel .panel-head {
  position: sticky; top: -18px; z-index: 1; background: var(--surface); margin: -18px -20px 0; padding: 18px 20px 10px;
  border-bottom: 1px solid var(--line);
}
#panel .empty { color: var(--muted); }
#panel .empty h2 { color: var(--ink); }
#panel h2 { font-size: 17px; margin: 4px 0 2px; word-break: break-word; }
#panel h3 { font-size: 11.5px; text-transform: uppercase; letter-spacing: .07em; color: var(--muted); margin: 20px 0 8px; }
#panel .kind-pill { display: inline-block; font-size: 11px; font-weight: 700; text-transform: uppercase; letter-spacing: .06em;
  padding: 2px 8px; border-radius: 999px; border: 1px solid; }
#panel .ident { font: 11.5px var(--mono); color: var(--muted); word-break: break-all; }
#panel dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 3px 12px; margin: 0; font-size: 13px; }
#panel dl.facts dt { color: var(--muted); }
#panel dl.facts dd { margin: 0; font-variant-numeric: tabular-nums; word-break: break-word; }
#panel dl.facts dd code { font: 12px var(--mono); }
#panel ul.links { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 5px; }
#panel ul.links button {
  width: 100%; text-align: left; font: inherit; font-size: 13px; background: #f8fafc; border: 1px solid var(--line);
  border-radius: 8px; padding: 6px 10px; cursor: pointer; display: flex; gap: 8px; align-items: baseline;
}
#panel ul.links button:hover { border-color: var(--select); background: #eff6ff; }
#panel ul.links .op { font-size: 11px; font-weight: 700; text-transform: uppercase; letter-spacing: .05em; }
#panel ul.links .sid { margin-left: auto; font: 11px var(--mono); color: var(--faint); }
#panel .none { color: var(--faint); font-style: italic; font-size: 13px; }
.chunk { border: 1px solid var(--line); border-radius: 10px; margin: 0 0 10px; overflow: hidden; background: #fff; }
.chunk.hit { border-color: var(--hot); box-shadow: 0 0 0 3px rgba(245,158,11,.28); }
.chunk .head { display: flex; gap: 8px; align-items: center; padding: 6px 10px; background: #f8fafc; border-bottom: 1px solid var(--line); font-size: 12px; }
.chunk .role { font-weight: 700; text-transform: uppercase; letter-spacing: .05em; font-size: 10.5px; padding: 1px 7px; border-radius: 999px; }
.role-system { background: #e2e8f0; color: #334155; }
.role-user { background: #dbeafe; color: #1d4ed8; }
.role-assistant { background: #dcfce7; color: #15803d; }
.role-tool { background: #fef3c7; color: #b45309; }
.role-event { background: #f3e8ff; color: #7e22ce; }
.chunk .author { font-weight: 600; }
.chunk .when { margin-left: auto; color: var(--faint); font: 11px var(--mono); }
.chunk .body { padding: 8px 10px; }
.chunk pre { margin: 0; white-space: pre-wrap; word-break: break-word; font: 12.5px/1.5 var(--mono); }
.chunk .text { font: 13px/1.5 var(--sans); white-space: pre-wrap; word-break: break-word; margin: 0; }
.chunk .call { margin-top: 6px; border-left: 3px solid #fbbf24; padding: 4px 8px; background: #fffbeb; border-radius: 0 6px 6px 0; }
.chunk .call .name, .chunk .result-name { font: 600 12px var(--mono); }
.chunk .error { color: #b91c1c; font-weight: 600; }
.chunk .meta { color: var(--muted); font-size: 11.5px; margin-top: 6px; }
mark { background: #fde68a; color: inherit; border-radius: 2px; padding: 0 1px; }
table.extras { border-collapse: collapse; width: 100%; font-size: 12.5px; }
table.extras td { border-top: 1px solid var(--line); padding: 4px 6px; vertical-align: top; }
table.extras td:first-child { color: var(--muted); white-space: nowrap; font-family: var(--mono); font-size: 12px; }
table.extras td code { font: 12px var(--mono); word-break: break-word; }
@media (max-width: 900px) { aside#panel { width: 340px; } header.top input[type=search] { width: 200px; } }
`;
