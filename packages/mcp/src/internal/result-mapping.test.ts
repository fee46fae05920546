import { describe, expect, it } from "vitest";
import { base64Size, errorText, MAX_INLINE_TEXT, mapToolResult } from "./result-mapping.js";

describe("mapToolResult", () => {
  it("joins text blocks with newlines into { text }", () => {
    expect(
      mapToolResult({
        content: [
          { type: "text", text: "one" },
          { type: "text", text: "two" },
        ],
      }),
    ).toEqual({ text: "one\ntwo" });
  });

  it("keeps structured content alongside the text", () => {
    expect(mapToolResult({ content: [{ type: "text", text: "{}" }], structuredContent: { a: [1] } })).toEqual(
      {
        text: "{}",
        structured: { a: [1] },
      },
    );
    expect(mapToolResult({ content: [], structuredContent: { only: true } })).toEqual({
      structured: { only: true },
    });
  });

  it("gives { ok: true } for an empty result, and reads the 2024-10-07 toolResult", () => {
    expect(mapToolResult({ content: [] })).toEqual({ ok: true });
    expect(mapToolResult({})).toEqual({ ok: true });
    expect(mapToolResult({ toolResult: 42 })).toEqual({ structured: 42 });
  });

  it("describes images and audio by type, MIME type and size, never their data", () => {
    const data = Buffer.alloc(30_000, 7).toString("base64");
    const out = mapToolResult({
      content: [
        { type: "image", data, mimeType: "image/png" },
        { type: "audio", data: "AAAA", mimeType: "audio/wav" },
      ],
    });
    expect(out).toEqual({
      content: [
        {
          type: "image",
          mimeType: "image/png",
          size: 30_000,
          note: "image data omitted from the transcript",
        },
        { type: "audio", mimeType: "audio/wav", size: 3, note: "audio data omitted from the transcript" },
      ],
    });
    expect(JSON.stringify(out).length).toBeLessThan(300);
  });

  it("keeps small embedded text resources, cuts long ones and omits blobs", () => {
    const long = "x".repeat(MAX_INLINE_TEXT + 10);
    const out = mapToolResult({
      content: [
        { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "héllo" } },
        { type: "resource", resource: { uri: "file:///b.txt", text: long } },
        {
          type: "resource",
          resource: { uri: "file:///c.bin", mimeType: "application/zip", blob: "AAAAAA==" },
        },
      ],
    });
    expect(out).toEqual({
      content: [
        { type: "resource", uri: "file:///a.txt", mimeType: "text/plain", size: 6, text: "héllo" },
        {
          type: "resource",
          uri: "file:///b.txt",
          size: long.length,
          text: "x".repeat(MAX_INLINE_TEXT),
          note: `text cut to ${MAX_INLINE_TEXT} of ${long.length} characters`,
        },
        {
          type: "resource",
          uri: "file:///c.bin",
          mimeType: "application/zip",
          size: 4,
          note: "binary data omitted from the transcript",
        },
      ],
    });
  });

  it("maps resource links and unknown blocks to descriptive entries", () => {
    expect(
      mapToolResult({
        content: [
          {
            type: "resource_link",
            uri: "demo://r/1",
            name: "R1",
            mimeType: "text/plain",
            description: "d",
            size: 9,
          },
          { type: "hologram", data: "..." },
        ],
      }),
    ).toEqual({
      content: [
        {
          type: "resource_link",
          mimeType: "text/plain",
          uri: "demo://r/1",
          name: "R1",
          description: "d",
          size: 9,
        },
        { type: "hologram", note: "content of an unknown type omitted from the transcript" },
      ],
    });
  });
});

describe("base64Size", () => {
  it("counts decoded bytes from the length and padding", () => {
    for (const n of [0, 1, 2, 3, 4, 5, 100, 1001]) {
      expect(base64Size(Buffer.alloc(n).toString("base64"))).toBe(n);
    }
  });
});

describe("errorText", () => {
  it("joins the text blocks, or names the tool when there are none", () => {
    expect(
      errorText({ content: [{ type: "text", text: "bad" }, { type: "image" }], isError: true }, "t"),
    ).toBe("bad");
    expect(errorText({ content: [], isError: true }, "t")).toBe(
      'The MCP tool "t" reported an error without a message.',
    );
  });
});
