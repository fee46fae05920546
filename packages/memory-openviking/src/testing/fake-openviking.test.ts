import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeOpenViking, startFakeOpenViking } from "./fake-openviking.js";

// The fake is checked against the wire contract (backends-wire.md §3.2) with plain fetch, so the
// adapter's tests can trust it.

const KEY = "user-key-u1";
const ROOT = "root-key";

let fake: FakeOpenViking;

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = { "X-API-Key": KEY },
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${fake.url}${path}`, {
    method,
    headers: { ...(body !== undefined ? { "Content-Type": "application/json" } : {}), ...headers },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  return {
    status: response.status,
    json: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  };
}

beforeAll(async () => {
  fake = await startFakeOpenViking({
    userKeys: {
      [KEY]: { account: "default", user: "u1" },
      "user-key-u2": { account: "default", user: "u2" },
    },
    rootKey: ROOT,
    taskPolls: 2,
  });
});
afterAll(async () => {
  await fake?.close();
});

describe("fake OpenViking: the happy paths of §3.2", () => {
  it("1. GET /health is not enveloped and names the auth mode", async () => {
    const anonymous = await call("GET", "/health", undefined, {});
    expect(anonymous.status).toBe(200);
    expect(anonymous.json).toEqual({ status: "ok", healthy: true, version: "fake", auth_mode: "api_key" });
    const known = await call("GET", "/health");
    expect(known.json).toMatchObject({ account_id: "default", user_id: "u1", role: "user" });
  });

  it("2. POST /sessions creates a session with explicit nulls in the envelope", async () => {
    const r = await call("POST", "/api/v1/sessions", { session_id: "s1" });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      status: "ok",
      result: {
        session_id: "s1",
        uri: "viking://user/u1/sessions/s1",
        user: { account_id: "default", user_id: "u1" },
        auto_commit_policy: null,
      },
      error: null,
      telemetry: null,
    });
    expect(r.json).toHaveProperty("profile", null);
    expect(r.headers.get("x-process-time")).toMatch(/^\d+\.\d+$/);
  });

  it("3. adding a message counts it, and auto-creates a session never created", async () => {
    const r = await call("POST", "/api/v1/sessions/s1/messages", { role: "user", content: "I prefer tabs" });
    expect(r.json.result).toEqual({ session_id: "s1", message_count: 1, pending_tokens: 3 });
    const fresh = await call("POST", "/api/v1/sessions/never-made/messages", {
      role: "assistant",
      content: "ok",
    });
    expect(fresh.status).toBe(200);
    expect(fresh.json.result).toMatchObject({ session_id: "never-made", message_count: 1 });
  });

  it("4. commit is accepted with a task, a second commit without new messages is skipped", async () => {
    const first = await call("POST", "/api/v1/sessions/s1/commit", {});
    expect(first.status).toBe(200);
    // commit serialises with exclude_none: no error/telemetry keys.
    expect(first.json).not.toHaveProperty("error");
    expect(first.json.result).toMatchObject({
      session_id: "s1",
      status: "accepted",
      archive_uri: "viking://user/u1/sessions/s1/history/archive_001",
      archived: true,
    });
    expect(typeof (first.json.result as { task_id: unknown }).task_id).toBe("string");
    const second = await call("POST", "/api/v1/sessions/s1/commit", {});
    expect(second.json.result).toEqual({
      session_id: "s1",
      status: "skipped",
      task_id: null,
      archive_uri: null,
      archived: false,
      reason: "no_messages",
    });

    // 5. the task runs for taskPolls polls, then completes and the memory exists.
    const taskId = (first.json.result as { task_id: string }).task_id;
    const polls: unknown[] = [];
    for (let i = 0; i < 3; i++)
      polls.push(((await call("GET", `/api/v1/tasks/${taskId}`)).json.result as { status: string }).status);
    expect(polls).toEqual(["running", "running", "completed"]);
    const done = await call("GET", `/api/v1/tasks/${taskId}`);
    expect(done.json.result).toMatchObject({
      task_type: "session_commit",
      status: "completed",
      result: { memories_extracted: { preferences: 1 } },
    });
    expect(fake.readFile("viking://user/u1/memories/preferences/i_prefer_tabs.md")).toBe("I prefer tabs");
    const meta = await call("GET", "/api/v1/sessions/s1?auto_create=false");
    expect(meta.json.result).toMatchObject({
      session_id: "s1",
      message_count: 0,
      commit_count: 1,
      total_message_count: 1,
    });
  });

  it("6. content/write creates a memory file; content/read returns it", async () => {
    const w = await call("POST", "/api/v1/content/write", {
      uri: "viking://user/u1/memories/notes/a.md",
      content: "hello",
      mode: "create",
    });
    expect(w.status).toBe(200);
    expect(w.json.result).toMatchObject({
      uri: "viking://user/u1/memories/notes/a.md",
      context_type: "memory",
      mode: "create",
      written_bytes: 5,
    });
    const r = await call(
      "GET",
      `/api/v1/content/read?uri=${encodeURIComponent("viking://user/u1/memories/notes/a.md")}`,
    );
    expect(r.json).toEqual({ status: "ok", result: "hello", error: null, telemetry: null, profile: null });
  });

  it("7. fs/ls lists with the original output fields", async () => {
    const r = await call(
      "GET",
      `/api/v1/fs/ls?uri=${encodeURIComponent("viking://user/u1/memories/notes")}&output=original`,
    );
    const rows = r.json.result as Record<string, unknown>[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      name: "a.md",
      isDir: false,
      size: 5,
      uri: "viking://user/u1/memories/notes/a.md",
      mode: 420,
    });
    expect(rows[0]!.modTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}\+00:00$/);
    // The HTTP default is output=agent: no name/mode, an abstract per entry.
    const agent = await call("GET", `/api/v1/fs/ls?uri=${encodeURIComponent("viking://~/memories/notes")}`);
    const row = (agent.json.result as Record<string, unknown>[])[0]!;
    expect(row).not.toHaveProperty("name");
    expect(row).not.toHaveProperty("mode");
    expect(row.abstract).toBe("hello");
  });

  it("8. abstract/overview of a directory are cut from its children", async () => {
    const r = await call(
      "GET",
      `/api/v1/content/abstract?uri=${encodeURIComponent("viking://~/memories/notes")}`,
    );
    expect(r.json.result).toBe("hello");
    const o = await call(
      "GET",
      `/api/v1/content/overview?uri=${encodeURIComponent("viking://~/memories/notes")}`,
    );
    expect(o.json.result).toBe("hello");
  });

  it("9. search/find returns the merged buckets, ranked, limit honoured, ~ expanded", async () => {
    const r = await call("POST", "/api/v1/search/find", {
      query: "tabs",
      target_uri: "viking://~/memories",
      limit: 5,
    });
    expect(r.json).toEqual({
      status: "ok",
      result: {
        memories: [
          {
            context_type: "memory",
            uri: "viking://user/u1/memories/preferences/i_prefer_tabs.md",
            level: 2,
            score: expect.any(Number),
            abstract: "I prefer tabs",
            tags: [],
          },
        ],
        resources: [],
        skills: [],
        total: 1,
      },
    });
    const score = (r.json.result as { memories: { score: number }[] }).memories[0]!.score;
    expect(score).toBeGreaterThan(0);
    expect(score).toBeLessThanOrEqual(1);
    const limited = await call("POST", "/api/v1/search/find", { query: "tabs hello", limit: 1 });
    expect((limited.json.result as { total: number }).total).toBe(1);
  });

  it("find with include_provenance adds what each query searched and matched", async () => {
    const r = await call("POST", "/api/v1/search/find", {
      query: "tabs",
      target_uri: "viking://~/memories",
      include_provenance: true,
    });
    const result = r.json.result as {
      provenance: { searched_directories: string[]; matched_contexts: { tier: string }[] }[];
    };
    expect(result.provenance[0]!.searched_directories).toEqual(["viking://user/u1/memories"]);
    expect(result.provenance[0]!.matched_contexts[0]).toMatchObject({ tier: "L2", context_type: "memory" });
  });

  it("content/batch-write upserts files under an existing root, all or nothing", async () => {
    await call("POST", "/api/v1/fs/mkdir", { uri: "viking://~/memories/batch" });
    const r = await call("POST", "/api/v1/content/batch-write", {
      root_uri: "viking://~/memories/batch",
      operations: [
        { uri: "viking://~/memories/batch/a.md", content: "alpha", mode: "upsert" },
        { uri: "viking://~/memories/batch/b.md", content: "beta", mode: "create" },
      ],
    });
    expect(r.json.result).toMatchObject({
      root_uri: "viking://user/u1/memories/batch",
      created: ["viking://user/u1/memories/batch/a.md", "viking://user/u1/memories/batch/b.md"],
      updated: [],
    });
    const again = await call("POST", "/api/v1/content/batch-write", {
      root_uri: "viking://~/memories/batch",
      operations: [
        { uri: "viking://~/memories/batch/a.md", content: "alpha 2", mode: "upsert" },
        { uri: "viking://~/memories/batch/b.md", content: "beta 2", mode: "create" },
      ],
    });
    expect(again.status).toBe(409);
    const read = await call("GET", "/api/v1/content/read?uri=viking://~/memories/batch/a.md");
    expect(read.json.result).toBe("alpha");
    const missingRoot = await call("POST", "/api/v1/content/batch-write", {
      root_uri: "viking://~/memories/nowhere",
      operations: [{ uri: "viking://~/memories/nowhere/a.md", content: "x" }],
    });
    expect(missingRoot.status).toBe(400);
    expect((missingRoot.json.error as { message: string }).message).toMatch(/must be an existing directory/);
    const outside = await call("POST", "/api/v1/content/batch-write", {
      root_uri: "viking://~/memories/batch",
      operations: [{ uri: "viking://~/memories/elsewhere.md", content: "x" }],
    });
    expect(outside.status).toBe(400);
    const tooMany = await call("POST", "/api/v1/content/batch-write", {
      root_uri: "viking://~/memories/batch",
      operations: Array.from({ length: 257 }, (_, i) => ({
        uri: `viking://~/memories/batch/${i}.md`,
        content: "x",
      })),
    });
    expect(tooMany.status).toBe(429);
  });

  it("messages and messages/batch take turn_id, message_kind and source_message_ids; write takes processing_mode", async () => {
    const one = await call("POST", "/api/v1/sessions/s-kinds/messages", {
      role: "user",
      content: "hello",
      turn_id: "t1",
      message_kind: "user_query",
      source_message_ids: ["m0"],
    });
    expect(one.status).toBe(200);
    const bad = await call("POST", "/api/v1/sessions/s-kinds/messages", {
      role: "user",
      content: "x",
      message_kind: "chat",
    });
    expect(bad.status).toBe(400);
    const batch = await call("POST", "/api/v1/sessions/s-kinds/messages/batch", {
      messages: [
        { role: "user", content: "a", message_kind: "user_query" },
        { role: "assistant", content: "b", message_kind: "assistant_step", turn_id: "t1" },
      ],
    });
    expect(batch.json.result).toMatchObject({ added: 2 });
    const write = await call("POST", "/api/v1/content/write", {
      uri: "viking://~/memories/notes/pm.md",
      content: "processing",
      mode: "create",
      processing_mode: "vectors_only",
    });
    expect(write.status).toBe(200);
    const wrongMode = await call("POST", "/api/v1/content/write", {
      uri: "viking://~/memories/notes/pm2.md",
      content: "processing",
      mode: "create",
      processing_mode: "everything",
    });
    expect(wrongMode.status).toBe(400);
  });

  it("10. add-resource stores a placeholder and answers with a task", async () => {
    const r = await call("POST", "/api/v1/resources", {
      path: "https://example.com/doc.md",
      to: "viking://resources/doc",
    });
    expect(r.json.result).toMatchObject({
      status: "success",
      root_uri: "viking://resources/doc",
      errors: [],
    });
    expect(typeof (r.json.result as { task_id: unknown }).task_id).toBe("string");
  });
});

