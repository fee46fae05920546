import type { LineageGraphNode } from "@openrath/core";
import {
  allPaths,
  haystack,
  type LineageViewData,
  NODE_KINDS,
  nodeKindOf,
  nodeShapePath,
} from "@openrath/lineage-view";
import {
  Background,
  Controls,
  type Edge,
  Handle,
  MarkerType,
  MiniMap,
  type Node,
  type NodeProps,
  Position,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
} from "@xyflow/react";
import { memo, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { ChunkPanel } from "./chunk-panel.js";
import {
  LARGE_GRAPH,
  layoutLineage,
  NODE_HEIGHT,
  NODE_WIDTH,
  type Placed,
  RUN_SIZE,
  runsOf,
} from "./layout.js";

export type { LineageViewData, ViewChunk } from "@openrath/lineage-view";

/** Options of {@link LineageView}. */
export interface LineageViewProps {
  readonly data: LineageViewData;
}

interface NodeData extends Record<string, unknown> {
  readonly node: LineageGraphNode;
  readonly isFinal: boolean;
  readonly onPath: boolean;
  readonly dimmed: boolean;
}

type LineageNode = Node<NodeData, "lineage">;

const shortId = (id: string) => id.replace(/-/g, "").slice(-8);

const LineageNodeBox = memo(function LineageNodeBox({ data, selected }: NodeProps<LineageNode>) {
  const { node, isFinal, onPath, dimmed } = data;
  const kind = nodeKindOf(node.op);
  const tokens =
    node.usage && node.usage.totalTokens > 0
      ? ` · ${node.usage.totalTokens.toLocaleString("en-US")} tok`
      : "";
  const classes = ["lineage-node", `kind-${kind.kind}`];
  if (selected) classes.push("selected");
  if (onPath) classes.push("on-path");
  if (dimmed) classes.push("dimmed");
  return (
    <div className={classes.join(" ")} data-id={node.id} data-op={node.op}>
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <svg className="shape" width={NODE_WIDTH} height={NODE_HEIGHT} aria-hidden="true">
        <path
          d={nodeShapePath(kind.kind, 1.5, 1.5, NODE_WIDTH - 3, NODE_HEIGHT - 3)}
          fill={kind.fill}
          stroke={kind.stroke}
          strokeWidth={selected || onPath ? 3 : 1.5}
        />
      </svg>
      <div className="label">
        <div className="row">
          <span className="op" style={{ color: kind.accent }}>
            {node.op}
            {kind.kind === "loop" ? " ↻" : ""}
          </span>
          <span className="sid">{shortId(node.id)}</span>
        </div>
        <div className="operator" title={node.operator}>
          {node.operator.replace(/^Session\./, "")}
        </div>
        <div className="facts">
          {node.chunkCount} chunk{node.chunkCount === 1 ? "" : "s"}
          {tokens}
        </div>
      </div>
      {isFinal ? <span className="badge">final</span> : null}
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
});

const nodeTypes = { lineage: LineageNodeBox };

// Where the node box's Handles sit: 6 px squares centred on the middle of the left and right sides.
const HANDLES: NonNullable<Node["handles"]> = [
  { type: "target", position: Position.Left, x: -3, y: NODE_HEIGHT / 2 - 3, width: 6, height: 6 },
  {
    type: "source",
    position: Position.Right,
    x: NODE_WIDTH - 3,
    y: NODE_HEIGHT / 2 - 3,
    width: 6,
    height: 6,
  },
];

/**
 * The session graph: the lineage DAG left to right (ELK layered layout) in React Flow, node kinds
 * drawn in distinct shapes and colours, pan by drag, zoom by wheel, a minimap, fitted and centred
 * when it opens. Clicking a node (or Enter on a focused one) shows its chunks; the search finds
 * the earliest chunk holding a text and lights up every path from its branch to the final session.
 * Recorded text is rendered as React text, never as markup.
 */
export function LineageView(props: LineageViewProps) {
  return (
    <ReactFlowProvider>
      <LineageCanvas {...props} />
    </ReactFlowProvider>
  );
}

function LineageCanvas({ data }: LineageViewProps) {
  const { graph, finalId } = data;
  const [positions, setPositions] = useState<Map<string, Placed> | null>(null);
  const [layoutError, setLayoutError] = useState<string | null>(null);
  const large = graph.nodes.length > LARGE_GRAPH;
  const [selected, setSelected] = useState<string | null>(null);
  const [query, setQuery] = useState("");
  const [current, setCurrent] = useState(0);
  const flow = useReactFlow();

  const canvas = useRef<HTMLDivElement>(null);
  // Whether the view has been opened on this graph, and how far the drawn nodes move next.
  const opened = useRef(false);
  const shift = useRef<Placed | null>(null);
  useEffect(() => {
    let live = true;
    opened.current = false;
    const box = canvas.current?.getBoundingClientRect();
    const aspect = box && box.height > 0 ? box.width / box.height : 1.6;
    setLayoutError(null);
    const fail = (error: Error) => live && setLayoutError(error.message);
    if (large && runsOf(graph.nodes, RUN_SIZE).length > 1) {
      // The run ending in the newest sessions first (drawn within the second), then every run;
      // the last run is the same block in both, so the view follows it and nothing jumps.
      layoutLineage(graph.nodes, aspect, "last")
        .then((last) => {
          if (!live) return;
          setPositions(last);
          return layoutLineage(graph.nodes, aspect, "all").then((all) => {
            if (!live) return;
            const [anchor] = last.keys();
            const [from, to] = [last.get(anchor ?? ""), all.get(anchor ?? "")];
            shift.current = from && to ? { x: to.x - from.x, y: to.y - from.y } : null;
            setPositions(all);
          });
        })
        .catch(fail);
    } else layoutLineage(graph.nodes, aspect).then((placed) => live && setPositions(placed), fail);
    return () => {
      live = false;
    };
  }, [graph, large]);

  const matches = useMemo(() => {
    const q = query.trim().toLowerCase();
    if (!q) return [];
    // The earliest chunk holding the text produced it; later ones copied or quoted it.
    return data.chunks
      .filter((c) => haystack(c).toLowerCase().includes(q))
      .sort((a, b) => a.createdAt - b.createdAt);
  }, [data.chunks, query]);
  const match = matches.length > 0 ? matches[Math.min(current, matches.length - 1)] : undefined;
  const path = useMemo(
    () => (match ? allPaths(graph, match.sessionId, finalId) : null),
    [graph, match, finalId],
  );

  useEffect(() => {
    if (!match) return;
    setSelected(match.sessionId);
    // Once the panel shows the chunk, bring it into view.
    requestAnimationFrame(() =>
      document
        .querySelector(`[data-chunk-id="${CSS.escape(match.id)}"]`)
        ?.scrollIntoView({ block: "center" }),
    );
  }, [match]);

  const nodes: LineageNode[] = useMemo(() => {
    if (!positions) return [];
    return graph.nodes
      .filter((node) => positions.has(node.id))
      .map((node) => ({
        id: node.id,
        type: "lineage",
        position: positions.get(node.id) ?? { x: 0, y: 0 },
        width: NODE_WIDTH,
        height: NODE_HEIGHT,
        // Handles known up front: React Flow then draws only the visible nodes from the first frame
        // (it renders every node once to measure handles it does not know).
        handles: HANDLES,
        selected: node.id === selected,
        ariaLabel: `${node.op} ${node.operator} ${shortId(node.id)}`,
        data: {
          node,
          isFinal: node.id === finalId,
          onPath: path?.nodes.has(node.id) ?? false,
          dimmed: path !== null && !path.nodes.has(node.id),
        },
      }));
  }, [graph, positions, selected, finalId, path]);

  const edges: Edge[] = useMemo(
    () =>
      graph.edges
        .filter((e) => positions?.has(e.from) && positions.has(e.to))
        .map((e, i) => {
          const hot = path?.edges.has(`${e.from}->${e.to}`) ?? false;
          return {
            id: `${e.from}->${e.to}#${i}`,
            source: e.from,
            target: e.to,
            type: "default",
            className: hot ? "on-path" : path ? "dimmed" : undefined,
            markerEnd: { type: MarkerType.ArrowClosed, color: hot ? "#f59e0b" : "#94a3b8" },
            style: hot ? { stroke: "#f59e0b", strokeWidth: 3 } : { stroke: "#94a3b8", strokeWidth: 1.5 },
            data: { from: e.from, to: e.to },
          };
        }),
    [graph, path, positions],
  );

  // A graph opens fitted whole; a large one on its final session at a readable zoom (fitted, its
  // nodes would be specks and all of them drawn), the minimap and the controls' fit for the rest.
  const open = useCallback(() => {
    requestAnimationFrame(() => {
      const focus = large
        ? (positions?.get(finalId ?? "") ?? positions?.get(graph.nodes[graph.nodes.length - 1]?.id ?? ""))
        : undefined;
      // The final session near the right edge, the work that led to it filling the view.
      const width = (canvas.current?.clientWidth ?? 1000) / 0.75;
      if (focus)
        flow.setCenter(focus.x + NODE_WIDTH * 1.5 - width / 2, focus.y + NODE_HEIGHT / 2, { zoom: 0.75 });
      else flow.fitView({ padding: 0.1, maxZoom: 1.2 });
    });
  }, [flow, large, positions, finalId, graph]);
  useEffect(() => {
    if (!positions) return;
    if (!opened.current) {
      opened.current = true;
      open();
      return;
    }
    // The rest of a large graph arrived: keep the drawn nodes where they are on screen.
    const by = shift.current;
    shift.current = null;
    if (by) {
      const view = flow.getViewport();
      flow.setViewport({ x: view.x - by.x * view.zoom, y: view.y - by.y * view.zoom, zoom: view.zoom });
    }
  }, [positions, open, flow]);

  const focusNode = (id: string) => {
    setSelected(id);
    const p = positions?.get(id);
    if (p)
      flow.setCenter(p.x + NODE_WIDTH / 2, p.y + NODE_HEIGHT / 2, { zoom: flow.getZoom(), duration: 200 });
  };

  const selectedNode = graph.nodes.find((n) => n.id === selected);
  const status = !query.trim()
    ? ""
    : matches.length === 0
      ? "no chunk contains it"
      : `${Math.min(current, matches.length - 1) + 1} of ${matches.length} · from ${match?.author ?? "?"} · ${path?.nodes.size ?? 0} sessions on its paths`;

  return (
    <div className="lineage-view">
      <div className="lineage-toolbar">
        <label className="search">
          <span className="visually-hidden">Search chunks</span>
          <input
            type="search"
            placeholder="Find the chunk that produced a piece of text…"
            value={query}
            aria-label="Search chunks"
            onChange={(e) => {
              setQuery(e.target.value);
              setCurrent(0);
            }}
            onKeyDown={(e) => {
              if (e.key === "Enter" && matches.length > 0) {
                e.preventDefault();
                setCurrent((c) => (c + (e.shiftKey ? matches.length - 1 : 1)) % matches.length);
              } else if (e.key === "Escape") setQuery("");
            }}
          />
        </label>
        <span className="search-status" role="status" aria-live="polite">
          {status}
        </span>
        <ul className="legend" aria-label="Legend">
          {NODE_KINDS.map((k) => (
            <li key={k.kind} title={k.meaning}>
              <svg width="30" height="16" viewBox="0 0 30 16" aria-hidden="true">
                <path
                  d={nodeShapePath(k.kind, 1, 1, 28, 14)}
                  fill={k.fill}
                  stroke={k.stroke}
                  strokeWidth="1.3"
                />
              </svg>
              {k.label}
            </li>
          ))}
        </ul>
      </div>
      <div className="lineage-body">
        <div className="lineage-canvas" aria-label="Session lineage graph" role="application" ref={canvas}>
          {positions ? (
            <ReactFlow
              nodes={nodes}
              edges={edges}
              nodeTypes={nodeTypes}
              onInit={open}
              fitView={!large}
              minZoom={large ? 0.02 : 0.05}
              maxZoom={2.5}
              nodesDraggable={false}
              nodesConnectable={false}
              onlyRenderVisibleElements={large}
              onNodeClick={(_, node) => setSelected(node.id)}
              onNodesChange={(changes) => {
                // Enter or Space on a focused node selects it (React Flow reports it as a change).
                for (const change of changes)
                  if (change.type === "select" && change.selected) setSelected(change.id);
              }}
              proOptions={{ hideAttribution: true }}
            >
              <Background gap={24} color="#e2e8f0" />
              <Controls showInteractive={false} aria-label="Zoom controls" />
              <MiniMap
                pannable
                style={{ width: 150, height: 100 }}
                zoomable
                ariaLabel="Minimap"
                nodeColor={(n) => nodeKindOf((n.data as NodeData).node.op).fill}
                nodeStrokeColor={(n) => nodeKindOf((n.data as NodeData).node.op).stroke}
              />
            </ReactFlow>
          ) : layoutError ? (
            <p className="error pad" role="alert">
              {layoutError}
            </p>
          ) : (
            <p className="muted pad">Laying out {graph.nodes.length} sessions…</p>
          )}
        </div>
        <aside className="lineage-panel" aria-label="Session details">
          {selectedNode ? (
            <ChunkPanel
              data={data}
              node={selectedNode}
              query={query.trim()}
              hitId={match?.id}
              onSelect={focusNode}
            />
          ) : (
            <div className="empty">
              <h2>Select a session</h2>
              <p>Click a node, or focus it and press Enter, to see the chunks appended in it.</p>
              <p>Search for a piece of text: every path it came down to the final session lights up.</p>
            </div>
          )}
        </aside>
      </div>
    </div>
  );
}
