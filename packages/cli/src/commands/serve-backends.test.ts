import type { ChildProcess } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { serviceAvailable } from "@openrath/testing";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { POSTGRES_URL, postgresAvailable, schemaPerFile } from "../testing/postgres.js";
import { spawnSyncOpenrath, startOpenrath } from "../testing/run-cli.js";

const env = process.env;
const postgres = await postgresAvailable();
const services = await serviceAvailable("redis and s3", () => {
  const missing = ["OPENRATH_TEST_REDIS_URL", "OPENRATH_TEST_S3_ENDPOINT"].filter((name) => !env[name]);
  if (missing.length > 0)
    throw new Error(`${missing.join(", ")} not set (tooling/scripts/services.mjs starts them)`);
  return postgres.available;
});
const schema = schemaPerFile("cli_serve", postgres);
const bucket = `serve-${randomUUID().slice(0, 8)}`;
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!services.available)(
  `openrath serve on PostgreSQL, Redis and S3 (${services.reason})`,
  () => {
    it("uses DATABASE_URL, REDIS_URL and the S3 settings: a large input is kept in the bucket and served by digest", async () => {
      const s3 = {
        OPENRATH_S3_BUCKET: bucket,
        OPENRATH_S3_ENDPOINT: env.OPENRATH_TEST_S3_ENDPOINT ?? "",
        OPENRATH_S3_REGION: env.OPENRATH_TEST_S3_REGION ?? "us-east-1",
        AWS_ACCESS_KEY_ID: env.OPENRATH_TEST_S3_ACCESS_KEY_ID ?? "",
        AWS_SECRET_ACCESS_KEY: env.OPENRATH_TEST_S3_SECRET_ACCESS_KEY ?? "",
      };
      await new S3Client({
        endpoint: s3.OPENRATH_S3_ENDPOINT,
        region: s3.OPENRATH_S3_REGION,
        forcePathStyle: true,
        credentials: { accessKeyId: s3.AWS_ACCESS_KEY_ID, secretAccessKey: s3.AWS_SECRET_ACCESS_KEY },
      }).send(new CreateBucketCommand({ Bucket: bucket }));
      const configured = {
        DATABASE_URL: POSTGRES_URL ?? "",
        OPENRATH_DB_SCHEMA: schema,
        REDIS_URL: env.OPENRATH_TEST_REDIS_URL ?? "",
        ...s3,
      };
      const migrated = spawnSyncOpenrath(["migrate"], configured);
      expect(migrated.code, migrated.stderr).toBe(0);
      const state = mkdtempSync(join(tmpdir(), "openrath-serve-backends-"));
      dirs.push(state);
      const serve = startOpenrath(
        [
          "serve",
          "--port",
          "0",
          "--auth",
          "local",
          "--state",
          state,
          "--workflows",
          "src/testing/fixture-workflows.ts",
        ],
        /OpenRath server on (http:\/\/127\.0\.0\.1:\d+)/,
        configured,
      );
      children.push(serve.child);
      const base = (await serve.matched)[1];
      expect(serve.stderr()).toContain("store      PostgreSQL (DATABASE_URL)");
      expect(serve.stderr()).toContain("signals    Redis (REDIS_URL)");
      expect(serve.stderr()).toContain(`artifacts  s3://${bucket}`);
      // No memory store with DATABASE_URL unless OPENRATH_MEMORY_DIR names one.
      expect(serve.stderr()).not.toContain("memory ");

      const large = `${"a long pasted document. ".repeat(4000)}${randomUUID()}`;
      const created = await fetch(`${base}/v1/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ assistant: "greet", input: large }),
      });
      expect(created.status, await created.clone().text()).toBe(201);
      const run = (await created.json()) as { id: string; tenantId: string };
      // The stream ends with the run, woken through Redis.
      expect(await (await fetch(`${base}/v1/runs/${run.id}/stream`)).text()).toContain('"to":"succeeded"');
      const session = (await (await fetch(`${base}/v1/runs/${run.id}/session`)).json()) as {
        chunks: { content?: string }[];
      };
      expect(session.chunks.map((chunk) => chunk.content)).toEqual([large, "hello from greet"]);
      const digest = createHash("sha256").update(large, "utf8").digest("hex");
      const artifact = await fetch(`${base}/v1/artifacts/${digest}`);
      expect(artifact.status).toBe(200);
      expect(await artifact.text()).toBe(large);
      // The database holds the digest, not the text.
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      try {
        const { rows } = await client.query(
          `select count(*)::int as n from ${schema}.chunks where body like $1`,
          [`%${large.slice(-36)}%`],
        );
        expect(rows[0].n).toBe(0);
        const referenced = await client.query(`select digest from ${schema}.checkpoint_artifacts`);
        expect(referenced.rows.map((row) => row.digest)).toContain(digest);
      } finally {
        await client.end();
      }
      const ready = (await (await fetch(`${base}/health/ready`)).json()) as {
        checks: Record<string, string>;
      };
      expect(ready.checks).toEqual({ store: "ok", artifacts: "ok" });
      serve.child.kill("SIGTERM");
      expect(await serve.exited).toBe(0);
    }, 120_000);
  },
);

describe("openrath serve on the embedded store", () => {
  it("fronts a memory store beside the embedded database", async () => {
    const state = mkdtempSync(join(tmpdir(), "openrath-serve-memory-"));
    dirs.push(state);
    const start = () => {
      const serve = startOpenrath(
        ["serve", "--port", "0", "--state", state, "--no-worker"],
        /OpenRath server on (http:\/\/127\.0\.0\.1:\d+)/,
      );
      children.push(serve.child);
      return serve;
    };
    const first = start();
    const base = (await first.matched)[1];
    expect(first.stderr()).toContain(`memory     ${join(state, "memory")}`);
    const stored = await fetch(`${base}/v1/memory/remember`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ entries: [{ text: "The staging database is called ferret." }] }),
    });
    expect(stored.status).toBe(201);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    // Kept across a restart.
    const second = start();
    const again = (await second.matched)[1];
    const recalled = (await (
      await fetch(`${again}/v1/memory/recall`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "staging database" }),
      })
    ).json()) as { items: { entry: { text: string } }[] };
    expect(recalled.items.map((hit) => hit.entry.text)).toEqual(["The staging database is called ferret."]);
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  }, 120_000);
});
