import { readFileSync } from "node:fs";
import { Agent, defineTool, EFFECT_CLASSES, ScriptedProvider, Session } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const toolSource = readFileSync(new URL("./tool.ts", import.meta.url), "utf8");

/** The JSDoc block right before `export function defineTool`. */
function defineToolDoc(): string {
  const end = toolSource.indexOf("export function defineTool");
  return toolSource.slice(toolSource.lastIndexOf("/**", end), end);
}

/** The fenced ```ts blocks of `text` that call defineTool. */
function toolExamples(text: string): string[] {
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .filter((b) => b.includes("defineTool("));
}

describe("the effect choice in defineTool's docs", () => {
  it("is shown in the JSDoc example, with the default and what it means", () => {
    const doc = defineToolDoc();
    expect(doc).toContain("@example");
    expect(doc.slice(doc.indexOf("@example"))).toMatch(/effect: "none"/);
    expect(doc.slice(doc.indexOf("@example"))).toMatch(/effect: "idempotent"[\s\S]*idempotencyKey:/);
    expect(doc).toMatch(/declares\s+\*?\s*none is `non_idempotent`/);
    expect(doc).toContain("`needs_review`");
    for (const effect of ["read_only", "none", "idempotent"]) expect(doc).toContain(`\`${effect}\``);
  });

  it("is shown in the README's tool examples, with the default and what it means", () => {
    const examples = toolExamples(readme);
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples)
      expect(example).toMatch(/effect: "(none|read_only|idempotent|non_idempotent)"/);
    const prose = readme.replace(/\s+/g, " ");
    expect(prose).toContain("A tool that declares no `effect` is `non_idempotent`");
    expect(prose).toContain("parks the run in `needs_review`");
    for (const effect of EFFECT_CLASSES) expect(prose).toContain(`\`${effect}\``);
  });
});

describe("what the examples declare", () => {
  const wordCount = defineTool({
    name: "word_count",
    description: "Count the words in a text",
    parameters: z.object({ text: z.string() }),
    parallel: true,
    effect: "none",
    execute: ({ text }) => ({ words: text.split(/\s+/).filter(Boolean).length }),
  });
  const sent: (string | undefined)[] = [];
  const createInvoice = defineTool({
    name: "create_invoice",
    description: "Create the invoice of an order",
    parameters: z.object({ orderId: z.string(), cents: z.number().int() }),
    effect: "idempotent",
    idempotencyKey: ({ orderId }) => `invoice:${orderId}`,
    execute: (args, { idempotencyKey }) => {
      sent.push(idempotencyKey);
      return { invoice: args.orderId };
    },
  });

  it("a tool without effect is non_idempotent; the examples keep their classes and key rule", () => {
    const plain = defineTool({ name: "send", description: "", parameters: {}, execute: () => 1 });
    expect(plain.effect).toBe("non_idempotent");
    expect(wordCount.effect).toBe("none");
    expect(createInvoice.effect).toBe("idempotent");
    const rule = createInvoice.idempotencyKey as (args: { orderId: string; cents: number }) => string;
    expect(rule({ orderId: "o-7", cents: 100 })).toBe("invoice:o-7");
  });

  it("the key a runtime hands the call reaches execute as ctx.idempotencyKey (none outside one)", async () => {
    const provider = () =>
      new ScriptedProvider([
        { toolCalls: [{ name: "create_invoice", arguments: { orderId: "o-7", cents: 100 } }] },
        { text: "done" },
      ]);
    const agent = new Agent({ name: "billing", provider: provider(), tools: [createInvoice] });
    await agent.run(Session.fromUserMessage("invoice o-7"));
    const keyed = new Agent({ name: "billing", provider: provider(), tools: [createInvoice] });
    await keyed.run(Session.fromUserMessage("invoice o-7"), {
      calls: {
        // What a durable runtime does: derive the call's key from the tool's rule and pass it on.
        tool: (d, next) =>
          next({ context: { idempotencyKey: (d.tool.idempotencyKey as (a: unknown) => string)(d.args) } }),
      },
    });
    expect(sent).toEqual([undefined, "invoice:o-7"]);
  });
});