describe("fake OpenViking: the error cases of §3.2", () => {
  it("V1: no key and a bad key are 401 UNAUTHENTICATED", async () => {
    const none = await call("POST", "/api/v1/search/find", { query: "x" }, {});
    expect(none.status).toBe(401);
    expect(none.json.error).toEqual({ code: "UNAUTHENTICATED", message: "Missing API Key", details: null });
    const bad = await call("POST", "/api/v1/search/find", { query: "x" }, { "X-API-Key": "nope" });
    expect(bad.status).toBe(401);
    expect((bad.json.error as { message: string }).message).toBe("Invalid API Key");
    const bearer = await call(
      "POST",
      "/api/v1/search/find",
      { query: "x" },
      { Authorization: `Bearer ${KEY}` },
    );
    expect(bearer.status).toBe(200);
  });

  it("V2: a ROOT key is refused on data routes", async () => {
    const r = await call("GET", "/api/v1/sessions", undefined, { "X-API-Key": ROOT });
    expect(r.status).toBe(403);
    expect((r.json.error as { code: string }).code).toBe("PERMISSION_DENIED");
  });

  it("V3: an unknown session is 404 on get and on commit", async () => {
    const get = await call("GET", "/api/v1/sessions/nope");
    expect(get.status).toBe(404);
    expect(get.json.error).toMatchObject({ code: "NOT_FOUND", message: "Session nope not found" });
    const commit = await call("POST", "/api/v1/sessions/nope/commit", {});
    expect(commit.status).toBe(404);
  });

  it("V4: creating an existing session is 409 ALREADY_EXISTS", async () => {
    const r = await call("POST", "/api/v1/sessions", { session_id: "s1" });
    expect(r.status).toBe(409);
    expect((r.json.error as { code: string }).code).toBe("ALREADY_EXISTS");
  });

  it("V5: write modes refuse a missing file, an existing file and a bogus mode", async () => {
    const uri = "viking://user/u1/memories/notes/a.md";
    const missing = await call("POST", "/api/v1/content/write", {
      uri: `${uri}x.md`,
      content: "x",
      mode: "replace",
    });
    expect([missing.status, (missing.json.error as { code: string }).code]).toEqual([404, "NOT_FOUND"]);
    expect((missing.json.error as { message: string }).message).toBe(`File not found: ${uri}x.md`);
    const exists = await call("POST", "/api/v1/content/write", { uri, content: "x", mode: "create" });
    expect([exists.status, (exists.json.error as { code: string }).code]).toEqual([409, "ALREADY_EXISTS"]);
    const bogus = await call("POST", "/api/v1/content/write", { uri, content: "x", mode: "bogus" });
    expect([bogus.status, (bogus.json.error as { code: string }).code]).toEqual([400, "INVALID_ARGUMENT"]);
  });

  it("V6: internal, unknown and uid-less scopes are 400 INVALID_URI", async () => {
    for (const uri of ["viking://temp/x", "viking://foo/x", "viking://user/memories", "resources/docs"]) {
      const r = await call("GET", `/api/v1/fs/ls?uri=${encodeURIComponent(uri)}`);
      expect([uri, r.status, (r.json.error as { code: string }).code]).toEqual([uri, 400, "INVALID_URI"]);
    }
    const other = await call("GET", `/api/v1/fs/ls?uri=${encodeURIComponent("viking://user/u2/memories")}`);
    expect(other.status).toBe(403);
  });

  it("V7: an unknown or mistyped find field is 400 with validation_errors and no nulls", async () => {
    const r = await call("POST", "/api/v1/search/find", { query: "x", topk: 3 });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      status: "error",
      error: {
        code: "INVALID_ARGUMENT",
        message: "Invalid request parameters: body.topk: Extra inputs are not permitted",
        details: {
          validation_errors: [
            { loc: ["body", "topk"], message: "Extra inputs are not permitted", type: "extra_forbidden" },
          ],
        },
      },
    });
    const typed = await call("POST", "/api/v1/search/find", { query: 5 });
    expect(
      (typed.json.error as { details: { validation_errors: { type: string }[] } }).details
        .validation_errors[0]!.type,
    ).toBe("string_type");
    const json = await call("POST", "/api/v1/search/find", "{not json");
    expect((json.json.error as { code: string }).code).toBe("INVALID_ARGUMENT");
  });

  it("V8: add-resource refuses local paths (403) and a request without a source (400)", async () => {
    for (const path of ["/etc/passwd", "./a.md"]) {
      const r = await call("POST", "/api/v1/resources", { path });
      expect(r.status).toBe(403);
    }
    const none = await call("POST", "/api/v1/resources", { to: "viking://resources/x" });
    expect(none.status).toBe(400);
  });

  it("V9: a scripted PROCESSING_ERROR fails the task with its text", async () => {
    fake.failNextTask();
    await call("POST", "/api/v1/sessions/s9/messages", { role: "user", content: "remember this" });
    const commit = await call("POST", "/api/v1/sessions/s9/commit", {});
    const taskId = (commit.json.result as { task_id: string }).task_id;
    let task: Record<string, unknown> = {};
    for (let i = 0; i < 4; i++)
      task = (await call("GET", `/api/v1/tasks/${taskId}`)).json.result as Record<string, unknown>;
    expect(task).toMatchObject({ status: "failed", error: expect.stringContaining("PROCESSING_ERROR") });
  });

  it("commit after a failed archive is 412 FAILED_PRECONDITION", async () => {
    await call("POST", "/api/v1/sessions/s10/messages", { role: "user", content: "x" });
    fake.breakArchive("default", "u1", "s10");
    const r = await call("POST", "/api/v1/sessions/s10/commit", {});
    expect([r.status, (r.json.error as { code: string }).code]).toEqual([412, "FAILED_PRECONDITION"]);
  });

  it("an unknown route is an enveloped 404; a wrong method is 405 UNKNOWN", async () => {
    const r = await call("GET", "/api/v1/nothing-here");
    expect(r.json).toEqual({ status: "error", error: { code: "NOT_FOUND", message: "Not Found" } });
    const m = await call("PUT", "/api/v1/content/write", {});
    expect([m.status, (m.json.error as { code: string }).code]).toEqual([405, "UNKNOWN"]);
  });

  it("a message needs content or parts", async () => {
    const r = await call("POST", "/api/v1/sessions/s1/messages", { role: "user" });
    expect(r.status).toBe(400);
    expect(
      (r.json.error as { details: { validation_errors: { type: string }[] } }).details.validation_errors[0]!
        .type,
    ).toBe("value_error");
  });

  it("the read route hides OpenViking's own MEMORY_FIELDS comment unless raw=true", async () => {
    const uri = "viking://user/u1/memories/notes/fields.md";
    await call("POST", "/api/v1/content/write", {
      uri,
      content: 'body\n\n<!-- MEMORY_FIELDS\n{"version": 1}\n-->',
      mode: "create",
    });
    const r = await call("GET", `/api/v1/content/read?uri=${encodeURIComponent(uri)}`);
    expect(r.json.result).toBe("body");
    const raw = await call("GET", `/api/v1/content/read?uri=${encodeURIComponent(uri)}&raw=true`);
    expect(raw.json.result).toContain("MEMORY_FIELDS");
  });
});

