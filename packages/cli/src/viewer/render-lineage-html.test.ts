import { type Chunk, lineageGraph, Session, sumUsage } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { NODE_KINDS, nodeShapePath } from "./internal/node-kinds.js";
import { VIEWER_SCRIPT } from "./internal/viewer-script.js";
import { renderLineageHtml } from "./render-lineage-html.js";

const usage = (n: number) => ({ promptTokens: n, completionTokens: n, totalTokens: 2 * n });
const HOSTILE = '</script><script>alert(1)</script><img src=x onerror="alert(2)"> see https://example.com/x';

/** A small run with every kind of node: leaf, fork, loop, merge, memory, compress, select, workflow. */
function run() {
  const question = Session.fromUserMessage("What is 6 × 7?", { author: "user" });
  const a = question
    .fork({ operator: "planner→alice" })
    .derive({ op: "loop", operator: "alice" })
    .append({
      kind: "assistant",
      author: "team/alice",
      content: null,
      toolCalls: [{ id: "c1", type: "function", function: { name: "calc", arguments: '{"expr":"6*7"}' } }],
      usage: usage(10),
    })
    .append({
      kind: "tool_result",
      author: "team/alice",
      toolCallId: "c1",
      name: "calc",
      content: '{"value":42}',
    })
    .append({
      kind: "assistant",
      author: "team/alice",
      content: "Alice says the answer is 42.",
      usage: usage(5),
    });
  const b = question
    .fork({ operator: "planner→bob" })
    .derive({ op: "loop", operator: "<b>bob</b>" })
    .append({ kind: "assistant", author: "team/bob", content: HOSTILE, usage: usage(7) });
  const merged = a.merge(b);
  const recalled = merged
    .derive({ op: "memory", operator: "recall", extras: { "memory.hits": 1 } })
    .append({ kind: "user", untrusted: true, source: "mem-1", content: "Remembered: 42 is the answer." });
  const summary = recalled.derive({
    op: "compress",
    operator: "compressor",
    chunks: [{ kind: "user", author: "team/compressor", content: "Both found 42.", usage: usage(3) }],
  });
  const routed = summary.derive({ op: "select", operator: "router" });
  const final = routed.derive({ op: "workflow", operator: "team" });
  // What a RunRecorder keeps: the sessions handed back by steps, not the forks and merges between them.
  return { sessions: [question, a, b, recalled, summary, routed, final], merged, final };
}

/** The page with its JSON data block cut out, and the data parsed. */
function split(html: string) {
  const match = /<script type="application\/json" id="openrath-data">([\s\S]*?)<\/script>/.exec(html);
  expect(match).not.toBeNull();
  return { outside: html.replace(match![0], ""), data: JSON.parse(match![1]!) };
}

