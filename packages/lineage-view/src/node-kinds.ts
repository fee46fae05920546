/** How the viewer draws one family of lineage operations. */
export interface NodeKind {
  /** The family's name in the legend and in CSS classes (`kind-fork`). */
  readonly kind: string;
  /** The legend's label. */
  readonly label: string;
  readonly fill: string;
  readonly stroke: string;
  /** Colour of the operation label on the node. */
  readonly accent: string;
  /** What the shape means, for the legend's tooltip. */
  readonly meaning: string;
}

/** The families, in legend order. */
export const NODE_KINDS: readonly NodeKind[] = [
  {
    kind: "leaf",
    label: "leaf",
    fill: "#f1f5f9",
    stroke: "#64748b",
    accent: "#475569",
    meaning: "a new session: a user message, a system prompt, an empty or detached session",
  },
  {
    kind: "fork",
    label: "fork",
    fill: "#e0f2fe",
    stroke: "#0284c7",
    accent: "#0369a1",
    meaning: "a branch sharing its parent's chunks",
  },
  {
    kind: "merge",
    label: "merge",
    fill: "#fef3c7",
    stroke: "#d97706",
    accent: "#b45309",
    meaning: "two sessions combined (three-way or concat)",
  },
  {
    kind: "loop",
    label: "loop",
    fill: "#dcfce7",
    stroke: "#16a34a",
    accent: "#15803d",
    meaning: "an agent's run: model turns and tool calls",
  },
  {
    kind: "compress",
    label: "compress",
    fill: "#f3e8ff",
    stroke: "#9333ea",
    accent: "#7e22ce",
    meaning: "a compressor's summary replacing the transcript",
  },
  {
    kind: "memory",
    label: "memory",
    fill: "#fce7f3",
    stroke: "#db2777",
    accent: "#be185d",
    meaning: "memory recalled into or committed from the session",
  },
  {
    kind: "workflow",
    label: "workflow",
    fill: "#e0e7ff",
    stroke: "#4f46e5",
    accent: "#4338ca",
    meaning: "a workflow's result",
  },
  {
    kind: "select",
    label: "select",
    fill: "#ffedd5",
    stroke: "#ea580c",
    accent: "#c2410c",
    meaning: "a selector's routing",
  },
  {
    kind: "other",
    label: "other",
    fill: "#f5f5f4",
    stroke: "#78716c",
    accent: "#57534e",
    meaning: "any other operation",
  },
];

export const BY_OP: Readonly<Record<string, string>> = {
  leaf_user: "leaf",
  leaf_system: "leaf",
  create: "leaf",
  detach: "leaf",
  fork: "fork",
  merge: "merge",
  loop: "loop",
  compress: "compress",
  memory: "memory",
  workflow: "workflow",
  select: "select",
};

/** The family a lineage operation is drawn as (unknown operations are `other`). */
export function nodeKindOf(op: string): NodeKind {
  const kind = BY_OP[op] ?? "other";
  return NODE_KINDS.find((k) => k.kind === kind)!;
}

const r = (n: number) => Math.round(n * 10) / 10;

/**
 * The SVG path of a node of family `kind` in the box (x, y, w, h): a stadium for leaves, a
 * hexagon for forks, a chevron (notched in, pointed out) for merges, a rounded box for loops, a
 * trapezoid narrowing to the right for compressions, a cylinder for memory, a folder for
 * workflows, a parallelogram for selections and a plain box for the rest.
 */
export function nodeShapePath(kind: string, x: number, y: number, w: number, h: number): string {
  const e = Math.min(14, w * 0.2);
  const pts = (points: [number, number][]) =>
    `M${points.map(([px, py]) => `${r(px)},${r(py)}`).join(" L")} Z`;
  switch (kind) {
    case "leaf": {
      const rad = h / 2;
      return `M${r(x + rad)},${r(y)} L${r(x + w - rad)},${r(y)} A${r(rad)},${r(rad)} 0 0 1 ${r(x + w - rad)},${r(y + h)} L${r(x + rad)},${r(y + h)} A${r(rad)},${r(rad)} 0 0 1 ${r(x + rad)},${r(y)} Z`;
    }
    case "fork":
      return pts([
        [x + e, y],
        [x + w - e, y],
        [x + w, y + h / 2],
        [x + w - e, y + h],
        [x + e, y + h],
        [x, y + h / 2],
      ]);
    case "merge":
      return pts([
        [x, y],
        [x + w - e, y],
        [x + w, y + h / 2],
        [x + w - e, y + h],
        [x, y + h],
        [x + e, y + h / 2],
      ]);
    case "compress":
      return pts([
        [x, y],
        [x + w, y + h * 0.15],
        [x + w, y + h * 0.85],
        [x, y + h],
      ]);
    case "memory": {
      const ry = Math.round(Math.min(7, h * 0.2));
      return `M${r(x)},${r(y + ry)} A${r(w / 2)},${ry} 0 0 1 ${r(x + w)},${r(y + ry)} L${r(x + w)},${r(y + h - ry)} A${r(w / 2)},${ry} 0 0 1 ${r(x)},${r(y + h - ry)} Z M${r(x)},${r(y + ry)} A${r(w / 2)},${ry} 0 0 0 ${r(x + w)},${r(y + ry)}`;
    }
    case "workflow":
      return pts([
        [x, y],
        [x + Math.min(56, w * 0.35), y],
        [x + Math.min(64, w * 0.45), y + Math.min(7, h * 0.2)],
        [x + w, y + Math.min(7, h * 0.2)],
        [x + w, y + h],
        [x, y + h],
      ]);
    case "select":
      return pts([
        [x + e, y],
        [x + w, y],
        [x + w - e, y + h],
        [x, y + h],
      ]);
    case "loop": {
      const c = Math.min(10, h / 4);
      return `M${r(x + c)},${r(y)} L${r(x + w - c)},${r(y)} Q${r(x + w)},${r(y)} ${r(x + w)},${r(y + c)} L${r(x + w)},${r(y + h - c)} Q${r(x + w)},${r(y + h)} ${r(x + w - c)},${r(y + h)} L${r(x + c)},${r(y + h)} Q${r(x)},${r(y + h)} ${r(x)},${r(y + h - c)} L${r(x)},${r(y + c)} Q${r(x)},${r(y)} ${r(x + c)},${r(y)} Z`;
    }
    default:
      return pts([
        [x, y],
        [x + w, y],
        [x + w, y + h],
        [x, y + h],
      ]);
  }
}