describe("fake OpenViking: scripted faults", () => {
  it("answers a scripted error envelope once, then normally", async () => {
    fake.script({
      method: "POST",
      path: "/api/v1/search/find",
      fault: { kind: "error", status: 500, code: "INTERNAL", message: "boom" },
    });
    const r = await call("POST", "/api/v1/search/find", { query: "tabs" });
    expect(r.status).toBe(500);
    expect(r.json.error).toEqual({ code: "INTERNAL", message: "boom", details: null });
    expect((await call("POST", "/api/v1/search/find", { query: "tabs" })).status).toBe(200);
  });

  it("drops a connection", async () => {
    fake.script({ path: "/api/v1/sessions", fault: { kind: "drop" } });
    await expect(call("GET", "/api/v1/sessions")).rejects.toThrow();
  });

  it("records what it received", async () => {
    await call(
      "POST",
      "/api/v1/search/find",
      { query: "recorded" },
      { "X-API-Key": KEY, "X-OpenViking-Account": "acme" },
    );
    const last = fake.requests.at(-1)!;
    expect(last).toMatchObject({ method: "POST", path: "/api/v1/search/find", body: { query: "recorded" } });
    expect(last.headers["x-openviking-account"]).toBe("acme");
  });
});

describe("fake OpenViking: dev mode", () => {
  it("takes the identity from the account/user headers", async () => {
    const dev = await startFakeOpenViking();
    try {
      const headers = {
        "X-OpenViking-Account": "acme",
        "X-OpenViking-User": "bob",
        "Content-Type": "application/json",
      };
      const w = await fetch(`${dev.url}/api/v1/content/write`, {
        method: "POST",
        headers,
        body: JSON.stringify({ uri: "viking://~/memories/x.md", content: "hi", mode: "create" }),
      });
      expect(((await w.json()) as { result: { uri: string } }).result.uri).toBe(
        "viking://user/bob/memories/x.md",
      );
      expect(dev.files("acme")).toContain("viking://user/bob/memories/x.md");
      expect(dev.files("default")).toEqual([]);
      const health = (await (await fetch(`${dev.url}/health`)).json()) as { auth_mode: string };
      expect(health.auth_mode).toBe("dev");
    } finally {
      await dev.close();
    }
  });
});
