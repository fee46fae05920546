/** A node to lay out: an id and the ids of its parents (parents outside the input are ignored). */
export interface LayoutInput {
  readonly id: string;
  readonly parents: readonly string[];
}

/** Sizes of a layout, in CSS pixels. */
export interface LayoutOptions {
  readonly nodeWidth?: number;
  readonly nodeHeight?: number;
  /** Horizontal space between two layers. */
  readonly columnGap?: number;
  /** Vertical space between two nodes of a layer. */
  readonly rowGap?: number;
  /** Space around the drawing. */
  readonly margin?: number;
}

/** A placed node: its layer (column), its rank in the layer and its top-left corner. */
export interface PlacedNode {
  readonly id: string;
  readonly layer: number;
  readonly order: number;
  readonly x: number;
  readonly y: number;
}

/** A routed edge: points from the parent's right side, through the columns it crosses, to the child's left side. */
export interface RoutedEdge {
  readonly from: string;
  readonly to: string;
  readonly points: readonly { readonly x: number; readonly y: number }[];
}

/** The result of {@link layoutGraph}. */
export interface GraphLayout {
  readonly nodes: ReadonlyMap<string, PlacedNode>;
  readonly edges: readonly RoutedEdge[];
  readonly width: number;
  readonly height: number;
  readonly nodeWidth: number;
  readonly nodeHeight: number;
  /** Number of edge crossings between adjacent layers in the chosen order. */
  readonly crossings: number;
}

interface Vertex {
  readonly key: string;
  readonly real: boolean;
  readonly layer: number;
  readonly index: number;
  readonly preds: Vertex[];
  readonly succs: Vertex[];
  pos: number;
  y: number;
}

const DUMMY_HEIGHT = 10;

/**
 * Lays a DAG out left to right in the Sugiyama style: longest-path layering (a node sits one
 * column right of its furthest parent), dummy vertices on edges that span several columns,
 * crossing reduction by alternating barycenter sweeps (the order with the fewest crossings wins),
 * and vertical placement that pulls each node towards its neighbours while keeping the order
 * (an isotonic regression per layer, repeated downwards and upwards).
 */
