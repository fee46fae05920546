import { defineTool, OpenRathError, type StandardSchemaLike, type ToolContext } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseToolArguments, projectToolResult, toolErrorContent, toolSpecs } from "./tool.js";

function thrown(fn: () => unknown): OpenRathError {
  try {
    fn();
  } catch (error) {
    if (OpenRathError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected an OpenRathError");
}

const noop = () => "ok";

describe("defineTool: names and definitions", () => {
  it.each(["a", "word_count", "fetch-url", "X9", "a".repeat(64)])("accepts the name %j", (name) => {
    expect(defineTool({ name, description: "", parameters: {}, execute: noop }).name).toBe(name);
  });

  it.each(["", "has space", "dot.ted", "ünïcode", "a".repeat(65), "semi;colon"])(
    "refuses the name %j with invalid_argument",
    (name) => {
      const error = thrown(() => defineTool({ name, description: "", parameters: {}, execute: noop }));
      expect(error.code).toBe("invalid_argument");
      expect(error.message).toContain(JSON.stringify(name));
      expect(error.message).toContain("1-64 letters, digits");
    },
  );

  it("refuses a definition without an execute function", () => {
    const error = thrown(() =>
      defineTool({ name: "t", description: "", parameters: {} } as unknown as Parameters<
        typeof defineTool
      >[0]),
    );
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toContain('"t" needs an execute function');
  });

  it("keeps a JSON Schema as the parameters sent to the model and fills the defaults", () => {
    const parameters = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };
    const tool = defineTool({ name: "search", description: "Find things", parameters, execute: noop });
    expect(tool.parameters).toEqual(parameters);
    expect(tool.description).toBe("Find things");
    expect(tool.needsSandbox).toBe(false);
    expect(tool.maxResultChars).toBe(48_000);
    expect(Object.isFrozen(tool)).toBe(true);
  });

  it("keeps needsSandbox and maxResultChars when given", () => {
    const tool = defineTool({
      name: "t",
      description: "",
      parameters: {},
      execute: noop,
      needsSandbox: true,
      maxResultChars: 100,
    });
    expect(tool.needsSandbox).toBe(true);
    expect(tool.maxResultChars).toBe(100);
  });
});

describe("defineTool: resource keys", () => {
  it("puts tools without a key in one global lane", () => {
    const tool = defineTool({ name: "t", description: "", parameters: {}, execute: noop });
    expect(tool.resourceKey({})).toBe("global");
    expect(tool.resourceKey({})).toBe("global");
  });

  it("gives every call of a parallel tool its own lane", () => {
    const tool = defineTool({ name: "t", description: "", parameters: {}, execute: noop, parallel: true });
    const keys = new Set([tool.resourceKey({}), tool.resourceKey({}), tool.resourceKey({})]);
    expect(keys.size).toBe(3);
    expect([...keys].every((k) => k.startsWith("parallel:"))).toBe(true);
  });

  it("uses a custom resourceKey of the arguments over parallel", () => {
    const tool = defineTool<{ url: string }>({
      name: "fetch",
      description: "",
      parameters: {},
      execute: noop,
      parallel: true,
      resourceKey: (args) => `fetch:${args.url}`,
    });
    expect(tool.resourceKey({ url: "a" })).toBe("fetch:a");
    expect(tool.resourceKey({ url: "a" })).toBe("fetch:a");
  });
});

describe("defineTool: JSON Schema validation", () => {
  const tool = defineTool({
    name: "order",
    description: "",
    parameters: {
      type: "object",
      properties: {
        item: { type: "string", minLength: 1 },
        size: { enum: ["S", "M", "L"] },
        extras: {
          type: "array",
          items: {
            type: "object",
            properties: { name: { type: "string" }, count: { type: "integer", minimum: 1 } },
            required: ["name"],
            additionalProperties: false,
          },
        },
        note: { anyOf: [{ type: "string" }, { type: "null" }] },
      },
      required: ["item"],
      additionalProperties: false,
    },
    execute: noop,
  });

  it("passes valid arguments through unchanged", async () => {
    const args = { item: "tea", size: "M", extras: [{ name: "milk", count: 2 }], note: null };
    expect(await tool.validate(args)).toEqual({ ok: true, value: args });
  });

  it("reports every problem with its path", async () => {
    const result = await tool.validate({
      size: "XL",
      extras: [{ name: "milk", count: 0, hot: true }, { count: 1 }],
      note: 3,
      colour: "red",
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      "$.item: is required",
      '$.size: must be one of "S", "M", "L"',
      "$.extras[0].count: below the minimum 1",
      "$.extras[0].hot: is not an allowed property",
      "$.extras[1].name: is required",
      "$.note: does not match any of the allowed shapes",
      "$.colour: is not an allowed property",
    ]);
  });

  it("treats an empty parameters object as 'no constraints'", async () => {
    const bare = defineTool({ name: "bare", description: "", parameters: {}, execute: noop });
    expect(await bare.validate({})).toEqual({ ok: true, value: {} });
  });
});

describe("defineTool: Standard Schema (zod 4)", () => {
  const schema = z.object({
    city: z.string().min(1),
    days: z.number().int().positive(),
    tags: z.array(z.enum(["food", "art"])).optional(),
    stay: z.object({ nights: z.number() }).optional(),
  });
  const tool = defineTool({
    name: "plan_trip",
    description: "Plan a trip",
    parameters: schema,
    execute: (args) => `${args.city}:${args.days}`,
  });

  it("derives the model's JSON Schema once, without the $schema key", () => {
    expect(tool.parameters).not.toHaveProperty("$schema");
    expect(tool.parameters).toMatchObject({
      type: "object",
      properties: {
        city: { type: "string", minLength: 1 },
        days: { type: "integer" },
        tags: { type: "array", items: { enum: ["food", "art"] } },
        stay: { type: "object", properties: { nights: { type: "number" } } },
      },
      required: ["city", "days"],
    });
  });

  it("returns the schema's parsed output on success", async () => {
    const parsed = await tool.validate({ city: "Kyoto", days: 3 });
    expect(parsed).toEqual({ ok: true, value: { city: "Kyoto", days: 3 } });
  });

  it("returns one problem per issue, each with its dotted path", async () => {
    const result = await tool.validate({
      city: "",
      days: 1.5,
      tags: ["food", "sport"],
      stay: { nights: "2" },
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toHaveLength(4);
    expect(result.problems[0]).toMatch(/^\$\.city: /);
    expect(result.problems[1]).toMatch(/^\$\.days: /);
    expect(result.problems[2]).toMatch(/^\$\.tags\.1: /);
    expect(result.problems[3]).toMatch(/^\$\.stay\.nights: .*expected number/);
  });

  it("reports a problem of the whole value at $", async () => {
    const result = await tool.validate("not an object");
    expect(result).toMatchObject({ ok: false, problems: [expect.stringMatching(/^\$: /)] });
  });

  it("infers the argument type from the schema", () => {
    const typed = defineTool({
      name: "typed",
      description: "",
      parameters: z.object({ n: z.number() }),
      execute: (args) => args.n + 1,
    });
    expect(typed.execute({ n: 1 }, {} as ToolContext)).toBe(2);
  });

  it("accepts an async Standard Schema validator and path segments given as { key }", async () => {
    const custom: StandardSchemaLike<{ a: string }> = {
      "~standard": {
        version: 1,
        vendor: "custom",
        validate: async (value) =>
          typeof (value as { a?: unknown }).a === "string"
            ? { value: value as { a: string } }
            : { issues: [{ message: "a must be text", path: [{ key: "a" }] }] },
        jsonSchema: {
          input: () => ({
            $schema: "https://json-schema.org/draft/2020-12/schema",
            type: "object",
            properties: { a: { type: "string" } },
          }),
        },
      },
    };
    const t = defineTool({ name: "custom", description: "", parameters: custom, execute: noop });
    expect(t.parameters).toEqual({ type: "object", properties: { a: { type: "string" } } });
    expect(await t.validate({ a: 1 })).toEqual({ ok: false, problems: ["$.a: a must be text"] });
    expect(await t.validate({ a: "x" })).toEqual({ ok: true, value: { a: "x" } });
  });

  it("refuses a Standard Schema that cannot produce JSON Schema, naming its vendor", () => {
    const opaque: StandardSchemaLike = {
      "~standard": { version: 1, vendor: "oldlib", validate: (value) => ({ value }) },
    };
    const error = thrown(() =>
      defineTool({ name: "old", description: "", parameters: opaque, execute: noop }),
    );
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toContain("oldlib");
    expect(error.message).toContain("JSON Schema");
  });
});

describe("toolSpecs", () => {
  it("lists function specs sorted by name", () => {
    const make = (name: string) =>
      defineTool({ name, description: `${name} tool`, parameters: { type: "object" }, execute: noop });
    const specs = toolSpecs([make("zeta"), make("alpha"), make("Mid")]);
    expect(specs.map((s) => s.function.name)).toEqual(["Mid", "alpha", "zeta"]);
    expect(specs[1]).toEqual({
      type: "function",
      function: { name: "alpha", description: "alpha tool", parameters: { type: "object" } },
    });
  });
});

describe("toolErrorContent", () => {
  it("builds the structured error envelope", () => {
    expect(JSON.parse(toolErrorContent("unknown_tool", "no such tool"))).toEqual({
      ok: false,
      error_kind: "unknown_tool",
      message: "no such tool",
    });
    expect(JSON.parse(toolErrorContent("invalid_tool_arguments", "bad", "{x"))).toEqual({
      ok: false,
      error_kind: "invalid_tool_arguments",
      message: "bad",
      detail: "{x",
    });
  });

  it("caps the detail at 4000 characters", () => {
    const detail = JSON.parse(toolErrorContent("k", "m", "d".repeat(5000))).detail as string;
    expect(detail).toBe(`${"d".repeat(4000)}…`);
  });
});

describe("projectToolResult", () => {
  it("turns undefined into {ok:true}", () => {
    expect(projectToolResult(undefined)).toBe('{"ok":true}');
  });

  it.each([
    [{ a: 1, b: [true, null] }, '{"a":1,"b":[true,null]}'],
    ["text", '"text"'],
    [42, "42"],
    [null, "null"],
    [false, "false"],
    ["ünïcode ✓", '"ünïcode ✓"'],
  ])("serializes %j as JSON", (value, expected) => {
    expect(projectToolResult(value)).toBe(expected);
  });

  it("writes bigints as their decimal digits", () => {
    expect(projectToolResult({ n: 12345678901234567890n })).toBe('{"n":"12345678901234567890"}');
  });

  it("describes a value JSON cannot hold (a cycle) instead of throwing", () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const projected = JSON.parse(projectToolResult(cyclic));
    expect(projected).toMatchObject({ ok: true, unserializable: "[object Object]" });
    expect(projected.reason).toMatch(/circular/i);
  });

  it("turns a function (which JSON drops) into {ok:true}", () => {
    expect(projectToolResult(() => 1)).toBe('{"ok":true}');
  });

  it("keeps a result of exactly maxChars and replaces a longer one by a preview with its length", () => {
    const exact = "x".repeat(998);
    expect(projectToolResult(exact, 1000)).toBe(JSON.stringify(exact));
    const long = { text: "y".repeat(5000) };
    const full = JSON.stringify(long);
    const text = projectToolResult(long, 1000);
    expect(text.length).toBeLessThanOrEqual(1000);
    const projected = JSON.parse(text);
    expect(projected).toMatchObject({ ok: true, truncated: true, total_chars: full.length });
    expect(full.startsWith(projected.preview)).toBe(true);
    expect(projected.preview.length).toBeGreaterThan(800);
  });

  it("uses a 48 000-character default limit", () => {
    const value = "z".repeat(48_100);
    expect(JSON.parse(projectToolResult(value))).toMatchObject({ truncated: true, total_chars: 48_102 });
    expect(projectToolResult("z".repeat(47_000))).toHaveLength(47_002);
  });

  it("never lets a truncated projection exceed maxChars, even when the preview needs escaping", () => {
    const quoted = { text: 'say "hi" '.repeat(1000) };
    expect(projectToolResult(quoted, 1000).length).toBeLessThanOrEqual(1000);
  });
});

describe("parseToolArguments", () => {
  it.each(["", "   ", "\n"])("reads empty text %j as no arguments ({})", (raw) => {
    expect(parseToolArguments(raw)).toEqual({ ok: true, value: {} });
  });

  it("parses a JSON object", () => {
    expect(parseToolArguments('{"a":[1,2],"b":{"c":null}}')).toEqual({
      ok: true,
      value: { a: [1, 2], b: { c: null } },
    });
    expect(parseToolArguments("{}")).toEqual({ ok: true, value: {} });
  });

  it("refuses text that is not JSON, quoting the parser's complaint", () => {
    const result = parseToolArguments('{"a":');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(/^Tool arguments are not valid JSON: /);
  });

  it.each([
    ["[1,2]", "an array"],
    ["3", "number"],
    ['"x"', "string"],
    ["true", "boolean"],
  ])("refuses %s, which is not an object, saying it is %s", (raw, what) => {
    expect(parseToolArguments(raw)).toEqual({
      ok: false,
      message: `Tool arguments must be a JSON object, got ${what}.`,
    });
  });

  it("names null as null when refusing it", () => {
    expect(parseToolArguments("null")).toEqual({
      ok: false,
      message: "Tool arguments must be a JSON object, got null.",
    });
  });

  it("refuses null arguments", () => {
    expect(parseToolArguments("null").ok).toBe(false);
  });
});
