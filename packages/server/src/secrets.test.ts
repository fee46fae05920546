import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { promisify } from "node:util";
import { Agent, defineTool, secret } from "@openrath/core";
import { openaiProvider } from "@openrath/provider-openai";
import { createDurableRuntime, defineWorkflow, jsonLinesLog } from "@openrath/runtime-durable";
import { postgresStore } from "@openrath/store-postgres";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createServer } from "./server.js";
import { POSTGRES_URL, postgresAvailable } from "./testing/postgres.js";

// The planted-secret test (issue 23): a durable run whose provider and tool both name their
// credentials with secret(...) runs through the HTTP API on real PostgreSQL; afterwards neither
// value is anywhere in the database (every table's rows, a pg_dump of the schema, every
// checkpoint's session) or in the server's and the worker's logs at their most verbose level.

const POSTGRES_BIN = process.env.OPENRATH_TEST_POSTGRES_BIN;
const postgres = await postgresAvailable();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const MODEL_KEY = "OPENRATH_TEST_PLANTED_MODEL_KEY";
const TOOL_KEY = "OPENRATH_TEST_PLANTED_TOOL_KEY";

async function bodyOf(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

const completion = (message: Record<string, unknown>, finish: string) => ({
  id: `chatcmpl-${randomUUID()}`,
  object: "chat.completion",
  created: Math.floor(Date.now() / 1000),
  model: "fake-model",
  choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
  usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
});

/**
 * A loopback OpenAI-compatible server that answers only with the planted key in the
 * Authorization header (401 otherwise), and an account service the tool calls with its own key.
 * It asks for the tool on the first turn and answers in text once the transcript holds its result.
 */
async function fakeServices(keys: { model: string; tool: string }, replyCanary: string) {
  const seen = { modelAuthorized: 0, modelRefused: 0, toolAuthorized: 0, toolRefused: 0, leakedToModel: 0 };
  const server: Server = createHttpServer(async (req, res) => {
    const raw = await bodyOf(req);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.url === "/accounts/lookup") {
      if (req.headers.authorization !== `Bearer ${keys.tool}`) {
        seen.toolRefused++;
        return json(401, { error: "bad key" });
      }
      seen.toolAuthorized++;
      return json(200, { account: "A-1", balance: 42 });
    }
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") return json(404, { error: "no" });
    if (req.headers.authorization !== `Bearer ${keys.model}`) {
      seen.modelRefused++;
      return json(401, {
        error: { message: "Incorrect API key", type: "invalid_request_error", code: null },
      });
    }
    seen.modelAuthorized++;
    if (raw.includes(keys.model) || raw.includes(keys.tool)) seen.leakedToModel++;
    const request = JSON.parse(raw) as { messages: { role: string }[] };
    if (!request.messages.some((m) => m.role === "tool")) {
      return json(
        200,
        completion(
          {
            content: null,
            tool_calls: [
              {
                id: "call_lookup_1",
                type: "function",
                function: { name: "lookup_account", arguments: '{"owner":"ana"}' },
              },
            ],
          },
          "tool_calls",
        ),
      );
    }
    return json(200, completion({ content: `Account A-1 holds 42. ${replyCanary}` }, "stop"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    seen,
    baseURL: `http://127.0.0.1:${port}/v1`,
    accountsURL: `http://127.0.0.1:${port}/accounts/lookup`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Every value a secret can take in stored text: as is, JSON-escaped, and as bytea hex. */
const formsOf = (value: string) => [
  value,
  JSON.stringify(value).slice(1, -1),
  Buffer.from(value).toString("hex"),
];

describe.skipIf(!postgres.available)(`planted secrets (${postgres.reason})`, () => {
  it("a run whose provider and tool use secret(...) leaves neither value in any table, dump, checkpoint or log line, and really used both", async () => {
    const modelSecret = `sk-planted-model-${randomUUID()}`;
    const toolSecret = `planted-tool-${randomUUID()}`;
    const inputCanary = `input-canary-${randomUUID()}`;
    const replyCanary = `reply-canary-${randomUUID()}`;
    const previous = { model: process.env[MODEL_KEY], tool: process.env[TOOL_KEY] };
    process.env[MODEL_KEY] = modelSecret;
    process.env[TOOL_KEY] = toolSecret;
    cleanups.push(() => {
      for (const [name, value] of [
        [MODEL_KEY, previous.model],
        [TOOL_KEY, previous.tool],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });

    const services = await fakeServices({ model: modelSecret, tool: toolSecret }, replyCanary);
    cleanups.push(() => services.close());

    const lookup = defineTool({
      name: "lookup_account",
      description: "Looks up an account by its owner.",
      parameters: { type: "object", properties: { owner: { type: "string" } }, required: ["owner"] },
      effect: "read_only",
      needsApproval: true,
      execute: async (args: { owner: string }, ctx) => {
        const key = await ctx.secret!(TOOL_KEY);
        const res = await fetch(services.accountsURL, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(args),
          signal: ctx.signal,
        });
        if (!res.ok) throw new Error(`the account service refused the key ${key}`);
        // A careless tool that echoes its credential: the transcript must still not hold it.
        return { ...((await res.json()) as object), usedKey: key };
      },
    });
    const agent = new Agent({
      name: "clerk",
      instructions: "Answer questions about accounts.",
      provider: openaiProvider({ baseURL: services.baseURL, model: "fake-model", apiKey: secret(MODEL_KEY) }),
      tools: [lookup],
    });
    const flow = defineWorkflow("planted").step(
      "answer",
      async (session, ctx) => {
        ctx.logger.debug("answering", { chunks: session.length });
        return agent.run(session, ctx);
      },
      { entry: true },
    );

    const schema = `server_secrets_${randomUUID().slice(0, 8)}`;
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema, migrate: true });
    const runtime = createDurableRuntime({ store });
    cleanups.push(async () => {
      await runtime.close().catch(() => {});
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    });
    const logs: string[] = [];
    await runtime.register(flow);
    await runtime
      .worker({ concurrency: 2, log: jsonLinesLog({ level: "debug", write: (line) => logs.push(line) }) })
      .start();
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        logs.push(String(chunk));
        done();
      },
    });
    const app = await createServer({
      runtime,
      auth: { mode: "local" },
      logger: { level: "trace", stream: logStream },
    });
    cleanups.push(() => app.close());
    await app.listen({ port: 0, host: "127.0.0.1" });
    const api = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const call = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => {
      const res = await fetch(`${api}${path}`, {
        method,
        ...(body === undefined
          ? {}
          : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as T };
    };
    const until = async <T>(what: string, check: () => Promise<T | undefined>): Promise<T> => {
      for (let i = 0; i < 500; i++) {
        const value = await check();
        if (value !== undefined) return value;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`timed out waiting for ${what}`);
    };

    // Create the run, answer the tool's approval, and follow it to the end, all over HTTP.
    type RunBody = { id: string; status: string; sessionId: string; lastCheckpoint: number };
    type ChunkBody = { kind: string; trust: string; content?: string; name?: string };
    const created = await call<RunBody>("POST", "/v1/runs", {
      assistant: "planted",
      input: `What does ana's account hold? ${inputCanary}`,
    });
    expect(created.status).toBe(201);
    const runId = created.body.id;
    const interrupt = await until("the approval", async () => {
      const inbox = await call<{ items: { id: string; runId: string; kind: string }[] }>(
        "GET",
        "/v1/interrupts",
      );
      return inbox.body.items.find((i) => i.runId === runId);
    });
    expect(interrupt.kind).toBe("approval");
    expect(services.seen.toolAuthorized).toBe(0);
    const decided = await call("POST", `/v1/interrupts/${interrupt.id}/decision`, { kind: "approve" });
    expect(decided.status).toBe(200);
    const ended = await until("the run's end", async () => {
      const run = await call<RunBody>("GET", `/v1/runs/${runId}`);
      return ["succeeded", "failed", "cancelled", "timed_out"].includes(run.body.status)
        ? run.body
        : undefined;
    });
    expect(ended.status).toBe("succeeded");
    const events = await call<{ items: unknown[] }>("GET", `/v1/runs/${runId}/events?limit=1000`);
    expect(events.status).toBe(200);
    expect(events.body.items.length).toBeGreaterThan(2);
    const session = await call<{ chunks: ChunkBody[] }>("GET", `/v1/runs/${runId}/session`);
    expect(session.status).toBe(200);
    const byHead = await call<{ session: { chunks: ChunkBody[] } }>("GET", `/v1/sessions/${ended.sessionId}`);
    expect(byHead.status).toBe(200);

    // The run really used both secrets: every request carried them, and the tool's result came back.
    expect(services.seen.modelAuthorized).toBeGreaterThanOrEqual(2);
    expect(services.seen.toolAuthorized).toBe(1);
    expect(services.seen).toMatchObject({ modelRefused: 0, toolRefused: 0, leakedToModel: 0 });
    const chunks = session.body.chunks;
    const result = chunks.find((c) => c.kind === "tool_result")!;
    expect(JSON.parse(result.content!)).toEqual({
      account: "A-1",
      balance: 42,
      usedKey: `[secret ${TOOL_KEY}]`,
    });
    expect(chunks.at(-1)!.content).toContain(replyCanary);
    // Trust labels travel with the chunks.
    expect(chunks.map((c) => `${c.kind}:${c.trust}`)).toEqual(
      expect.arrayContaining(["user:user_input", "assistant:model", "tool_result:tool_output"]),
    );
    expect(
      (byHead.body.session.chunks as { trust: string }[]).every((c) => typeof c.trust === "string"),
    ).toBe(true);

    await app.close();
    const leaks: string[] = [];
    const search = (where: string, text: string) => {
      for (const [label, value] of [
        ["model secret", modelSecret],
        ["tool secret", toolSecret],
      ] as const) {
        if (formsOf(value).some((form) => text.includes(form))) leaks.push(`${label} in ${where}`);
      }
    };

    // 1. Every row of every table of the database, as text.
    const db = new pg.Client({ connectionString: POSTGRES_URL });
    await db.connect();
    cleanups.push(() => db.end());
    const tables = await db.query<{ schema: string; name: string }>(
      "select table_schema as schema, table_name as name from information_schema.tables where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')",
    );
    const ours = tables.rows.filter((t) => t.schema === schema).map((t) => t.name);
    expect(ours).toEqual(
      expect.arrayContaining(["runs", "run_events", "checkpoints", "journal", "audit", "chunks"]),
    );
    let rowsRead = 0;
    let replyCanaryInRows = false;
    for (const { schema: s, name } of tables.rows) {
      let rows: { row: string }[];
      try {
        rows = (await db.query<{ row: string }>(`select t::text as row from "${s}"."${name}" t`)).rows;
      } catch (error) {
        // Another test file dropped its schema while this one read the catalogue.
        if ((error as { code?: string }).code === "42P01" || (error as { code?: string }).code === "3F000")
          continue;
        throw error;
      }
      for (const { row } of rows) {
        rowsRead++;
        search(`${s}.${name}`, row);
        if (s === schema && row.includes(replyCanary)) replyCanaryInRows = true;
      }
    }
    expect(rowsRead).toBeGreaterThan(10);
    // The search sees what the run stored: the model's reply is in the journal.
    expect(replyCanaryInRows).toBe(true);

    // 2. pg_dump of the run's schema, data only.
    if (POSTGRES_BIN) {
      const { stdout } = await promisify(execFile)(
        `${POSTGRES_BIN}/pg_dump`,
        ["--data-only", `--schema=${schema}`, "--dbname", POSTGRES_URL!],
        { maxBuffer: 64 * 1024 * 1024 },
      );
      expect(stdout).toContain(replyCanary);
      search("pg_dump", stdout);
    } else if (process.env.CI) {
      throw new Error("OPENRATH_TEST_POSTGRES_BIN is not set: the pg_dump search cannot run");
    }

    // 3. Every checkpoint's session, decoded (bodies are stored compressed, so text search alone cannot see into them).
    let inputCanaryInCheckpoints = false;
    for (let seq = 0; seq <= ended.lastCheckpoint; seq++) {
      const text = JSON.stringify((await runtime.session(runId, seq)).toJSON());
      search(`checkpoint ${seq}`, text);
      if (text.includes(inputCanary)) inputCanaryInCheckpoints = true;
    }
    expect(inputCanaryInCheckpoints).toBe(true);

    // 4. The server's log at trace level and the worker's at debug level.
    expect(logs.length).toBeGreaterThan(5);
    expect(logs.some((line) => line.includes(runId))).toBe(true);
    search("the logs", logs.join("\n"));

    expect(leaks).toEqual([]);
  });
});
