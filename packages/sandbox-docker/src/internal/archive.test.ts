import { Readable } from "node:stream";
import { OpenRathError } from "@openrath/core";
import tar from "tar-stream";
import { describe, expect, it } from "vitest";
import { packEntries, readSingleFile } from "./archive.js";

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe("the archive helpers", () => {
  it("pack files and directories with their owner and mode, and read a file back", async () => {
    const archive = await bytesOf(
      packEntries([
        { name: "dir", type: "directory", uid: 65534, gid: 65534 },
        {
          name: "dir/é 東.txt",
          type: "file",
          data: new TextEncoder().encode("héllo"),
          mode: 0o755,
          uid: 1,
          gid: 2,
        },
      ]),
    );
    const headers: tar.Headers[] = [];
    const extract = tar.extract();
    extract.on("entry", (header, body, next) => {
      headers.push(header);
      body.resume();
      body.on("end", next);
    });
    await new Promise((resolve) => {
      extract.on("finish", resolve);
      extract.end(archive);
    });
    expect(headers.map((h) => [h.name, h.type, h.uid, h.gid, h.mode])).toEqual([
      ["dir", "directory", 65534, 65534, 0o755],
      ["dir/é 東.txt", "file", 1, 2, 0o755],
    ]);
    const file = await readSingleFile(
      Readable.from([
        await bytesOf(
          packEntries([{ name: "a", type: "file", data: new Uint8Array([0, 255]), uid: 0, gid: 0 }]),
        ),
      ]),
      "a",
      10,
    );
    expect(file).toEqual({ type: "file", data: new Uint8Array([0, 255]) });
  });

  it("stops reading a file bigger than the cap, with unsupported", async () => {
    const big = packEntries([{ name: "big", type: "file", data: new Uint8Array(5000), uid: 0, gid: 0 }]);
    const error = await readSingleFile(big, "big", 1000).catch((e: unknown) => e);
    expect(OpenRathError.isInstance(error, "unsupported")).toBe(true);
  });

  it("reports a directory or a link as not a file", async () => {
    const dir = packEntries([{ name: "d", type: "directory", uid: 0, gid: 0 }]);
    expect(await readSingleFile(dir, "d", 10)).toEqual({ type: "other" });
  });
});