describe("renderLineageHtml", () => {
  const { sessions, merged, final } = run();
  const html = renderLineageHtml(sessions);
  const { outside, data } = split(html);
  const graph = lineageGraph(...sessions);

  it("is one self-contained page: no external URLs, no links or imports, a CSP that forbids fetching", () => {
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(outside).not.toMatch(/https?:\/\//);
    expect(outside).not.toMatch(/<link|@import|<iframe|<img|\ssrc=|\shref=/i);
    expect(outside).toContain(
      `content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"`,
    );
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html.match(/<\/script>/g)).toHaveLength(2);
  });

  it("keeps the data as JSON holding every node, edge and chunk", () => {
    expect(data).toMatchObject({ format: "openrath.lineage-viewer", version: 1, finalId: final.id });
    expect(data.nodes.map((n: { id: string }) => n.id)).toEqual(graph.nodes.map((n) => n.id));
    expect(data.edges).toEqual(graph.edges);
    const chunkIds = new Set(sessions.flatMap((s) => s.chunks.map((c: Chunk) => c.id)));
    expect(data.chunks.map((c: { id: string }) => c.id).sort()).toEqual([...chunkIds].sort());
    const call = data.chunks.find((c: { toolCalls?: unknown }) => c.toolCalls);
    expect(call).toMatchObject({
      role: "assistant",
      author: "team/alice",
      toolCalls: [{ id: "c1", name: "calc", arguments: '{"expr":"6*7"}' }],
    });
    expect(data.chunks.find((c: { kind: string }) => c.kind === "tool_result")).toMatchObject({
      role: "tool",
      name: "calc",
    });
  });

  it("draws every node once, in its kind's shape and class, with an edge per parent", () => {
    for (const n of graph.nodes) {
      expect(outside.match(new RegExp(`<g class="node [^"]*" data-id="${n.id}"`, "g"))).toHaveLength(1);
    }
    expect(outside.match(/<path class="edge"/g)).toHaveLength(graph.edges.length);
    for (const kind of ["leaf", "fork", "loop", "merge", "memory", "compress", "select", "workflow"]) {
      expect(outside).toContain(`class="node kind-${kind}"`);
    }
    expect(outside).toMatch(new RegExp(`data-id="${final.id}"[\\s\\S]*?final</text>`));
  });

  it("gives each kind its own shape and a legend entry", () => {
    const shapes = NODE_KINDS.map((k) => nodeShapePath(k.kind, 0, 0, 180, 60));
    expect(new Set(shapes).size).toBe(NODE_KINDS.length);
    expect(new Set(NODE_KINDS.map((k) => k.fill)).size).toBe(NODE_KINDS.length);
    const legend = /<div class="legend"[\s\S]*?<\/div>/.exec(outside)![0];
    for (const k of NODE_KINDS) expect(legend).toContain(`</svg>${k.label}</span>`);
  });

  it("escapes recorded text: chunks travel as JSON without '<', labels as entities", () => {
    expect(html).not.toContain("<img src=x");
    expect(html).not.toContain("<script>alert(1)");
    expect(data.chunks.some((c: { content?: string }) => c.content === HOSTILE)).toBe(true);
    expect(outside).toContain("&lt;b&gt;bob&lt;/b&gt;");
    expect(outside).not.toContain("<b>bob</b>");
  });

  it("computes the usage of forks and merges from the transcripts rebuilt from their parents", () => {
    const node = data.nodes.find((n: { id: string }) => n.id === merged.id);
    expect(node.usage).toEqual(merged.usage);
    expect(node.usage).toEqual(sumUsage(merged.chunks));
    expect(node.usageDerived).toBe(true);
    const recorded = data.nodes.find((n: { id: string }) => n.id === final.id);
    expect(recorded.usage).toEqual(final.usage);
    expect(recorded.usageDerived).toBeUndefined();
  });

  it("takes the final session from the options when it is in the graph", () => {
    const { data: chosen } = split(renderLineageHtml(sessions, { finalSessionId: merged.id }));
    expect(chosen.finalId).toBe(merged.id);
    const { data: unknown } = split(renderLineageHtml(sessions, { finalSessionId: "nope" }));
    expect(unknown.finalId).toBe(final.id);
  });

  it("accepts a graph with chunks, and an empty one", () => {
    const page = renderLineageHtml({ graph, chunks: final.chunks }, { title: "Team <run>" });
    const { data: fromGraph, outside: shell } = split(page);
    expect(fromGraph.nodes).toHaveLength(graph.nodes.length);
    expect(fromGraph.chunks).toHaveLength(final.length);
    expect(shell).toContain("<title>Team &lt;run&gt;</title>");
    const empty = split(renderLineageHtml([]));
    expect(empty.data.nodes).toEqual([]);
    expect(empty.data.finalId).toBeNull();
  });

  it("ships a script that parses, with no template literals to break out of", () => {
    expect(() => new Function(VIEWER_SCRIPT)).not.toThrow();
    expect(VIEWER_SCRIPT).not.toContain("</script");
    expect(VIEWER_SCRIPT).not.toContain("innerHTML");
  });
});
