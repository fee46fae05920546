import { createHash, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the recording server received. */
export interface RecordedRequest {
  readonly method: string;
  /** The `Host` header. */
  readonly host: string;
  /** The bucket, from the virtual host or the first path segment. */
  readonly bucket: string;
  /** The object key (empty for bucket requests). */
  readonly key: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage["headers"];
  readonly bodyBytes: number;
  /** SHA-256 of the body as lower-case hex. */
  readonly bodySha256: string;
  /** The body as text, for small XML bodies. */
  readonly bodyText: string;
}

/** An answer a test forces for one request instead of the default behaviour. */
export type ForcedAnswer =
  | { readonly status: number; readonly body?: string; readonly headers?: Record<string, string> }
  | { readonly destroy: true }
  | { readonly truncateBodyAt: number };

/** An unfinished multipart upload the server reports in `ListMultipartUploads`. */
export interface ListedUpload {
  readonly key: string;
  readonly uploadId: string;
  readonly initiated: Date;
}

/**
 * A tiny S3 wire server on 127.0.0.1 for request-mapping tests: it records every request and
 * answers the operations the artifact store uses the way S3 documents them (XML bodies, ETags,
 * per-part checksums echoed back, V2 listings with continuation tokens, `ListMultipartUploads`),
 * from an in-memory map. Virtual-host requests (`<bucket>.s3.localhost`) and path-style requests
 * both work. It is not S3: no signature check, no bucket creation, minimum part sizes unchecked.
 */
export async function startRecordingS3(): Promise<{
  readonly endpoint: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  readonly objects: Map<string, { bytes: Buffer; modified: Date }>;
  readonly uploads: ListedUpload[];
  /** Called for each request before the default handling; an answer replaces it. */
  force: ((request: RecordedRequest) => ForcedAnswer | undefined) | undefined;
  close(): Promise<void>;
}> {
  const objects = new Map<string, { bytes: Buffer; modified: Date }>();
  const parts = new Map<string, Map<number, Buffer>>();
  const requests: RecordedRequest[] = [];
  const uploads: ListedUpload[] = [];
  const state = {
    force: undefined as ((request: RecordedRequest) => ForcedAnswer | undefined) | undefined,
  };

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? "/", "http://recording");
    const host = req.headers.host ?? "";
    const vhost = /^([^.]+)\.s3\.localhost(?::\d+)?$/.exec(host);
    const path = decodeURIComponent(url.pathname.slice(1));
    const [bucket, key] = vhost
      ? [vhost[1]!, path]
      : [path.split("/")[0]!, path.split("/").slice(1).join("/")];
    const recorded: RecordedRequest = {
      method: req.method ?? "GET",
      host,
      bucket,
      key,
      query: url.searchParams,
      headers: req.headers,
      bodyBytes: body.length,
      bodySha256: createHash("sha256").update(body).digest("hex"),
      bodyText: body.length < 64 * 1024 ? body.toString("utf8") : "",
    };
    requests.push(recorded);
    const forced = state.force?.(recorded);
    if (forced !== undefined) {
      if ("destroy" in forced) {
        req.socket.destroy();
        return;
      }
      if ("status" in forced) {
        res.writeHead(forced.status, { "content-type": "application/xml", ...forced.headers });
        res.end(forced.body ?? "");
        return;
      }
    }
    try {
      handle(recorded, body, res, forced);
    } catch (error) {
      res.writeHead(500, { "content-type": "application/xml" });
      res.end(errorXml("InternalError", (error as Error).message));
    }
  });

  function handle(r: RecordedRequest, body: Buffer, res: ServerResponse, forced: ForcedAnswer | undefined) {
    const q = r.query;
    const id = `${r.bucket}/${r.key}`;
    if (r.method === "GET" && r.key === "" && q.has("uploads")) {
      const listed = uploads
        .map(
          (u) =>
            `<Upload><Key>${u.key}</Key><UploadId>${u.uploadId}</UploadId><Initiated>${u.initiated.toISOString()}</Initiated></Upload>`,
        )
        .join("");
      return xml(
        res,
        `<ListMultipartUploadsResult><Bucket>${r.bucket}</Bucket><IsTruncated>false</IsTruncated>${listed}</ListMultipartUploadsResult>`,
      );
    }
    if (r.method === "GET" && r.key === "") {
      const prefix = q.get("prefix") ?? "";
      const max = Number(q.get("max-keys") ?? 1000);
      const after = q.get("continuation-token")
        ? Buffer.from(q.get("continuation-token")!, "base64url").toString()
        : "";
      const keys = [...objects.keys()]
        .filter((k) => k.startsWith(`${r.bucket}/`))
        .map((k) => k.slice(r.bucket.length + 1))
        .filter((k) => k.startsWith(prefix) && k > after)
        .sort();
      const page = keys.slice(0, max);
      const truncated = keys.length > max;
      const contents = page
        .map((k) => {
          const o = objects.get(`${r.bucket}/${k}`)!;
          return `<Contents><Key>${k}</Key><Size>${o.bytes.length}</Size><LastModified>${o.modified.toISOString()}</LastModified></Contents>`;
        })
        .join("");
      const next = truncated
        ? `<NextContinuationToken>${Buffer.from(page.at(-1)!).toString("base64url")}</NextContinuationToken>`
        : "";
      return xml(
        res,
        `<ListBucketResult><Name>${r.bucket}</Name><Prefix>${prefix}</Prefix><KeyCount>${page.length}</KeyCount><IsTruncated>${truncated}</IsTruncated>${next}${contents}</ListBucketResult>`,
      );
    }
    if (r.method === "POST" && q.has("uploads")) {
      const uploadId = randomUUID();
      parts.set(uploadId, new Map());
      return xml(
        res,
        `<InitiateMultipartUploadResult><Bucket>${r.bucket}</Bucket><Key>${r.key}</Key><UploadId>${uploadId}</UploadId></InitiateMultipartUploadResult>`,
      );
    }
    if (r.method === "PUT" && q.has("uploadId")) {
      parts.get(q.get("uploadId")!)?.set(Number(q.get("partNumber")), body);
      const checksum = r.headers["x-amz-checksum-sha256"];
      res.writeHead(200, {
        etag: `"${createHash("md5").update(body).digest("hex")}"`,
        ...(checksum ? { "x-amz-checksum-sha256": String(checksum) } : {}),
      });
      return res.end();
    }
    if (r.method === "POST" && q.has("uploadId")) {
      const uploaded = parts.get(q.get("uploadId")!) ?? new Map<number, Buffer>();
      const numbers = [...uploaded.keys()].sort((a, b) => a - b);
      objects.set(id, { bytes: Buffer.concat(numbers.map((n) => uploaded.get(n)!)), modified: new Date() });
      parts.delete(q.get("uploadId")!);
      return xml(
        res,
        `<CompleteMultipartUploadResult><Bucket>${r.bucket}</Bucket><Key>${r.key}</Key><ETag>"x-${numbers.length}"</ETag></CompleteMultipartUploadResult>`,
      );
    }
    if (r.method === "DELETE" && q.has("uploadId")) {
      parts.delete(q.get("uploadId")!);
      res.writeHead(204);
      return res.end();
    }
    if (r.method === "PUT" && r.headers["x-amz-copy-source"] !== undefined) {
      const source = objects.get(
        decodeURIComponent(String(r.headers["x-amz-copy-source"])).replace(/^\//, ""),
      );
      if (source === undefined) return notFound(res, r.method);
      objects.set(id, { bytes: source.bytes, modified: new Date() });
      return xml(
        res,
        `<CopyObjectResult><ETag>"copy"</ETag><LastModified>${new Date().toISOString()}</LastModified></CopyObjectResult>`,
      );
    }
    if (r.method === "PUT") {
      objects.set(id, { bytes: body, modified: new Date() });
      res.writeHead(200, { etag: `"${createHash("md5").update(body).digest("hex")}"` });
      return res.end();
    }
    if (r.method === "HEAD" || r.method === "GET") {
      const object = objects.get(id);
      if (object === undefined) return notFound(res, r.method);
      res.writeHead(200, {
        "content-length": String(object.bytes.length),
        "last-modified": object.modified.toUTCString(),
        "content-type": "application/octet-stream",
      });
      if (r.method === "HEAD") return res.end();
      if (forced !== undefined && "truncateBodyAt" in forced) {
        res.write(object.bytes.subarray(0, forced.truncateBodyAt));
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      return res.end(object.bytes);
    }
    if (r.method === "DELETE") {
      objects.delete(id);
      res.writeHead(204);
      return res.end();
    }
    res.writeHead(501, { "content-type": "application/xml" });
    res.end(errorXml("NotImplemented", `${r.method} is not implemented here`));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    requests,
    objects,
    uploads,
    get force() {
      return state.force;
    },
    set force(value) {
      state.force = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An S3 error document. */
export function errorXml(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message><RequestId>rec</RequestId></Error>`;
}

function xml(res: ServerResponse, body: string) {
  res.writeHead(200, { "content-type": "application/xml" });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>${body}`);
}

function notFound(res: ServerResponse, method: string) {
  res.writeHead(404, { "content-type": "application/xml" });
  res.end(method === "HEAD" ? "" : errorXml("NoSuchKey", "The specified key does not exist."));
}
