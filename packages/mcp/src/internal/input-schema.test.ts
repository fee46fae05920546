import { describe, expect, it } from "vitest";
import { parametersOf } from "./input-schema.js";

describe("parametersOf", () => {
  it("gives an empty object schema for an absent or malformed schema", () => {
    for (const schema of [undefined, null, "object", [], 3]) {
      expect(parametersOf(schema)).toEqual({ type: "object", properties: {} });
    }
  });

  it("drops $schema and keeps everything else", () => {
    expect(
      parametersOf({
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: { a: { type: "string" } },
        required: ["a"],
        additionalProperties: false,
      }),
    ).toEqual({
      type: "object",
      properties: { a: { type: "string" } },
      required: ["a"],
      additionalProperties: false,
    });
  });

  it("adds properties to a bare object schema", () => {
    expect(parametersOf({ type: "object" })).toEqual({ type: "object", properties: {} });
  });
});
