import { lineageGraph, Session } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { allPaths, lineageFromSessions, mergeSides, type SessionJsonLike } from "./lineage-data.js";

const json = (s: Session) => s.toJSON() as unknown as SessionJsonLike;

describe("allPaths", () => {
  it("lights up every path from a branch to the final session, not only the shortest", () => {
    // a → b → d, a → c → x → d, and e off to the side.
    const node = (id: string, parents: string[]) => ({
      id,
      op: "fork",
      operator: id,
      parents,
      extras: {},
      createdAt: 0,
      chunkCount: 0,
      usage: null,
    });
    const nodes = [
      node("a", []),
      node("b", ["a"]),
      node("c", ["a"]),
      node("x", ["c"]),
      node("d", ["b", "x"]),
      node("e", ["a"]),
    ];
    const edges = nodes.flatMap((n) => n.parents.map((p) => ({ from: p, to: n.id, op: n.op })));
    const graph = { nodes, edges } as unknown as Parameters<typeof allPaths>[0];
    const paths = allPaths(graph, "a", "d");
    expect([...paths.nodes].sort()).toEqual(["a", "b", "c", "d", "x"]);
    expect([...paths.edges].sort()).toEqual(["a->b", "a->c", "b->d", "c->x", "x->d"]);
    // A branch the final session does not descend from lights up alone.
    expect([...allPaths(graph, "e", "d").nodes]).toEqual(["e"]);
  });
});

describe("lineageFromSessions", () => {
  it("rebuilds the transcripts of sessions seen only through lineage, and a merge's shared prefix and sides", () => {
    const question = Session.fromUserMessage("What is 6 × 7?", { author: "user" });
    const left = question
      .fork({ operator: "planner→alice" })
      .derive({ op: "loop", operator: "alice" })
      .append({ kind: "assistant", author: "alice", content: "Alice: 42." });
    const right = question
      .fork({ operator: "planner→bob" })
      .derive({ op: "loop", operator: "bob" })
      .append({ kind: "assistant", author: "bob", content: "Bob: 42 </script><b>x</b>" })
      .append({ kind: "assistant", author: "bob", content: "Bob again." });
    const merged = left.merge(right);
    const final = merged.derive({ op: "workflow", operator: "team" });
    // What a run's checkpoints hold: the left branch, then the workflow's result.
    const data = lineageFromSessions([json(left), json(final)]);
    expect(data.finalId).toBe(final.lineage.id);
    expect(data.graph.nodes.map((n) => n.id)).toEqual(lineageGraph(final).nodes.map((n) => n.id));
    const bob = data.graph.nodes.find((n) => n.operator === "bob")!;
    expect(data.transcripts?.get(bob.id)?.map((c) => c.content)).toEqual([
      "What is 6 × 7?",
      "Bob: 42 </script><b>x</b>",
      "Bob again.",
    ]);
    const mergeNode = data.graph.nodes.find((n) => n.op === "merge")!;
    const sides = mergeSides(data, mergeNode)!;
    expect(sides.shared.map((c) => c.content)).toEqual(["What is 6 × 7?"]);
    expect(sides.left.map((c) => c.content)).toEqual(["Alice: 42."]);
    expect(sides.right.map((c) => c.content)).toEqual(["Bob: 42 </script><b>x</b>", "Bob again."]);
    expect(mergeNode.chunkCount).toBe(merged.length);
  });
});
