/**
 * What the S3 store sends on the wire and how it reads S3's answers, against a recording loopback
 * server: the places where s3rver (which the conformance suite runs against) differs from S3 —
 * checksums, multipart rules, copy semantics, listing pagination, unfinished-upload listings,
 * error shapes and virtual-host addressing.
 */
import { createHash } from "node:crypto";
import { Agent } from "node:http";
import { Readable } from "node:stream";
import { readArtifact } from "@openrath/runtime-durable";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { s3ArtifactStore } from "./s3-artifact-store.js";
import { errorXml, type RecordedRequest, startRecordingS3 } from "./testing/recording-s3.js";

const MIB = 1024 * 1024;
const credentials = { accessKeyId: "AKIDEXPLICIT", secretAccessKey: "secret" };
const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest("hex");
const b64 = (hex: string) => Buffer.from(hex, "hex").toString("base64");

function bytes(size: number, seed: number): Buffer {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4096) out.writeUInt32LE((seed * 2654435761 + i) >>> 0, i);
  return out;
}

let server: Awaited<ReturnType<typeof startRecordingS3>>;
beforeEach(async () => {
  server = await startRecordingS3();
});
afterEach(() => server.close());

function store(overrides: Parameters<typeof s3ArtifactStore>[0] extends infer O ? Partial<O> : never = {}) {
  return s3ArtifactStore({
    bucket: "bkt",
    prefix: "pre",
    endpoint: server.endpoint,
    region: "eu-west-3",
    forcePathStyle: true,
    credentials,
    partSizeBytes: 5 * MIB,
    multipartThresholdBytes: 5 * MIB,
    clientConfig: { maxAttempts: 1 },
    ...overrides,
  });
}

const ops = (requests: RecordedRequest[]) =>
  requests.map(
    (r) =>
      `${r.method} ${r.key}${[...r.query.keys()]
        .filter((k) => k !== "x-id")
        .map((k) => `?${k}`)
        .join("")}`,
  );

