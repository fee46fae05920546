import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { CreateBucketCommand, ListBucketsCommand, S3Client } from "@aws-sdk/client-s3";
import { type ServiceCheck, serviceAvailable } from "@openrath/testing";

/** Where the tests find an S3-compatible server, and the credentials it accepts. */
export interface S3Endpoint {
  readonly endpoint: string;
  readonly region: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/** The launcher the test services and the fault tests run. */
export const S3RVER_LAUNCHER = fileURLToPath(new URL("./serve-s3rver.mjs", import.meta.url));

/** s3rver's fixed credentials. */
const S3RVER_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

/** An s3rver child process on 127.0.0.1. */
export interface S3rverProcess extends S3Endpoint {
  readonly port: number;
  readonly dir: string;
  readonly pid: number;
  /** SIGKILLs the server at once, as a crash would, and resolves once it has exited. */
  kill(): Promise<void>;
  /** Stops the server (SIGTERM), and resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts s3rver in a child process on `port` (default: a free one) over `dir` (default: a new
 * temp directory, removed by `stop`/`kill` only when it was created here).
 */
export async function startS3rver(options: { dir?: string; port?: number } = {}): Promise<S3rverProcess> {
  const own = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "openrath-s3rver-"));
  const child = spawn(
    process.execPath,
    [S3RVER_LAUNCHER, "--dir", dir, "--port", String(options.port ?? 0)],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error(`s3rver did not start within 20 s: ${stderr}`)), 20_000);
    lines.once("line", (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`s3rver exited (${code ?? signal}) before listening: ${stderr}`));
    });
  });
  const cleanUp = () => {
    if (own) rmSync(dir, { recursive: true, force: true });
  };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    region: "us-east-1",
    credentials: S3RVER_CREDENTIALS,
    port,
    dir,
    pid: child.pid!,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      cleanUp();
    },
  };
}

/**
 * The S3-compatible server for this test file: the one the test services started
 * (`OPENRATH_TEST_S3_ENDPOINT` and friends, from `tooling/scripts/services.mjs`), else an s3rver
 * child process started for this file. `available` is false (or, under
 * `OPENRATH_REQUIRE_SERVICES`, the call throws) when neither answers.
 */
export async function s3TestService(): Promise<
  ServiceCheck & { readonly s3?: S3Endpoint; readonly stop: () => Promise<void> }
> {
  let s3: S3Endpoint | undefined;
  let stop = async () => {};
  const check = await serviceAvailable("S3-compatible server", async () => {
    const endpoint = process.env.OPENRATH_TEST_S3_ENDPOINT;
    if (endpoint) {
      s3 = {
        endpoint,
        region: process.env.OPENRATH_TEST_S3_REGION ?? "us-east-1",
        credentials: {
          accessKeyId: process.env.OPENRATH_TEST_S3_ACCESS_KEY_ID ?? S3RVER_CREDENTIALS.accessKeyId,
          secretAccessKey:
            process.env.OPENRATH_TEST_S3_SECRET_ACCESS_KEY ?? S3RVER_CREDENTIALS.secretAccessKey,
        },
      };
    } else {
      const server = await startS3rver();
      s3 = server;
      stop = () => server.stop();
    }
    const client = rawClient(s3);
    try {
      await client.send(new ListBucketsCommand({}));
    } finally {
      client.destroy();
    }
    return true;
  });
  return { ...check, s3: check.available ? s3 : undefined, stop };
}

/** A plain SDK client for `s3` (path-style), for creating buckets and tampering behind the store's back. */
export function rawClient(s3: S3Endpoint): S3Client {
  return new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    credentials: s3.credentials,
    forcePathStyle: true,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
}

/** Creates a bucket with a fresh name and returns the name. */
export async function createTestBucket(s3: S3Endpoint, label: string): Promise<string> {
  const bucket = `openrath-${label}-${Math.random().toString(36).slice(2, 10)}`;
  const client = rawClient(s3);
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    client.destroy();
  }
  return bucket;
}
