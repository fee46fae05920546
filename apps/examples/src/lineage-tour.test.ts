import { lineageGraph, provenance, shortId } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { EXAMPLE_PRICES, lineageTour } from "./lineage-tour.js";

/** The cells of the table line that starts with `label`, numbers without thousands separators. */
function tableRow(table: string, label: string): string[] {
  const line = table.split("\n").find((l) => l.trim().startsWith(`${label} `));
  if (line === undefined) throw new Error(`no "${label}" row in:\n${table}`);
  return line
    .trim()
    .split(/\s{2,}/)
    .map((cell) => cell.replace(/,/g, ""));
}

function sectionRows(table: string, section: string): string[][] {
  const lines = table.split("\n");
  const start = lines.indexOf(section) + 1;
  const rows: string[][] = [];
  for (let i = start; i < lines.length && lines[i]!.startsWith("  "); i++) {
    rows.push(
      lines[i]!.trim()
        .split(/\s{2,}/)
        .map((cell) => cell.replace(/,/g, "")),
    );
  }
  return rows;
}

describe("lineageTour", () => {
  it("merges three branches three-way: the shared prefix once, then each branch's additions", async () => {
    const { session } = await lineageTour();
    const ids = session.chunks.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(session.chunks.filter((c) => c.kind === "user")).toHaveLength(1);

    // Count what each branch appended, by the branch that first wrote each chunk.
    const graph = lineageGraph(session);
    const branchOf = (operator: string) => graph.nodes.find((n) => n.operator === operator)!.id;
    const root = graph.nodes.find((n) => n.op === "leaf_user")!.id;
    const written = (branch: string) => session.chunks.filter((c) => c.sessionId === branch).length;
    const prefix = written(root);
    const researcher = written(branchOf("planner/researcher"));
    const coder = written(branchOf("planner/coder"));
    const critic = written(branchOf("planner/critic"));
    const answer = written(session.id);
    expect([prefix, researcher, coder, critic, answer]).toEqual([2, 1, 3, 1, 1]);
    expect(session.length).toBe(prefix + researcher + coder + critic + answer);

    // The merge nodes record the prefix they shared and what each side added.
    const last = session.lineage;
    const first = last.parents[0]!;
    expect(first.extras).toMatchObject({ "merge.shared": 2, "merge.left": 1, "merge.right": 3 });
    expect(last.extras).toMatchObject({ "merge.shared": 2, "merge.left": 4, "merge.right": 1 });
  });

  it("prints a usage table whose totals equal session.usage and whose sections add up to them", async () => {
    const { session, table } = await lineageTour();
    const total = tableRow(table, "total");
    const { promptTokens, completionTokens, totalTokens } = session.usage;
    const modelCalls = session.chunks.filter((c) => c.kind === "assistant" && c.usage).length;
    expect(total.slice(1, 5)).toEqual([modelCalls, promptTokens, completionTokens, totalTokens].map(String));

    for (const section of ["by author", "by model"]) {
      const rows = sectionRows(table, section);
      expect(rows.length).toBeGreaterThan(1);
      for (const column of [1, 2, 3, 4]) {
        const sum = rows.reduce((n, row) => n + Number(row[column]), 0);
        expect(sum, `${section}, column ${column}`).toBe(Number(total[column]));
      }
    }
    expect(sectionRows(table, "by author").map((r) => r[0])).toEqual(
      expect.arrayContaining(["planner", "researcher", "coder", "critic"]),
    );
    expect(sectionRows(table, "by model").map((r) => r[0])).toEqual(
      expect.arrayContaining(["gpt-4o", "gpt-4o-mini", "claude-sonnet-4"]),
    );
  });

  it("prices each call at its model's rate, cached prompt tokens at the cached rate", async () => {
    const { session, table } = await lineageTour();
    let expected = 0;
    for (const c of session.chunks) {
      if (c.kind !== "assistant" || !c.usage) continue;
      const price = EXAMPLE_PRICES[c.model!]!;
      const cached = c.usage.cachedPromptTokens ?? 0;
      expected +=
        ((c.usage.promptTokens - cached) * price.input +
          cached * (price.cachedInput ?? price.input) +
          c.usage.completionTokens * price.output) /
        1e6;
    }
    expect(tableRow(table, "total")[5]).toBe(`$${expected.toFixed(4)}`);
  });

  it("uses the prices it is given and names models they leave out", async () => {
    const { table } = await lineageTour({ prices: { "gpt-4o": { input: 1e6, output: 0 } } });
    const gpt4o = tableRow(table, "gpt-4o");
    expect(gpt4o[5]).toBe(`$${Number(gpt4o[2]).toFixed(4)}`);
    expect(tableRow(table, "claude-sonnet-4")[5]).toBe("$0.0000");
    expect(table).toContain("not in the price table (counted as $0): claude-sonnet-4, gpt-4o-mini");
  });

  it("draws the lineage in Mermaid with fork edges and merge nodes", async () => {
    const { mermaid } = await lineageTour();
    expect(mermaid.startsWith("flowchart LR\n")).toBe(true);
    expect(mermaid.match(/-->\|"fork"\|/g)).toHaveLength(3);
    expect(mermaid.match(/-->\|"merge"\|/g)).toHaveLength(4);
    expect(mermaid).toMatch(/s\d+\{"merge<br\/>planner<br\/>[0-9a-f]{8} · 8 chunks/);
    for (const role of ["researcher", "coder", "critic"]) {
      expect(mermaid).toMatch(new RegExp(`s\\d+\\{\\{"fork<br/>planner/${role}<br/>`));
    }
  });

  it("traces the tool result to the coder's branch, author and tool", async () => {
    const { session, output } = await lineageTour();
    const result = session.chunks.find((c) => c.kind === "tool_result")!;
    const origin = provenance(session, result.id);
    const coderBranch = lineageGraph(session).nodes.find((n) => n.operator === "planner/coder")!;
    expect(origin.branch).toBe(coderBranch.id);
    expect(origin.author).toBe("coder");
    expect(origin.tool?.name).toBe("run_tests");
    const call = session.chunks.find((c) => c.id === origin.tool?.callChunkId);
    expect(call?.kind === "assistant" && call.toolCalls?.[0]?.id).toBe(origin.tool?.callId);
    expect(output).toContain(`branch ${shortId(coderBranch.id)}, author coder, tool run_tests`);
  });

  it("reports a title, the lineage, the table, the chunk count and the provenance line", async () => {
    const { session, mermaid, table, output } = await lineageTour();
    expect(output.split("\n")[0]).toMatch(/^OpenRath lineage tour/);
    expect(output).toContain(mermaid.trimEnd());
    expect(output).toContain(table);
    expect(output).toContain(`Chunks: ${session.length} = 2 shared`);
    expect(output).toMatch(/^Provenance of the run_tests result/m);
  });
});