describe("S3 request mapping: uploads", () => {
  it("a small put is one PutObject to the content key, carrying the SHA-256 for S3 to verify", async () => {
    const artifacts = store();
    const body = bytes(100_000, 1);
    const digest = sha256(body);
    await artifacts.put("acme", body);
    const [put] = server.requests;
    expect(server.requests).toHaveLength(1);
    expect(put).toMatchObject({
      method: "PUT",
      bucket: "bkt",
      key: `pre/acme/${digest.slice(0, 2)}/${digest}`,
    });
    expect(put!.headers["x-amz-checksum-sha256"]).toBe(b64(digest));
    expect(put!.bodySha256).toBe(digest);
    expect(put!.headers["content-type"]).toBe("application/octet-stream");
    expect(put!.headers["content-encoding"], "no aws-chunked framing").toBeUndefined();
    expect(String(put!.headers.authorization)).toContain("Credential=AKIDEXPLICIT/");
    expect(String(put!.headers.authorization)).toContain("/eu-west-3/s3/aws4_request");
    await artifacts.close();
  });

  it("a large put with its digest declared goes in 5 MiB parts, each with its SHA-256, straight to the content key", async () => {
    const artifacts = store();
    const body = bytes(12 * MIB + 123, 2);
    const digest = sha256(body);
    await artifacts.put("acme", body, { digest, size: body.length });
    const key = `pre/acme/${digest.slice(0, 2)}/${digest}`;
    expect(ops(server.requests).sort()).toEqual(
      [
        `HEAD ${key}`,
        `POST ${key}?uploads`,
        `PUT ${key}?partNumber?uploadId`,
        `PUT ${key}?partNumber?uploadId`,
        `PUT ${key}?partNumber?uploadId`,
        `POST ${key}?uploadId`,
      ].sort(),
    );
    const create = server.requests.find((r) => r.query.has("uploads"))!;
    expect(create.headers["x-amz-checksum-algorithm"]).toBe("SHA256");
    const partsSent = server.requests
      .filter((r) => r.query.has("partNumber"))
      .sort((a, b) => Number(a.query.get("partNumber")) - Number(b.query.get("partNumber")));
    expect(partsSent.map((p) => p.bodyBytes)).toEqual([5 * MIB, 5 * MIB, 2 * MIB + 123]);
    let offset = 0;
    for (const part of partsSent) {
      const slice = body.subarray(offset, offset + part.bodyBytes);
      offset += part.bodyBytes;
      expect(part.bodySha256).toBe(sha256(slice));
      expect(part.headers["x-amz-checksum-sha256"]).toBe(b64(sha256(slice)));
    }
    const complete = server.requests.find((r) => r.method === "POST" && r.query.has("uploadId"))!;
    expect(complete.bodyText.match(/<PartNumber>(\d+)<\/PartNumber>/g)).toEqual([
      "<PartNumber>1</PartNumber>",
      "<PartNumber>2</PartNumber>",
      "<PartNumber>3</PartNumber>",
    ]);
    expect(complete.bodyText).toContain("<ChecksumSHA256>");
    expect(server.objects.get(`bkt/${key}`)?.bytes.equals(body)).toBe(true);
  });

  it("a large buffer without a digest is hashed first and uploaded straight to the content key", async () => {
    const artifacts = store();
    const body = bytes(7 * MIB, 6);
    const digest = sha256(body);
    await artifacts.put("acme", body);
    const key = `pre/acme/${digest.slice(0, 2)}/${digest}`;
    expect(ops(server.requests).filter((op) => !op.startsWith("PUT "))).toEqual([
      `HEAD ${key}`,
      `POST ${key}?uploads`,
      `POST ${key}?uploadId`,
    ]);
    expect(server.requests.some((r) => r.key.includes(".staging"))).toBe(false);
    expect(server.objects.get(`bkt/${key}`)?.bytes.equals(body)).toBe(true);
  });

  it("a large stream without a digest is staged, copied server-side to the content key, and the staged object deleted", async () => {
    const artifacts = store();
    const body = bytes(7 * MIB, 3);
    const digest = sha256(body);
    await artifacts.put("acme", Readable.from([body.subarray(0, 3 * MIB), body.subarray(3 * MIB)]));
    const key = `pre/acme/${digest.slice(0, 2)}/${digest}`;
    const staged = server.requests.find((r) => r.query.has("uploads"))!.key;
    expect(staged).toMatch(/^pre\/\.staging\/acme\/[0-9a-f-]{36}$/);
    const copy = server.requests.find((r) => r.headers["x-amz-copy-source"] !== undefined)!;
    expect(copy.key).toBe(key);
    expect(copy.headers["x-amz-copy-source"]).toBe(`bkt/${staged}`);
    expect(ops(server.requests).at(-1)).toBe(`DELETE ${staged}`);
    expect([...server.objects.keys()]).toEqual([`bkt/${key}`]);
  });

  it("a large put whose content does not match its declared digest is never completed and is aborted", async () => {
    const artifacts = store();
    const body = bytes(11 * MIB, 4);
    const wrong = sha256("other");
    await expect(artifacts.put("acme", body, { digest: wrong })).rejects.toMatchObject({
      code: "artifact_digest_mismatch",
      details: { actualDigest: sha256(body) },
    });
    expect(
      server.requests.some((r) => r.method === "POST" && r.query.has("uploadId")),
      "CompleteMultipartUpload was sent",
    ).toBe(false);
    expect(
      server.requests.some((r) => r.method === "DELETE" && r.query.has("uploadId")),
      "AbortMultipartUpload was not sent",
    ).toBe(true);
    expect(server.objects.size).toBe(0);
  });

  it("a put that declares a stored digest refreshes it with a copy onto itself and sends no bytes", async () => {
    const artifacts = store();
    const body = bytes(1000, 5);
    const { digest } = await artifacts.put("acme", body);
    server.requests.length = 0;
    await artifacts.put("acme", body, { digest });
    expect(ops(server.requests)).toEqual([
      `HEAD pre/acme/${digest.slice(0, 2)}/${digest}`,
      `PUT pre/acme/${digest.slice(0, 2)}/${digest}`,
    ]);
    const copy = server.requests[1]!;
    expect(copy.headers["x-amz-copy-source"]).toBe(`bkt/${copy.key}`);
    expect(copy.headers["x-amz-metadata-directive"]).toBe("REPLACE");
    expect(copy.bodyBytes).toBe(0);
  });

  it("a part size under S3's 5 MiB minimum is refused up front", () => {
    expect(() => store({ partSizeBytes: 5 * MIB - 1 })).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    expect(() => store({ maxBytes: 6 * 1024 ** 3 })).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    expect(() => store({ prefix: "a/../b" })).toThrow(expect.objectContaining({ code: "invalid_argument" }));
  });
});

