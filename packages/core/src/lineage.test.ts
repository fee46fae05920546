import {
  type ChunkInput,
  type LineageGraph,
  LineageNode,
  lineageGraph,
  lineageToDot,
  lineageToJsonl,
  lineageToMermaid,
  lineageToText,
  OpenRathError,
  provenance,
  Session,
  shortId,
  type Usage,
} from "@openrath/core";
import { describe, expect, it } from "vitest";
import { originalLineageKind } from "./lineage.js";

const usage = (p: number, c: number): Usage => ({ promptTokens: p, completionTokens: c, totalTokens: p + c });
const say = (content: string, extra: Partial<ChunkInput> = {}): ChunkInput =>
  ({ kind: "assistant", content, ...extra }) as ChunkInput;

/** The OpenRathError `fn` throws (failing the test if it throws anything else or nothing). */
function thrown(fn: () => unknown): OpenRathError {
  try {
    fn();
  } catch (error) {
    if (OpenRathError.isInstance(error)) return error;
    throw error;
  }
  return expect.fail("expected an OpenRathError");
}

/** A small DAG: a question forked twice, each fork answering, then merged. */
function diamond() {
  const root = Session.fromUserMessage("q");
  const grown = root.append(say("context", { usage: usage(10, 1) }));
  const left = grown.fork().append(say("left", { usage: usage(1, 1) }));
  const right = grown.fork().append(say("right", { usage: usage(2, 2) }), say("right 2"));
  const merged = left.merge(right);
  return { root, grown, left, right, merged };
}

/** Fails unless every node comes after all of its parents. */
function expectParentsFirst(graph: LineageGraph) {
  const position = new Map(graph.nodes.map((n, i) => [n.id, i]));
  for (const [i, node] of graph.nodes.entries()) {
    for (const parent of node.parents) expect(position.get(parent)).toBeLessThan(i);
  }
}

describe("LineageNode", () => {
  it("keeps its own copies of parents and extras, unaffected by later changes to either side", () => {
    const p1 = new LineageNode("p1", "create", "test");
    const p2 = new LineageNode("p2", "create", "test");
    for (const given of [[p1], [p1, p2]]) {
      const parents = [...given];
      const extras = { a: 1 };
      const node = new LineageNode("c", "merge", "test", parents, extras, 3, 42);
      parents.push(p2);
      extras.a = 2;
      try {
        (node.parents as LineageNode[]).push(p2);
      } catch {
        // A frozen array refuses the push, which is just as good.
      }
      expect(node.parents).toEqual(given);
      expect(node.extras).toEqual({ a: 1 });
      expect(Object.isFrozen(node.extras)).toBe(true);
      expect([node.length, node.createdAt]).toEqual([3, 42]);
    }
  });

  it("takes a single parent node as well as an array", () => {
    const parent = new LineageNode("p", "create", "test");
    expect(new LineageNode("c", "fork", "test", parent).parents).toEqual([parent]);
  });

  it("reads createdAt from a UUID v7 id when none is given", () => {
    const s = Session.fromUserMessage("q");
    const node = new LineageNode(s.id, "fork", "test");
    expect(node.createdAt).toBe(Number.parseInt(s.id.replace(/-/g, "").slice(0, 12), 16));
    expect(new LineageNode(s.id, "fork", "test", [], {}, 0, 7).createdAt).toBe(7);
  });

  it("defaults to no parents, no extras, length 0 and the current time", () => {
    const before = Date.now();
    const node = new LineageNode("n", "create", "test");
    expect(node.parents).toEqual([]);
    expect(node.extras).toEqual({});
    expect(node.length).toBe(0);
    expect(node.createdAt).toBeGreaterThanOrEqual(before);
    expect(node.createdAt).toBeLessThanOrEqual(Date.now());
  });
});

