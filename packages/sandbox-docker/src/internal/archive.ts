import type { Readable } from "node:stream";
import { SandboxError } from "@openrath/core";
import tar from "tar-stream";

/** One entry to put into the container through the archive API. */
export interface PackEntry {
  /** Path inside the archive, `/`-separated, without a leading `/`. */
  readonly name: string;
  readonly type: "file" | "directory";
  /** File content (files only). */
  readonly data?: Uint8Array;
  /** Permission bits (default 0o644 for files, 0o755 for directories). */
  readonly mode?: number;
  readonly uid: number;
  readonly gid: number;
}

/** The archive Docker extracts for `putArchive`, as a stream (tar-stream writes the headers). */
export function packEntries(entries: readonly PackEntry[]): Readable {
  const pack = tar.pack();
  for (const entry of entries) {
    const header = {
      name: entry.name,
      type: entry.type,
      mode: entry.mode ?? (entry.type === "directory" ? 0o755 : 0o644),
      uid: entry.uid,
      gid: entry.gid,
      mtime: new Date(),
    };
    if (entry.type === "file") pack.entry(header, Buffer.from(entry.data ?? new Uint8Array()));
    else pack.entry(header);
  }
  pack.finalize();
  return pack;
}

/** What {@link readSingleFile} found. */
export type ArchiveFile = { readonly type: "file"; readonly data: Uint8Array } | { readonly type: "other" };

/**
 * Reads the first entry of the archive `getArchive` streams for one path, keeping at most
 * `maxBytes` of it: a bigger file stops the transfer and throws, so a huge file never fills memory.
 *
 * @throws {SandboxError} `unsupported` for a file over `maxBytes`.
 */
export function readSingleFile(stream: Readable, path: string, maxBytes: number): Promise<ArchiveFile> {
  return new Promise((resolve, reject) => {
    const extract = tar.extract();
    let done = false;
    const finish = (error: unknown, value?: ArchiveFile) => {
      if (done) return;
      done = true;
      stream.unpipe(extract);
      stream.destroy();
      extract.destroy();
      if (error) reject(error);
      else resolve(value!);
    };
    extract.on("entry", (header, body, next) => {
      if (header.type !== "file") {
        body.resume();
        finish(undefined, { type: "other" });
        return;
      }
      if ((header.size ?? 0) > maxBytes) {
        body.resume();
        finish(tooLarge(path, header.size ?? 0, maxBytes));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      body.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) finish(tooLarge(path, size, maxBytes));
        else chunks.push(chunk);
      });
      body.on("end", () => {
        finish(undefined, { type: "file", data: new Uint8Array(Buffer.concat(chunks)) });
        next();
      });
    });
    extract.on("finish", () => finish(undefined, { type: "other" }));
    extract.on("error", (error) => finish(error));
    stream.on("error", (error) => finish(error));
    stream.pipe(extract);
  });
}

function tooLarge(path: string, size: number, maxBytes: number): SandboxError {
  return new SandboxError(
    "unsupported",
    `${JSON.stringify(path)} holds ${size} bytes or more; readFile reads at most ${maxBytes}. Process it in place with exec (head, split, a script) instead.`,
    { details: { path, maxBytes } },
  );
}