describe("S3 request mapping: addressing and credentials", () => {
  it("virtual-host addressing puts the bucket in the host name, with a custom endpoint", async () => {
    // Every name resolves to 127.0.0.1, so nothing leaves the loopback interface.
    const lookup = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
      options?.all
        ? callback(null, [{ address: "127.0.0.1", family: 4 }])
        : callback(null, "127.0.0.1", 4)) as never;
    const artifacts = store({
      endpoint: `http://s3.localhost:${server.port}`,
      forcePathStyle: false,
      clientConfig: { maxAttempts: 1, requestHandler: { httpAgent: new Agent({ lookup }) } },
    });
    const { digest } = await artifacts.put("acme", "virtual host");
    expect(await readArtifact(artifacts, "acme", digest).then(String)).toBe("virtual host");
    for (const request of server.requests) {
      expect(request.host).toBe(`bkt.s3.localhost:${server.port}`);
      expect(request.key.startsWith("pre/")).toBe(true);
    }
  });

  it("path-style addressing puts the bucket in the path", async () => {
    const artifacts = store();
    await artifacts.put("acme", "path style");
    expect(server.requests[0]!.host).toBe(`127.0.0.1:${server.port}`);
    expect(server.requests[0]!.bucket).toBe("bkt");
  });

  it("credentials come from the environment when none are given", async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: "AKIDFROMENV",
      AWS_SECRET_ACCESS_KEY: "env-secret",
      AWS_SESSION_TOKEN: "env-session-token",
      AWS_REGION: "ap-south-1",
    });
    try {
      const artifacts = store({ credentials: undefined, region: undefined });
      await artifacts.put("acme", "from env");
      const auth = String(server.requests[0]!.headers.authorization);
      expect(auth).toContain("Credential=AKIDFROMENV/");
      expect(auth).toContain("/ap-south-1/s3/aws4_request");
      expect(server.requests[0]!.headers["x-amz-security-token"]).toBe("env-session-token");
    } finally {
      for (const name of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION"]) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
  });
});

describe("S3 request mapping: listing and sweeping", () => {
  it("list follows continuation tokens across pages", async () => {
    const artifacts = store({ listPageSize: 2 });
    const infos = await Promise.all([0, 1, 2, 3, 4].map((i) => artifacts.put("acme", `object ${i}`)));
    server.requests.length = 0;
    const listed: string[] = [];
    for await (const stat of artifacts.list({ tenant: "acme" })) listed.push(stat.digest);
    expect(listed).toEqual(infos.map((i) => i.digest).sort());
    const pages = server.requests.filter((r) => r.query.get("list-type") === "2");
    expect(pages).toHaveLength(3);
    expect(pages.map((p) => p.query.has("continuation-token"))).toEqual([false, true, true]);
    expect(pages.every((p) => p.query.get("prefix") === "pre/acme/" && p.query.get("max-keys") === "2")).toBe(
      true,
    );
  });

  it("sweepIncomplete deletes old staged objects and aborts old unfinished uploads, and nothing newer", async () => {
    const artifacts = store();
    const old = new Date(Date.now() - 2 * 3600_000);
    server.objects.set("bkt/pre/.staging/acme/old", { bytes: Buffer.from("x"), modified: old });
    server.objects.set("bkt/pre/.staging/acme/new", { bytes: Buffer.from("x"), modified: new Date() });
    server.uploads.push(
      { key: "pre/acme/aa/old-upload", uploadId: "u-old", initiated: old },
      { key: "pre/.staging/acme/fresh", uploadId: "u-new", initiated: new Date() },
    );
    expect(await artifacts.sweepIncomplete()).toBe(2);
    const deletes = server.requests
      .filter((r) => r.method === "DELETE")
      .map((r) => `${r.key} ${r.query.get("uploadId") ?? ""}`.trim());
    expect(deletes.sort()).toEqual(["pre/.staging/acme/old", "pre/acme/aa/old-upload u-old"]);
  });

  it("a server that cannot list unfinished uploads (501 NotImplemented, as s3rver) is swept of staged objects only", async () => {
    const artifacts = store();
    server.force = (r) =>
      r.query.has("uploads") && r.method === "GET"
        ? { status: 501, body: errorXml("NotImplemented", "no") }
        : undefined;
    expect(await artifacts.sweepIncomplete({ olderThanMs: 0 })).toBe(0);
  });
});