describe("lineageGraph", () => {
  it("lists nodes parents first, in a stable depth-first order", () => {
    const { root, left, right, merged } = diamond();
    const graph = lineageGraph(merged);
    expect(graph.nodes.map((n) => n.id)).toEqual([root.id, left.id, right.id, merged.id]);
    expectParentsFirst(graph);
  });

  it("lists a node reached twice once, whether through two parents or two sources", () => {
    const { root, left, right, merged } = diamond();
    const graph = lineageGraph(merged, left, right, merged, root);
    expect(graph.nodes.map((n) => n.id)).toEqual([root.id, left.id, right.id, merged.id]);
  });

  it("gives one edge per parent, labelled with the child's operation", () => {
    const { root, left, right, merged } = diamond();
    expect(lineageGraph(merged).edges).toEqual([
      { from: root.id, to: left.id, op: "fork" },
      { from: root.id, to: right.id, op: "fork" },
      { from: left.id, to: merged.id, op: "merge" },
      { from: right.id, to: merged.id, op: "merge" },
    ]);
  });

  it("copies op, operator, parents, extras and createdAt from each node", () => {
    const { root, merged } = diamond();
    const [rootNode, , , mergeNode] = lineageGraph(merged).nodes;
    expect(rootNode).toMatchObject({
      id: root.id,
      op: "leaf_user",
      operator: "Session.fromUserMessage",
      parents: [],
      extras: { source: "Session.fromUserMessage" },
      createdAt: root.lineage.createdAt,
    });
    expect(mergeNode).toMatchObject({
      op: "merge",
      operator: "Session.merge",
      parents: merged.lineage.parents.map((p) => p.id),
      extras: merged.lineage.extras,
    });
  });

  it("gives the chunk count and usage of the sessions passed in", () => {
    const { merged, left } = diamond();
    const nodes = lineageGraph(merged, left).nodes;
    const byId = new Map(nodes.map((n) => [n.id, n]));
    expect(byId.get(merged.id)!.chunkCount).toBe(merged.length);
    expect(byId.get(merged.id)!.usage).toStrictEqual(merged.usage);
    expect(byId.get(left.id)!.chunkCount).toBe(3);
    expect(byId.get(left.id)!.usage).toStrictEqual(usage(11, 2));
  });

  it("gives ancestors the chunk count their children recorded, and null usage", () => {
    const { root, left, right, merged } = diamond();
    const byId = new Map(lineageGraph(merged).nodes.map((n) => [n.id, n]));
    // The root was made with one chunk and had two when it was forked.
    expect(root.lineage.length).toBe(1);
    expect(byId.get(root.id)!.chunkCount).toBe(2);
    expect(byId.get(root.id)!.usage).toBeNull();
    // Each fork was forked with two chunks; the merge recorded how many each side had by then.
    expect(left.lineage.length).toBe(2);
    expect(byId.get(left.id)!.chunkCount).toBe(3);
    expect(byId.get(right.id)!.chunkCount).toBe(4);
    expect(byId.get(right.id)!.usage).toBeNull();
  });

  it("infers each side's count from a concat merge as well", () => {
    const base = Session.fromUserMessage("q");
    const a = base.fork().append(say("a1"), say("a2"));
    const b = base.fork().append(say("b1"));
    const byId = new Map(lineageGraph(a.merge(b, { strategy: "concat" })).nodes.map((n) => [n.id, n]));
    expect(byId.get(a.id)!.chunkCount).toBe(3);
    expect(byId.get(b.id)!.chunkCount).toBe(2);
  });

  it("takes the largest count any child recorded for an ancestor", () => {
    const root = Session.fromUserMessage("q");
    const early = root.fork();
    const late = root.append(say("a"), say("b")).fork();
    const byId = new Map(lineageGraph(early, late).nodes.map((n) => [n.id, n]));
    expect(byId.get(root.id)!.chunkCount).toBe(3);
  });

  it("counts the newest version when the same session is passed in two versions", () => {
    const s = Session.fromUserMessage("q");
    const longer = s.append(say("a"), say("b"));
    expect(lineageGraph(s, longer).nodes[0]!.chunkCount).toBe(3);
    expect(lineageGraph(longer, s).nodes[0]!.chunkCount).toBe(3);
  });

  it("accepts bare lineage nodes, which have no usage", () => {
    const { merged } = diamond();
    const graph = lineageGraph(merged.lineage);
    expect(graph.nodes).toHaveLength(4);
    expect(graph.nodes.every((n) => n.usage === null)).toBe(true);
    expect(graph.nodes[3]!.chunkCount).toBe(merged.lineage.length);
  });

  it("gives an empty graph for no sources", () => {
    expect(lineageGraph()).toEqual({ nodes: [], edges: [] });
  });

  it("walks a chain of 20,000 forks without overflowing the stack", () => {
    const root = Session.fromUserMessage("deep");
    let s = root;
    for (let i = 0; i < 20_000; i++) s = s.fork();
    const graph = lineageGraph(s);
    expect(graph.nodes).toHaveLength(20_001);
    expect(graph.edges).toHaveLength(20_000);
    expect(graph.nodes[0]!.id).toBe(root.id);
    expect(graph.nodes[20_000]!.id).toBe(s.id);
    expectParentsFirst(graph);
    expect(lineageToJsonl(graph).split("\n")).toHaveLength(20_002);
  });

  it("serializes and restores a chain of 20,000 forks without overflowing the stack", () => {
    let s = Session.fromUserMessage("deep");
    for (let i = 0; i < 20_000; i++) s = i % 1000 === 0 ? s.fork().append(say(`at ${i}`)) : s.fork();
    const json = s.toJSON();
    expect(json.lineage).toHaveLength(20_001);
    const restored = Session.fromJSON(JSON.stringify(json));
    expect(restored.id).toBe(s.id);
    expect(restored.length).toBe(21);
    expect(restored.toJSON()).toEqual(json);
    expect(lineageGraph(restored).nodes).toHaveLength(20_001);
  });
});