export function layoutGraph(input: readonly LayoutInput[], options: LayoutOptions = {}): GraphLayout {
  const W = options.nodeWidth ?? 184;
  const H = options.nodeHeight ?? 60;
  const columnGap = options.columnGap ?? 56;
  const rowGap = options.rowGap ?? 24;
  const margin = options.margin ?? 28;
  const ids = new Set(input.map((n) => n.id));
  const byId = new Map(input.map((n) => [n.id, n]));

  // Longest-path layering, iterative so deep chains do not overflow the stack.
  const layerOf = new Map<string, number>();
  const pending = new Map(input.map((n) => [n.id, n.parents.filter((p) => ids.has(p) && p !== n.id).length]));
  const children = new Map<string, string[]>();
  for (const n of input) {
    for (const p of new Set(n.parents))
      if (ids.has(p) && p !== n.id) children.set(p, [...(children.get(p) ?? []), n.id]);
  }
  const queue = input.filter((n) => pending.get(n.id) === 0).map((n) => n.id);
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!;
    const parents = byId.get(id)!.parents.filter((p) => layerOf.has(p));
    layerOf.set(id, parents.length === 0 ? 0 : 1 + Math.max(...parents.map((p) => layerOf.get(p)!)));
    for (const c of children.get(id) ?? []) {
      const left = pending.get(c)! - 1;
      pending.set(c, left);
      if (left === 0) queue.push(c);
    }
  }
  // A cycle cannot come from lineage, but a hand-made input might: put what is left after the rest.
  let extra = Math.max(-1, ...layerOf.values()) + 1;
  for (const n of input) if (!layerOf.has(n.id)) layerOf.set(n.id, extra++);

  const layerCount = Math.max(0, ...layerOf.values()) + 1;
  const layers: Vertex[][] = Array.from({ length: input.length === 0 ? 0 : layerCount }, () => []);
  const vertexOf = new Map<string, Vertex>();
  const add = (key: string, real: boolean, layer: number): Vertex => {
    const v: Vertex = { key, real, layer, index: vertexOf.size, preds: [], succs: [], pos: 0, y: 0 };
    layers[layer]!.push(v);
    vertexOf.set(key, v);
    return v;
  };
  for (const n of input) add(n.id, true, layerOf.get(n.id)!);
  const chains: { from: string; to: string; vertices: Vertex[] }[] = [];
  for (const n of input) {
    const seen = new Set<string>();
    for (const p of n.parents) {
      if (!ids.has(p) || p === n.id || seen.has(p)) continue;
      seen.add(p);
      let prev = vertexOf.get(p)!;
      const target = vertexOf.get(n.id)!;
      const chain = [prev];
      // An edge that points backwards (only possible for a cyclic input) is drawn without dummies.
      for (let layer = prev.layer + 1; layer < target.layer; layer++) {
        const dummy = add(`${p}→${n.id}#${layer}`, false, layer);
        prev.succs.push(dummy);
        dummy.preds.push(prev);
        chain.push(dummy);
        prev = dummy;
      }
      prev.succs.push(target);
      target.preds.push(prev);
      chain.push(target);
      chains.push({ from: p, to: n.id, vertices: chain });
    }
  }

  // Crossing reduction.
  const renumber = (layer: Vertex[]) => {
    for (const [i, v] of layer.entries()) v.pos = i;
  };
  for (const layer of layers) {
    layer.sort((a, b) => a.index - b.index);
    renumber(layer);
  }
  const sortBy = (layer: Vertex[], neighbours: (v: Vertex) => Vertex[]) => {
    const key = new Map<Vertex, number>();
    for (const v of layer) {
      const ns = neighbours(v);
      key.set(v, ns.length === 0 ? v.pos : ns.reduce((s, n) => s + n.pos, 0) / ns.length);
    }
    layer.sort((a, b) => key.get(a)! - key.get(b)! || a.pos - b.pos);
    renumber(layer);
  };
  for (let i = 1; i < layers.length; i++) sortBy(layers[i]!, (v) => v.preds);
  let best = layers.map((l) => [...l]);
  let bestCrossings = countCrossings(layers);
  for (let sweep = 0; sweep < 24 && bestCrossings > 0; sweep++) {
    if (sweep % 2 === 0) for (let i = layers.length - 2; i >= 0; i--) sortBy(layers[i]!, (v) => v.succs);
    else for (let i = 1; i < layers.length; i++) sortBy(layers[i]!, (v) => v.preds);
    const crossings = countCrossings(layers);
    if (crossings < bestCrossings) {
      bestCrossings = crossings;
      best = layers.map((l) => [...l]);
    }
  }
  for (const [i, layer] of best.entries()) {
    layers[i] = layer;
    renumber(layer);
  }

  // Vertical placement: start packed and centred, then pull towards neighbours.
  const height = (v: Vertex) => (v.real ? H : DUMMY_HEIGHT);
  const gap = (a: Vertex, b: Vertex) =>
    (height(a) + height(b)) / 2 + (a.real && b.real ? rowGap : rowGap / 2);
  for (const layer of layers) {
    let y = 0;
    layer.forEach((v, i) => {
      if (i > 0) y += gap(layer[i - 1]!, v);
      v.y = y;
    });
    for (const v of layer) v.y -= y / 2;
  }
  const place = (layer: Vertex[], neighbours: (v: Vertex) => Vertex[]) => {
    const desired = layer.map((v) => {
      const ns = neighbours(v);
      return ns.length === 0 ? v.y : ns.reduce((s, n) => s + n.y, 0) / ns.length;
    });
    const weights = layer.map((v) => (v.real ? 1 : 0.6));
    const offsets: number[] = [];
    let acc = 0;
    layer.forEach((v, i) => {
      if (i > 0) acc += gap(layer[i - 1]!, v);
      offsets.push(acc);
    });
    const z = isotonic(
      desired.map((d, i) => d - offsets[i]!),
      weights,
    );
    for (const [i, v] of layer.entries()) v.y = z[i]! + offsets[i]!;
  };
  for (let pass = 0; pass < 8; pass++) {
    for (let i = 1; i < layers.length; i++) place(layers[i]!, (v) => v.preds);
    for (let i = layers.length - 2; i >= 0; i--) place(layers[i]!, (v) => v.succs);
  }
  for (let i = 1; i < layers.length; i++) place(layers[i]!, (v) => [...v.preds, ...v.succs]);

  let top = Number.POSITIVE_INFINITY;
  let bottom = Number.NEGATIVE_INFINITY;
  for (const v of vertexOf.values()) {
    top = Math.min(top, v.y - height(v) / 2);
    bottom = Math.max(bottom, v.y + height(v) / 2);
  }
  if (!Number.isFinite(top)) top = bottom = 0;
  const shift = margin - top;
  const columnX = (layer: number) => margin + layer * (W + columnGap);
  const nodes = new Map<string, PlacedNode>();
  for (const layer of layers) {
    for (const v of layer) {
      if (v.real)
        nodes.set(v.key, {
          id: v.key,
          layer: v.layer,
          order: v.pos,
          x: columnX(v.layer),
          y: v.y + shift - H / 2,
        });
    }
  }

  // Edge ports: the edges at a node's side are spread out, ordered by where their other end lies.
  const portY = new Map<string, number>();
  const spread = (v: Vertex, side: "in" | "out") => {
    const others = (side === "in" ? v.preds : v.succs).slice().sort((a, b) => a.y - b.y);
    const step = Math.min(10, (H - 16) / Math.max(1, others.length - 1));
    others.forEach((o, i) => {
      portY.set(`${side}:${v.key}:${o.key}`, v.y + shift + (i - (others.length - 1) / 2) * step);
    });
  };
  for (const v of vertexOf.values()) {
    if (!v.real) continue;
    spread(v, "in");
    spread(v, "out");
  }
  const edges: RoutedEdge[] = chains.map(({ from, to, vertices }) => {
    const points: { x: number; y: number }[] = [];
    const first = vertices[0]!;
    const second = vertices[1]!;
    points.push({ x: columnX(first.layer) + W, y: portY.get(`out:${first.key}:${second.key}`)! });
    for (const v of vertices.slice(1, -1)) {
      points.push({ x: columnX(v.layer), y: v.y + shift }, { x: columnX(v.layer) + W, y: v.y + shift });
    }
    const last = vertices.at(-1)!;
    const before = vertices.at(-2)!;
    points.push({ x: columnX(last.layer), y: portY.get(`in:${last.key}:${before.key}`)! });
    return { from, to, points };
  });

  return {
    nodes,
    edges,
    width: input.length === 0 ? 2 * margin : columnX(layerCount - 1) + W + margin,
    height: bottom - top + 2 * margin,
    nodeWidth: W,
    nodeHeight: H,
    crossings: bestCrossings,
  };
}

