import type { JsonObject } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { validateJsonSchema } from "./json-schema.js";

const check = (schema: JsonObject, value: unknown) => validateJsonSchema(schema, value);

describe("validateJsonSchema: types", () => {
  it.each([
    ["object", {}, true],
    ["object", [], false],
    ["object", null, false],
    ["array", [], true],
    ["array", {}, false],
    ["string", "", true],
    ["string", 1, false],
    ["integer", 3, true],
    ["integer", 3.5, false],
    ["number", 3.5, true],
    ["number", Number.NaN, false],
    ["number", Number.POSITIVE_INFINITY, false],
    ["number", "3", false],
    ["boolean", false, true],
    ["boolean", 0, false],
    ["null", null, true],
    ["null", undefined, false],
  ])("type %s accepts %j: %s", (type, value, ok) => {
    expect(check({ type }, value).length === 0).toBe(ok);
  });

  it("names what was expected and what came, at the JSON path", () => {
    expect(check({ type: "string" }, 3)).toEqual(["$: expected string, got integer"]);
    expect(check({ type: "integer" }, 1.5)).toEqual(["$: expected integer, got number"]);
    expect(check({ type: "object" }, [1])).toEqual(["$: expected object, got array"]);
    expect(check({ type: "object" }, null)).toEqual(["$: expected object, got null"]);
  });

  it("accepts any of several types (nullable fields)", () => {
    const schema = { type: ["string", "null"] };
    expect(check(schema, "a")).toEqual([]);
    expect(check(schema, null)).toEqual([]);
    expect(check(schema, 1)).toEqual(["$: expected string or null, got integer"]);
  });

  it("stops at a type mismatch instead of piling on keyword problems", () => {
    expect(check({ type: "string", minLength: 3 }, 12)).toHaveLength(1);
  });

  it("accepts anything for a schema without keywords, and ignores unknown keywords and types", () => {
    expect(check({}, { anything: [1, "x"] })).toEqual([]);
    expect(check({ format: "email", pattern: "^x$", "x-custom": 1 }, "not an email")).toEqual([]);
    expect(check({ type: "uuid-ish" }, 5)).toEqual([]);
  });
});

describe("validateJsonSchema: keywords", () => {
  it("checks string lengths", () => {
    const schema = { type: "string", minLength: 2, maxLength: 3 };
    expect(check(schema, "ab")).toEqual([]);
    expect(check(schema, "a")).toEqual(["$: shorter than 2"]);
    expect(check(schema, "abcd")).toEqual(["$: longer than 3"]);
  });

  it("checks numeric bounds inclusively", () => {
    const schema = { type: "number", minimum: 1, maximum: 10 };
    expect(check(schema, 1)).toEqual([]);
    expect(check(schema, 10)).toEqual([]);
    expect(check(schema, 0.5)).toEqual(["$: below the minimum 1"]);
    expect(check(schema, 11)).toEqual(["$: above the maximum 10"]);
  });

  it("checks array sizes and every item, with indexed paths", () => {
    const schema = { type: "array", items: { type: "integer" }, minItems: 1, maxItems: 3 };
    expect(check(schema, [1, 2])).toEqual([]);
    expect(check(schema, [])).toEqual(["$: fewer than 1 items"]);
    expect(check(schema, [1, 2, 3, 4])).toEqual(["$: more than 3 items"]);
    expect(check(schema, [1, "two", 3.5])).toEqual([
      "$[1]: expected integer, got string",
      "$[2]: expected integer, got number",
    ]);
  });

  it("checks enum and const by JSON equality", () => {
    expect(check({ enum: ["a", "b", 1] }, "b")).toEqual([]);
    expect(check({ enum: ["a", "b", 1] }, "c")).toEqual(['$: must be one of "a", "b", 1']);
    expect(check({ enum: [{ x: 1 }] }, { x: 1 })).toEqual([]);
    expect(check({ const: "on" }, "on")).toEqual([]);
    expect(check({ const: "on" }, "off")).toEqual(['$: must be "on"']);
  });

  it("checks required properties and the properties present", () => {
    const schema = {
      type: "object",
      properties: { a: { type: "string" }, b: { type: "number" } },
      required: ["a", "b"],
    };
    expect(check(schema, { a: "x", b: 1 })).toEqual([]);
    expect(check(schema, { a: 1 })).toEqual(["$.b: is required", "$.a: expected string, got integer"]);
  });

  it("lets extra properties through unless additionalProperties says otherwise", () => {
    const open = { type: "object", properties: { a: { type: "string" } } };
    expect(check(open, { a: "x", extra: 1 })).toEqual([]);
    const closed = { ...open, additionalProperties: false };
    expect(check(closed, { a: "x", extra: 1 })).toEqual(["$.extra: is not an allowed property"]);
    const typed = { ...open, additionalProperties: { type: "number" } };
    expect(check(typed, { a: "x", n: 1 })).toEqual([]);
    expect(check(typed, { a: "x", n: "1" })).toEqual(["$.n: expected number, got string"]);
  });

  it("refuses inherited property names under additionalProperties: false", () => {
    const closed = { type: "object", properties: { a: { type: "string" } }, additionalProperties: false };
    expect(check(closed, JSON.parse('{"a":"x","constructor":1}'))).toEqual([
      "$.constructor: is not an allowed property",
    ]);
  });

  it("reports nested problems with their full path", () => {
    const schema = {
      type: "object",
      properties: {
        user: {
          type: "object",
          properties: {
            tags: { type: "array", items: { type: "string", enum: ["a", "b"] } },
            age: { type: "integer", minimum: 0 },
          },
          required: ["age"],
          additionalProperties: false,
        },
      },
      required: ["user"],
    };
    expect(check(schema, { user: { age: 3, tags: ["a"] } })).toEqual([]);
    expect(check(schema, { user: { age: -1, tags: ["a", "z"], nick: "q" } })).toEqual([
      "$.user.age: below the minimum 0",
      '$.user.tags[1]: must be one of "a", "b"',
      "$.user.nick: is not an allowed property",
    ]);
    expect(check(schema, {})).toEqual(["$.user: is required"]);
  });

  it("accepts a value matching any anyOf branch and refuses one matching none", () => {
    const schema: JsonObject = { anyOf: [{ type: "string" }, { type: "integer", minimum: 0 }] };
    expect(check(schema, "x")).toEqual([]);
    expect(check(schema, 3)).toEqual([]);
    expect(check(schema, -3)).toEqual(["$: does not match any of the allowed shapes"]);
    expect(check(schema, null)).toEqual(["$: does not match any of the allowed shapes"]);
  });

  it("requires exactly one oneOf branch to match", () => {
    const schema = { oneOf: [{ type: "number" }, { type: "integer" }] };
    expect(check(schema, 1.5)).toEqual([]);
    expect(check(schema, 2)).toEqual(["$: does not match exactly one of the allowed shapes"]);
    expect(check(schema, "2")).toEqual(["$: does not match exactly one of the allowed shapes"]);
  });

  it("applies anyOf inside nested properties with the nested path", () => {
    const schema = {
      type: "object",
      properties: { when: { anyOf: [{ type: "string" }, { type: "null" }] } },
    };
    expect(check(schema, { when: null })).toEqual([]);
    expect(check(schema, { when: 5 })).toEqual(["$.when: does not match any of the allowed shapes"]);
  });
});