describe("S3 request mapping: error shapes", () => {
  const cases: [
    string,
    (r: RecordedRequest) => boolean,
    { status: number; body?: string },
    string,
    boolean,
  ][] = [
    [
      "503 SlowDown",
      (r) => r.method === "PUT",
      { status: 503, body: errorXml("SlowDown", "Reduce your request rate.") },
      "artifact_unavailable",
      true,
    ],
    [
      "500 with an HTML body from a proxy",
      (r) => r.method === "PUT",
      { status: 500, body: "<html><body>Bad gateway</body></html>" },
      "artifact_unavailable",
      true,
    ],
    [
      "403 AccessDenied",
      (r) => r.method === "PUT",
      { status: 403, body: errorXml("AccessDenied", "Access Denied") },
      "artifact_denied",
      false,
    ],
    [
      "400 BadDigest",
      (r) => r.method === "PUT",
      {
        status: 400,
        body: errorXml("BadDigest", "The SHA256 you specified did not match the calculated checksum."),
      },
      "artifact_digest_mismatch",
      true,
    ],
    [
      "404 NoSuchBucket",
      (r) => r.method === "PUT",
      { status: 404, body: errorXml("NoSuchBucket", "The specified bucket does not exist") },
      "artifact_backend_error",
      false,
    ],
  ];
  for (const [label, match, answer, code, retryable] of cases) {
    it(`${label} on a put is ${code}${retryable ? " (retryable)" : ""}`, async () => {
      const artifacts = store();
      server.force = (r) => (match(r) ? answer : undefined);
      const error = await artifacts.put("acme", "x").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code, retryable, details: { tenant: "acme", bucket: "bkt" } });
      if (code === "artifact_backend_error")
        expect(String((error as Error).message)).toContain("bucket bkt does not exist");
    });
  }

  it("a connection the server drops is artifact_unavailable (retryable)", async () => {
    const artifacts = store();
    server.force = (r) => (r.method === "PUT" ? { destroy: true } : undefined);
    await expect(artifacts.put("acme", "x")).rejects.toMatchObject({
      code: "artifact_unavailable",
      retryable: true,
    });
  });

  it("a 404 on get is artifact_not_found naming the digest; a body cut short is artifact_unavailable", async () => {
    const artifacts = store();
    const missing = sha256("missing");
    await expect(artifacts.get("acme", missing)).rejects.toMatchObject({
      code: "artifact_not_found",
      details: { digest: missing },
    });
    const body = bytes(3 * MIB, 9);
    const { digest } = await artifacts.put("acme", body);
    server.force = (r) => (r.method === "GET" ? { truncateBodyAt: MIB } : undefined);
    await expect(readArtifact(artifacts, "acme", digest)).rejects.toMatchObject({
      code: "artifact_unavailable",
      retryable: true,
      details: { digest },
    });
  });
});