describe("originalLineageKind", () => {
  it.each([
    ["leaf_user", "leaf_user"],
    ["leaf_system", "leaf_system"],
    ["unknown", "unknown"],
    ["create", "op_create"],
    ["fork", "op_fork"],
    ["detach", "op_detach"],
    ["merge", "op_merge"],
    ["loop", "op_session_loop"],
    ["compress", "op_session_compress"],
    ["select", "op_select"],
    ["workflow", "op_workflow"],
  ])("maps %s to the original's %s", (op, kind) => {
    expect(originalLineageKind(op)).toBe(kind);
  });
});

describe("lineageToJsonl", () => {
  const parse = (jsonl: string) =>
    jsonl
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it("writes one line per node, each ending in a newline", () => {
    const { merged } = diamond();
    const jsonl = lineageToJsonl(merged);
    expect(jsonl.endsWith("\n")).toBe(true);
    expect(jsonl.split("\n")).toHaveLength(5);
    expect(jsonl.split("\n")[4]).toBe("");
    expect(lineageToJsonl(lineageGraph())).toBe("");
  });

  it("uses exactly the original's keys in the original's order", () => {
    const { merged } = diamond();
    for (const record of parse(lineageToJsonl(merged))) {
      expect(Object.keys(record)).toEqual([
        "id",
        "parent_session_ids",
        "lineage_operator",
        "lineage_kind",
        "lineage_extras",
        "chunk_count",
        "cumulative_usage",
      ]);
    }
  });

  it("writes the original's values: kinds, extras as pairs, snake_case usage or null", () => {
    const { root, left, right, merged } = diamond();
    const [r, l, , m] = parse(lineageToJsonl(merged));
    expect(r).toEqual({
      id: root.id,
      parent_session_ids: [],
      lineage_operator: "Session.fromUserMessage",
      lineage_kind: "leaf_user",
      lineage_extras: [["source", "Session.fromUserMessage"]],
      chunk_count: 2,
      cumulative_usage: null,
    });
    expect(l).toMatchObject({
      id: left.id,
      parent_session_ids: [root.id],
      lineage_kind: "op_fork",
      lineage_extras: [],
    });
    expect(m).toEqual({
      id: merged.id,
      parent_session_ids: [left.id, right.id],
      lineage_operator: "Session.merge",
      lineage_kind: "op_merge",
      lineage_extras: [
        ["strategy", "three-way"],
        ["merge.shared", 2],
        ["merge.left", 1],
        ["merge.right", 2],
      ],
      chunk_count: 5,
      cumulative_usage: { prompt_tokens: 13, completion_tokens: 4, total_tokens: 17 },
    });
  });

  it("accepts a graph, one session or an array of sessions", () => {
    const { left, right } = diamond();
    const fromArray = parse(lineageToJsonl([left, right]));
    expect(fromArray.map((r) => r.id)).toEqual(lineageGraph(left, right).nodes.map((n) => n.id));
    expect(lineageToJsonl(lineageGraph(left, right))).toBe(lineageToJsonl([left, right]));
    expect(parse(lineageToJsonl(left))).toHaveLength(2);
  });

  it("keeps non-ASCII text as is", () => {
    const s = Session.fromUserMessage("q").fork({ operator: "計画 → Κρήτη" });
    expect(lineageToJsonl(s)).toContain('"lineage_operator":"計画 → Κρήτη"');
  });
});

