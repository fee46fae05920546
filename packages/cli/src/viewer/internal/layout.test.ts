import { describe, expect, it } from "vitest";
import { type LayoutInput, layoutGraph } from "./layout.js";

const W = 100;
const H = 40;
const options = { nodeWidth: W, nodeHeight: H, columnGap: 50, rowGap: 20, margin: 10 };

/** The MAMS demo's shape: a chain, a three-way fork, two merges, then a chain again. */
const MAMS: LayoutInput[] = [
  { id: "leaf", parents: [] },
  { id: "plan", parents: ["leaf"] },
  { id: "f1", parents: ["plan"] },
  { id: "f2", parents: ["plan"] },
  { id: "f3", parents: ["plan"] },
  { id: "a1", parents: ["f1"] },
  { id: "a2", parents: ["f2"] },
  { id: "a3", parents: ["f3"] },
  { id: "m1", parents: ["a1", "a2"] },
  { id: "m2", parents: ["m1", "a3"] },
  { id: "sum", parents: ["m2"] },
  { id: "out", parents: ["sum"] },
];

function overlaps(layout: ReturnType<typeof layoutGraph>): string[] {
  const nodes = [...layout.nodes.values()];
  const clashes: string[] = [];
  for (const a of nodes) {
    for (const b of nodes) {
      if (a.id < b.id && a.x < b.x + W && b.x < a.x + W && a.y < b.y + H && b.y < a.y + H)
        clashes.push(`${a.id}/${b.id}`);
    }
  }
  return clashes;
}

describe("layoutGraph", () => {
  it("puts each node one layer right of its furthest parent (longest path)", () => {
    const layout = layoutGraph(MAMS, options);
    const layer = (id: string) => layout.nodes.get(id)!.layer;
    expect(["leaf", "plan", "f1", "a1", "m1", "m2", "sum", "out"].map(layer)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7,
    ]);
    expect(layer("a3")).toBe(3);
    for (const n of MAMS) {
      for (const p of n.parents) expect(layout.nodes.get(n.id)!.x).toBeGreaterThan(layout.nodes.get(p)!.x);
    }
    expect(layout.width).toBe(10 + 7 * 150 + W + 10);
  });

  it("orders layers without crossings and keeps nodes apart", () => {
    const layout = layoutGraph(MAMS, options);
    expect(layout.crossings).toBe(0);
    expect(overlaps(layout)).toEqual([]);
    const y = (id: string) => layout.nodes.get(id)!.y;
    // Balanced: a merge sits between its parents, and a chain stays level.
    expect(y("m1")).toBeGreaterThanOrEqual(Math.min(y("a1"), y("a2")));
    expect(y("m1")).toBeLessThanOrEqual(Math.max(y("a1"), y("a2")));
    expect(y("sum")).toBeCloseTo(y("out"));
    for (const n of layout.nodes.values()) {
      expect(n.y).toBeGreaterThanOrEqual(10);
      expect(n.y + H).toBeLessThanOrEqual(layout.height - 10 + 1e-9);
    }
  });

  it("untangles a crossing that the input order would make", () => {
    const input: LayoutInput[] = [
      { id: "r", parents: [] },
      { id: "a", parents: ["r"] },
      { id: "b", parents: ["r"] },
      { id: "a2", parents: ["b"] },
      { id: "b2", parents: ["a"] },
    ];
    const layout = layoutGraph(input, options);
    expect(layout.crossings).toBe(0);
    const order = (id: string) => layout.nodes.get(id)!.order;
    expect(order("a") < order("b")).toBe(order("b2") < order("a2"));
  });

  it("routes an edge that spans layers through one slot per crossed column", () => {
    const layout = layoutGraph(MAMS, options);
    const long = layout.edges.find((e) => e.from === "a3" && e.to === "m2")!;
    expect(long.points).toHaveLength(4);
    const [start, in1, out1, end] = long.points;
    expect(start!.x).toBe(layout.nodes.get("a3")!.x + W);
    expect(in1!.x).toBe(layout.nodes.get("m1")!.x);
    expect(out1!.x).toBe(layout.nodes.get("m1")!.x + W);
    expect(in1!.y).toBe(out1!.y);
    expect(end!.x).toBe(layout.nodes.get("m2")!.x);
    // The slot does not run through the merge in the same column.
    const m1 = layout.nodes.get("m1")!;
    expect(in1!.y < m1.y || in1!.y > m1.y + H).toBe(true);
    const short = layout.edges.find((e) => e.from === "plan" && e.to === "f1")!;
    expect(short.points).toHaveLength(2);
    expect(layout.edges).toHaveLength(MAMS.reduce((n, m) => n + m.parents.length, 0));
  });

  it("spreads the edges at a node's side instead of stacking them on one point", () => {
    const layout = layoutGraph(MAMS, options);
    const outOfPlan = layout.edges.filter((e) => e.from === "plan").map((e) => e.points[0]!.y);
    expect(new Set(outOfPlan).size).toBe(3);
    const plan = layout.nodes.get("plan")!;
    for (const y of outOfPlan) expect(y > plan.y && y < plan.y + H).toBe(true);
  });

  it("handles an empty input, unknown parents and a cycle without hanging", () => {
    expect(layoutGraph([], options)).toMatchObject({ width: 20, crossings: 0 });
    const orphan = layoutGraph([{ id: "x", parents: ["not-there"] }], options);
    expect(orphan.nodes.get("x")).toMatchObject({ layer: 0, x: 10 });
    const cycle = layoutGraph(
      [
        { id: "a", parents: ["b"] },
        { id: "b", parents: ["a"] },
      ],
      options,
    );
    expect(cycle.nodes.size).toBe(2);
  });

  it("lays out a thousand-node run without overlaps", () => {
    const big: LayoutInput[] = [{ id: "n0", parents: [] }];
    for (let i = 1; i < 1000; i++) {
      big.push({
        id: `n${i}`,
        parents: i % 7 === 0 ? [`n${i - 1}`, `n${i - 5}`] : [`n${Math.floor((i - 1) / 2)}`],
      });
    }
    const layout = layoutGraph(big, options);
    expect(layout.nodes.size).toBe(1000);
    expect(overlaps(layout)).toEqual([]);
  });
});