/** Crossings between every two adjacent layers, counted as inversions of their edge list. */
function countCrossings(layers: readonly Vertex[][]): number {
  let total = 0;
  for (let i = 0; i + 1 < layers.length; i++) {
    const ends: number[] = [];
    for (const v of [...layers[i]!].sort((a, b) => a.pos - b.pos)) {
      for (const s of v.succs.map((s) => s.pos).sort((a, b) => a - b)) ends.push(s);
    }
    total += inversions(ends);
  }
  return total;
}

function inversions(values: number[]): number {
  if (values.length < 2) return 0;
  const mid = values.length >> 1;
  const left = values.slice(0, mid);
  const right = values.slice(mid);
  let count = inversions(left) + inversions(right);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < left.length && j < right.length) {
    if (left[i]! <= right[j]!) values[k++] = left[i++]!;
    else {
      values[k++] = right[j++]!;
      count += left.length - i;
    }
  }
  while (i < left.length) values[k++] = left[i++]!;
  while (j < right.length) values[k++] = right[j++]!;
  return count;
}

/** Weighted least-squares fit of a non-decreasing sequence to `values` (pool adjacent violators). */
function isotonic(values: readonly number[], weights: readonly number[]): number[] {
  const blocks: { value: number; weight: number; size: number }[] = [];
  values.forEach((value, i) => {
    blocks.push({ value, weight: weights[i]!, size: 1 });
    while (blocks.length > 1 && blocks.at(-2)!.value > blocks.at(-1)!.value) {
      const b = blocks.pop()!;
      const a = blocks.pop()!;
      const weight = a.weight + b.weight;
      blocks.push({
        value: (a.value * a.weight + b.value * b.weight) / weight,
        weight,
        size: a.size + b.size,
      });
    }
  });
  return blocks.flatMap((b) => Array.from({ length: b.size }, () => b.value));
}