describe("lineageToMermaid and lineageToDot", () => {
  const { root, left, right, merged } = diamond();
  const all = [root, left, right, merged];

  it("draw every node in Mermaid, with its op, operator, short id and chunk count", () => {
    const mermaid = lineageToMermaid(merged);
    expect(mermaid.startsWith("flowchart LR\n")).toBe(true);
    expect(mermaid.endsWith("\n")).toBe(true);
    for (const s of all) expect(mermaid).toContain(shortId(s.id));
    expect(mermaid).toContain('s0(["leaf_user<br/>Session.fromUserMessage<br/>');
    expect(mermaid).toContain('s1{{"fork<br/>Session.fork<br/>');
    expect(mermaid).toContain('s3{"merge<br/>Session.merge<br/>');
    expect(mermaid).toContain(`${shortId(merged.id)} · 5 chunks<br/>17 tokens"}`);
    expect(mermaid).toContain(`${shortId(root.id)} · 2 chunks"])`);
    expect(mermaid).toContain("class s1,s2 op-fork");
  });

  it("draw every edge in Mermaid, labelled with the child's op", () => {
    const mermaid = lineageToMermaid(merged);
    const edges = mermaid.split("\n").filter((line) => line.includes("-->"));
    expect(edges).toEqual([
      '  s0 -->|"fork"| s1',
      '  s0 -->|"fork"| s2',
      '  s1 -->|"merge"| s3',
      '  s2 -->|"merge"| s3',
    ]);
  });

  it("draw every node and edge in DOT", () => {
    const dot = lineageToDot(merged);
    expect(dot.startsWith("digraph lineage {\n")).toBe(true);
    expect(dot.endsWith("}\n")).toBe(true);
    for (const s of all) expect(dot).toContain(shortId(s.id));
    expect(dot).toContain('s0 [label="leaf_user\\nSession.fromUserMessage\\n');
    expect(dot).toContain("shape=hexagon");
    expect(dot).toContain("shape=diamond");
    const edges = dot.split("\n").filter((line) => line.includes("->"));
    expect(edges).toEqual([
      '  s0 -> s1 [label="fork"];',
      '  s0 -> s2 [label="fork"];',
      '  s1 -> s3 [label="merge"];',
      '  s2 -> s3 [label="merge"];',
    ]);
  });

  it("escape quotes and angle brackets in Mermaid labels", () => {
    const tricky = Session.fromUserMessage("q").fork({ operator: 'Agent("<coder>")' });
    const mermaid = lineageToMermaid(tricky);
    expect(mermaid).toContain("Agent(#34;#60;coder#62;#34;)");
    expect(mermaid).not.toContain('Agent("');
  });

  it("escape quotes and backslashes in DOT labels", () => {
    const tricky = Session.fromUserMessage("q").fork({ operator: 'say "hi" \\ bye' });
    const dot = lineageToDot(tricky);
    expect(dot).toContain('say \\"hi\\" \\\\ bye');
    expect(dot).not.toContain('say "hi"');
    const customOp = Session.fromUserMessage("q").derive({ op: 'v"2', operator: "x" });
    expect(lineageToDot(customOp)).toContain('[label="v\\"2"];');
  });

  it("escape quotes and pipes in Mermaid edge labels", () => {
    const customOp = Session.fromUserMessage("q").derive({ op: 'a|b "c"', operator: "x" });
    const edge = lineageToMermaid(customOp)
      .split("\n")
      .find((line) => line.includes("-->"))!;
    expect(edge).not.toContain('"c"');
    expect(edge).not.toContain("a|b");
  });

  it("give the same drawing for a graph as for the sessions it came from", () => {
    expect(lineageToMermaid(lineageGraph(merged))).toBe(lineageToMermaid(merged));
    expect(lineageToDot([left, right])).toBe(lineageToDot(lineageGraph(left, right)));
  });
});

describe("lineage exports of hostile labels", () => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters that must not get through.
  const BREAKERS = /[\r\u2028\u202e\u001b]/;
  // Everything that breaks a line, a Mermaid statement, a label, a comment or a terminal.
  const nasty = 'x\ny\r\n%% comment"]) --> s0\n#quot; `tick` ; end\u2028\u202e\u001b[31m|{}<>\\';
  /**
   * The lineage of a session whose op and operator are hostile, with a hostile id put into the
   * graph: `fromJSON` refuses such an id, but the exporters also draw graphs handed to them as data.
   */
  function hostile(): LineageGraph {
    const parent = Session.fromUserMessage("q").fork({ operator: nasty });
    const session = parent.derive({ op: nasty, operator: nasty });
    const graph = lineageGraph(session);
    const rename = (id: string) => (id === session.id ? `${nasty}-id` : id);
    return {
      nodes: graph.nodes.map((n) => ({ ...n, id: rename(n.id), parents: n.parents.map(rename) })),
      edges: graph.edges.map((e) => ({ ...e, from: rename(e.from), to: rename(e.to) })),
    };
  }

  it("Mermaid: every node and edge stays one statement, no %% and no raw breaker survives", () => {
    const graph = hostile();
    const mermaid = lineageToMermaid(graph);
    const lines = mermaid.trimEnd().split("\n");
    expect(mermaid).not.toContain("%%");
    expect(mermaid).not.toMatch(BREAKERS);
    expect(mermaid).not.toContain("`");
    const nodes = lines.filter((l) => /^ {2}s\d+[[({>]/.test(l));
    const edges = lines.filter((l) => l.includes("-->"));
    expect(nodes).toHaveLength(graph.nodes.length);
    expect(edges).toHaveLength(graph.edges.length);
    for (const line of nodes) {
      // One quoted label: opening shape, "…", closing shape, nothing else, no quote inside.
      expect(line).toMatch(/^ {2}s\d+(\(\[|\{\{|\{|\[\[|\[\/|>|\[)"[^"]*"(\]\)|\}\}|\}|\]\]|\\\]|\])$/);
    }
    for (const line of edges) expect(line).toMatch(/^ {2}s\d+ -->\|"[^"|]*"\| s\d+$/);
    // The only lines are the header, nodes, edges, classes and class styles.
    expect(lines.length).toBe(
      1 + nodes.length + edges.length + lines.filter((l) => /^ {2}class(Def)? /.test(l)).length,
    );
    // The text is still there, as entity codes Mermaid renders back.
    expect(mermaid).toContain("x#10;y#13;#10;#37;#37; comment#34;#93;) --#62; s0#10;#35;quot#59;");
  });

  it("text: one line per node, controls and overrides shown as escapes", () => {
    const graph = hostile();
    const text = lineageToText(graph, { ids: true });
    const lines = text.trimEnd().split("\n");
    expect(lines).toHaveLength(graph.nodes.length);
    expect(text).not.toMatch(BREAKERS);
    expect(lines[1]).toContain("x\\u{a}y\\u{d}\\u{a}%% comment");
    expect(lines[1]).toContain("\\u{202e}\\u{1b}[31m");
  });

  it("DOT: every label stays one quoted string on its line", () => {
    const dot = lineageToDot(hostile());
    const labels = dot.split("\n").filter((l) => l.includes("[label="));
    expect(labels).toHaveLength(3 + 2);
    for (const line of labels)
      expect(line).toMatch(/^ {2}s\d+( -> s\d+)? \[label="([^"\\]|\\.)*"(, shape=[a-z0-9]+)?\];$/);
    expect(dot).not.toMatch(BREAKERS);
  });

  it("lineage extras nested absurdly deep are a coded error, not a stack overflow", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const error = thrown(() => Session.fromUserMessage("q").fork({ extras: { deep: deep as never } }));
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toContain("deeper than 512 levels");
  });
});

describe("shortId", () => {
  it("gives the last eight hex digits of an id", () => {
    expect(shortId("0190a000-0000-7000-8000-0000deadbeef")).toBe("deadbeef");
  });
});

describe("provenance", () => {
  const call = {
    id: "call_1",
    type: "function" as const,
    function: { name: "search", arguments: '{"q":"x"}' },
  };
  const question = Session.fromUserMessage("q", { author: "user" });
  const agent = question.fork({ operator: "Agent(coder)" });
  const run = agent.append(
    { kind: "assistant", content: null, toolCalls: [call], author: "planner/coder" },
    { kind: "tool_result", toolCallId: "call_1", name: "search", content: "[]", author: "tool:search" },
  );
  const other = question.fork().append(say("other"));
  const merged = run.merge(other);
  const callChunk = run.chunks[1]!;
  const resultChunk = run.chunks[2]!;

  it("gives the chunk, its index, the branch that appended it and its author", () => {
    const p = provenance(merged, callChunk.id);
    expect(p.chunk).toBe(callChunk);
    expect(p.index).toBe(1);
    expect(p.branch).toBe(agent.id);
    expect(p.author).toBe("planner/coder");
    expect(p.tool).toBeUndefined();
  });

  it("gives a tool result's tool name, call id and the assistant chunk that made the call", () => {
    const p = provenance(merged, resultChunk.id);
    expect(p.tool).toEqual({ name: "search", callId: "call_1", callChunkId: callChunk.id });
    expect(p.author).toBe("tool:search");
  });

  it("leaves callChunkId out when no earlier assistant chunk made the call", () => {
    const orphan = Session.empty().append({
      kind: "tool_result",
      toolCallId: "gone",
      name: "f",
      content: "{}",
    });
    const p = provenance(orphan, orphan.chunks[0]!.id);
    expect(p.tool).toStrictEqual({ name: "f", callId: "gone" });
    expect("author" in p).toBe(false);
  });

  it("gives the lineage path from the branch that appended the chunk down to the session", () => {
    expect(provenance(merged, resultChunk.id).path).toEqual([agent.lineage, merged.lineage]);
    expect(provenance(merged, merged.chunks[0]!.id).path).toEqual([
      question.lineage,
      agent.lineage,
      merged.lineage,
    ]);
    const otherChunk = merged.chunks.at(-1)!;
    expect(provenance(merged, otherChunk.id).path).toEqual([other.lineage, merged.lineage]);
    expect(provenance(run, resultChunk.id).path).toEqual([agent.lineage]);
  });

  it("gives only the session's own node when the branch is not an ancestor", () => {
    const detached = run.detach();
    const p = provenance(detached, resultChunk.id);
    expect(p.branch).toBe(agent.id);
    expect(p.path).toEqual([detached.lineage]);
  });

  it("throws chunk_not_found for an id the session does not hold", () => {
    const error = thrown(() => provenance(other, resultChunk.id));
    expect(error.code).toBe("chunk_not_found");
    expect(error.message).toContain(other.id);
    expect(error.message).toContain(resultChunk.id);
    expect(error.details).toEqual({ sessionId: other.id, chunkId: resultChunk.id });
  });
});
