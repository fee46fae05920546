import { createServer } from "node:net";
import { OpenRathError, Session } from "@openrath/core";
import { memoryId } from "@openrath/core/backend";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openVikingMemory } from "./open-viking-memory.js";
import { type FakeOpenViking, type RecordedRequest, startFakeOpenViking } from "./testing/fake-openviking.js";

const KEY = "user-key-u1";
const ROOT_KEY = "root-key";
const ACCOUNT = "acme-corp";

let fake: FakeOpenViking;
let count = 0;

beforeAll(async () => {
  fake = await startFakeOpenViking({
    userKeys: { [KEY]: { account: ACCOUNT, user: "u1" } },
    rootKey: ROOT_KEY,
    taskPolls: 1,
  });
});
afterAll(async () => {
  await fake?.close();
});
afterEach(() => {
  fake.clearScripts();
});

/** A fresh root per test, so every test starts from an empty store on the shared fake. */
function freshRoot(): { root: string; expanded: string } {
  const name = `openrath-test-${++count}`;
  return { root: `viking://~/memories/${name}`, expanded: `viking://user/u1/memories/${name}` };
}

async function open(
  options: Parameters<typeof openVikingMemory>[0] = {},
  spec?: Parameters<ReturnType<typeof openVikingMemory>["open"]>[0],
) {
  const { root, expanded } = freshRoot();
  const backend = openVikingMemory({ url: fake.url, apiKey: KEY, root, ...options });
  const memory = await backend.open(spec);
  return { memory, root, expanded, backend };
}

/** Requests recorded from index `from` on. */
function since(from: number): RecordedRequest[] {
  return fake.requests.slice(from);
}

async function rejection(promise: Promise<unknown>): Promise<OpenRathError> {
  try {
    await promise;
  } catch (error) {
    if (OpenRathError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("the descriptor and its options", () => {
  it("is a v1 memory backend with key openviking and a conservative manifest", () => {
    const backend = openVikingMemory();
    expect(backend).toMatchObject({ kind: "memory", key: "openviking", specVersion: "v1" });
    expect(backend.capabilities).toEqual({ vectorSearch: false, persistence: true, sharedWriters: true });
  });

  it("parseSpec fills the default scope and refuses unknown fields and levels", async () => {
    const backend = openVikingMemory();
    expect(backend.parseSpec!(undefined)).toEqual({ scope: { tenant: "default" } });
    expect(backend.parseSpec!({ scope: { tenant: "acme", user: "bob" } })).toEqual({
      scope: { tenant: "acme", user: "bob" },
    });
    expect(backend.parseSpec!({ scope: { agent: "helper" } })).toEqual({
      scope: { tenant: "default", user: "default", agent: "helper" },
    });
    expect(() => backend.parseSpec!({ url: "http://x" })).toThrowError(
      /"url" is "http:\/\/x"; it is not a field of the spec; the fields are scope\./,
    );
    expect(() => backend.parseSpec!({ url: "http://x" })).toThrowError(
      expect.objectContaining({ code: "invalid_spec" }),
    );
    expect(() => backend.parseSpec!("acme")).toThrowError(/must be an object/);
    const typo = (() => {
      try {
        backend.parseSpec!({ scope: { tennant: "acme" } });
      } catch (error) {
        return error as OpenRathError;
      }
    })();
    expect(typo?.code).toBe("invalid_scope");
    expect(typo?.message).toMatch(/unknown level "tennant"/);
  });

  it("refuses bad options with invalid_argument naming the option", () => {
    const cases: [Parameters<typeof openVikingMemory>[0], RegExp][] = [
      [{ url: "ftp://example.com" }, /"url" is "ftp:\/\/example.com"; it must be an http or https URL/],
      [{ requestTimeoutMs: -1 }, /"requestTimeoutMs" is -1/],
      [{ account: "two words" }, /"account" is "two words"/],
      [{ root: "viking://~/memories/../escape" }, /"root"/],
      [{ root: "/memories/openrath" }, /"root"/],
      [{ concurrency: 0 }, /"concurrency" is 0/],
      [{ agent: "helper" } as never, /"agent" is "helper"; it is not supported: .* pass actorPeer/],
      [{ waitForIndex: "yes" } as never, /"waitForIndex"/],
      [
        { urll: "http://x" } as never,
        /"urll" .*not an option of openVikingMemory\(\); the fields are url, apiKey, account, user, actorPeer, root,/,
      ],
    ];
    for (const [options, message] of cases) {
      let error: unknown;
      try {
        openVikingMemory(options);
      } catch (e) {
        error = e;
      }
      expect(OpenRathError.isInstance(error, "invalid_argument"), JSON.stringify(options)).toBe(true);
      expect((error as Error).message).toMatch(message);
    }
  });

  it("never shows an API key in an error", () => {
    const key = "secret key with spaces";
    let error: unknown;
    try {
      openVikingMemory({ apiKey: key });
    } catch (e) {
      error = e;
    }
    expect(OpenRathError.isInstance(error, "invalid_argument")).toBe(true);
    expect((error as Error).message).toContain('"apiKey" is given (not shown');
    expect(`${(error as Error).message} ${JSON.stringify((error as OpenRathError).details)}`).not.toContain(
      key,
    );
  });

  it("defaults the url to http://127.0.0.1:1933 and reads nothing else from the network", async () => {
    const saved = { url: process.env.OPENVIKING_URL, key: process.env.OPENVIKING_API_KEY };
    delete process.env.OPENVIKING_URL;
    delete process.env.OPENVIKING_API_KEY;
    try {
      const seen: { url: string; headers: Record<string, string> }[] = [];
      const backend = openVikingMemory({
        fetch: async (input, init) => {
          seen.push({ url: String(input), headers: init?.headers as Record<string, string> });
          throw new TypeError("fetch failed", {
            cause: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }),
          });
        },
      });
      const error = await rejection(backend.open(undefined));
      expect(error.code).toBe("memory_unavailable");
      expect(seen[0]!.url).toBe("http://127.0.0.1:1933/health");
      expect(seen[0]!.headers).not.toHaveProperty("X-API-Key");
    } finally {
      if (saved.url !== undefined) process.env.OPENVIKING_URL = saved.url;
      if (saved.key !== undefined) process.env.OPENVIKING_API_KEY = saved.key;
    }
  });

  it("reads OPENVIKING_URL and OPENVIKING_API_KEY at open time", async () => {
    const saved = { url: process.env.OPENVIKING_URL, key: process.env.OPENVIKING_API_KEY };
    const backend = openVikingMemory({ root: freshRoot().root });
    process.env.OPENVIKING_URL = fake.url;
    process.env.OPENVIKING_API_KEY = KEY;
    try {
      const before = fake.requests.length;
      const memory = await backend.open(undefined);
      await memory.close();
      expect(since(before).map((r) => r.headers["x-api-key"])).toEqual([KEY, KEY]);
    } finally {
      if (saved.url === undefined) delete process.env.OPENVIKING_URL;
      else process.env.OPENVIKING_URL = saved.url;
      if (saved.key === undefined) delete process.env.OPENVIKING_API_KEY;
      else process.env.OPENVIKING_API_KEY = saved.key;
    }
  });
});

describe("what goes over the wire", () => {
  it("open checks /health, then an authenticated stat of the root", async () => {
    const before = fake.requests.length;
    const { memory, root } = await open();
    const sent = since(before);
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /health", "GET /api/v1/fs/stat"]);
    expect(sent[1]!.query).toEqual({ uri: root });
    await memory.close();
  });

  it("every call carries the key and the identity headers; bodies are JSON", async () => {
    const before = fake.requests.length;
    const { memory } = await open({ account: "acme", user: "bob" });
    await memory.remember({ text: "headers probe" });
    await memory.recall("headers");
    for (const r of since(before)) {
      expect(r.headers["x-api-key"], `${r.method} ${r.path}`).toBe(KEY);
      expect(r.headers["x-openviking-account"]).toBe("acme");
      expect(r.headers["x-openviking-user"]).toBe("bob");
      // The server reads no agent header; identity is the key, account, user and actor peer.
      expect(r.headers).not.toHaveProperty("x-openviking-agent");
      expect(r.headers).not.toHaveProperty("x-openviking-actor-peer");
      expect(r.headers).not.toHaveProperty("authorization");
      expect(r.headers.accept).toBe("application/json");
      if (r.method === "POST") expect(r.headers["content-type"]).toBe("application/json");
      else expect(r.headers).not.toHaveProperty("content-type");
    }
    await memory.close();
    const peer = await open({ actorPeer: "helper" });
    const last = fake.requests.at(-1)!;
    expect(last.headers["x-openviking-actor-peer"]).toBe("helper");
    expect(last.headers).not.toHaveProperty("x-openviking-agent");
    await peer.memory.close();
  });

  it("remember batch-writes <root>/<tenant>/<user>/_entries/<id>.md with upsert, making the directory once", async () => {
    const { memory, root, expanded } = await open();
    const scope = { tenant: "acme", user: "bob" };
    const before = fake.requests.length;
    const [entry] = await memory.remember({
      text: "Bob prefers tabs.",
      scope,
      metadata: { k: 1 },
      source: "s-1",
    });
    const dir = `${root}/acme/bob/_entries`;
    const uri = `${dir}/${memoryId(scope, "Bob prefers tabs.")}.md`;
    const sent = since(before);
    // The batch root must exist: the first batch is refused, the directory made, the batch sent again.
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /api/v1/content/batch-write",
      "POST /api/v1/fs/mkdir",
      "POST /api/v1/content/batch-write",
    ]);
    const write = sent[2]!;
    expect(write.body).toEqual({
      root_uri: dir,
      operations: [{ uri, content: expect.any(String), mode: "upsert" }],
      wait: true,
    });
    const content = (write.body as { operations: { content: string }[] }).operations[0]!.content;
    expect(content.startsWith("Bob prefers tabs.\n\n<!-- openrath-memory v1 ")).toBe(true);
    expect(content).toMatch(/ [0-9a-f]+ -->\n$/);
    // What is stored is what was sent, under the expanded URI.
    expect(fake.readFile(`${expanded}/acme/bob/_entries/${entry!.id}.md`, ACCOUNT)).toBe(content);

    const again = fake.requests.length;
    await memory.remember([
      { id: entry!.id, text: "Bob prefers spaces now.", scope },
      { text: "Bob's second note.", scope },
    ]);
    const writes = since(again);
    expect(writes.map((r) => r.path)).toEqual(["/api/v1/content/batch-write"]);
    expect(
      (writes[0]!.body as { operations: { uri: string; mode: string }[] }).operations.map((o) => [
        o.uri,
        o.mode,
      ]),
    ).toEqual([
      [uri, "upsert"],
      [`${dir}/${memoryId(scope, "Bob's second note.")}.md`, "upsert"],
    ]);
    await memory.close();
  });

  it("recall sends find with exactly the visible entries directories, then reads each hit", async () => {
    const { memory, root, expanded } = await open();
    const [entry] = await memory.remember({ text: "Deploys happen on Tuesdays.", scope: { tenant: "acme" } });
    const before = fake.requests.length;
    const hits = await memory.recall("deploys", { scope: { tenant: "acme", user: "bob" }, topK: 3 });
    expect(hits.map((h) => h.entry)).toEqual([entry]);
    const [find, read] = since(before);
    expect(find).toMatchObject({ method: "POST", path: "/api/v1/search/find" });
    expect(find!.body).toEqual({
      query: "deploys",
      target_uri: [`${root}/acme/_entries`, `${root}/acme/bob/_entries`],
      limit: 14,
    });
    expect(read).toMatchObject({ method: "GET", path: "/api/v1/content/read" });
    expect(read!.query).toEqual({
      uri: `${expanded}/acme/_entries/${entry!.id}.md`,
      offset: "0",
      limit: "-1",
    });

    const withMin = fake.requests.length;
    await memory.recall("deploys", { scope: { tenant: "acme" }, minScore: 0.1 });
    expect(since(withMin)[0]!.body).toEqual({
      query: "deploys",
      target_uri: [`${root}/acme/_entries`],
      limit: 18,
      score_threshold: 0.1,
    });
    await memory.close();
  });

  it("commit stats each entry, feeds the new turns to an OpenViking session and commits it", async () => {
    const { memory, root } = await open();
    const session = Session.fromUserMessage("I prefer tabs.").append({
      kind: "assistant",
      content: "Noted: tabs.",
    });
    const scope = { tenant: "acme", user: "u1" };
    const before = fake.requests.length;
    const stored = await memory.commit(session, { scope });
    expect(stored.map((e) => e.text)).toEqual(["I prefer tabs.", "Noted: tabs."]);
    const sent = since(before).map((r) => ({ call: `${r.method} ${r.path}`, query: r.query, body: r.body }));
    const uris = stored.map((e) => `${root}/acme/u1/_entries/${e.id}.md`);
    expect(sent).toEqual([
      { call: "GET /api/v1/fs/stat", query: { uri: uris[0] }, body: undefined },
      { call: "GET /api/v1/fs/stat", query: { uri: uris[1] }, body: undefined },
      { call: "POST /api/v1/sessions", query: {}, body: { session_id: session.id } },
      {
        call: `POST /api/v1/sessions/${session.id}/messages/batch`,
        query: {},
        body: {
          messages: [
            {
              role: "user",
              content: "I prefer tabs.",
              message_kind: "user_query",
              created_at: expect.any(String),
            },
            {
              role: "assistant",
              content: "Noted: tabs.",
              message_kind: "assistant_step",
              created_at: expect.any(String),
            },
          ],
        },
      },
      { call: `POST /api/v1/sessions/${session.id}/commit`, query: {}, body: {} },
      {
        call: "POST /api/v1/content/batch-write",
        query: {},
        body: expect.objectContaining({ root_uri: `${root}/acme/u1/_entries` }),
      },
      { call: "POST /api/v1/fs/mkdir", query: {}, body: { uri: `${root}/acme/u1/_entries` } },
      {
        call: "POST /api/v1/content/batch-write",
        query: {},
        body: {
          root_uri: `${root}/acme/u1/_entries`,
          operations: [
            {
              uri: uris[0],
              content: expect.stringMatching(/^I prefer tabs\.\n\n<!-- openrath-memory v1 /),
              mode: "upsert",
            },
            { uri: uris[1], content: expect.stringMatching(/^Noted: tabs\.\n\n/), mode: "upsert" },
          ],
          wait: true,
        },
      },
    ]);
    expect(fake.session(ACCOUNT, "u1", session.id)).toEqual({
      messages: [],
      commitCount: 1,
      totalMessageCount: 2,
    });

    // Nothing new: no session traffic, no writes.
    const again = fake.requests.length;
    expect(await memory.commit(session, { scope })).toEqual([]);
    expect(since(again).map((r) => r.path)).toEqual(["/api/v1/fs/stat", "/api/v1/fs/stat"]);

    // Only the new turns go to the session the second time.
    const grown = session.append({ kind: "user", content: "And 4 spaces in YAML." });
    expect((await memory.commit(grown, { scope })).map((e) => e.text)).toEqual(["And 4 spaces in YAML."]);
    expect(fake.session(ACCOUNT, "u1", session.id)).toMatchObject({ commitCount: 2, totalMessageCount: 3 });
    await memory.close();
  });

  it("forget by ids deletes each entry file at the given scope directly, listing nothing", async () => {
    const { memory, root } = await open();
    const scope = { tenant: "t", user: "x" };
    const [a] = await memory.remember([{ text: "forget me", scope }, { text: "keep me" }]);
    const before = fake.requests.length;
    expect(await memory.forget({ ids: [a!.id, "no-such-id"], scope })).toBe(1);
    const sent = since(before);
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual(["DELETE /api/v1/fs", "DELETE /api/v1/fs"]);
    expect(sent.map((r) => r.query)).toEqual([
      { uri: `${root}/t/x/_entries/${a!.id}.md`, recursive: "false" },
      { uri: `${root}/t/x/_entries/no-such-id.md`, recursive: "false" },
    ]);
    await memory.close();
  });

  it("forget by scope lists the scope's directory, then deletes it recursively", async () => {
    const { memory, root } = await open();
    await memory.remember([
      { text: "one", scope: { tenant: "t", user: "x" } },
      { text: "two", scope: { tenant: "t", user: "x", agent: "a" } },
      { text: "three", scope: { tenant: "t" } },
    ]);
    const before = fake.requests.length;
    expect(await memory.forget({ scope: { tenant: "t", user: "x" } })).toBe(2);
    const [ls, del] = since(before);
    expect(ls!.query).toMatchObject({ uri: `${root}/t/x`, recursive: "true" });
    expect(del!.query).toEqual({ uri: `${root}/t/x`, recursive: "true" });
    expect(await memory.forget({ scope: { tenant: "t", user: "x" } })).toBe(0);
    expect((await memory.recall("three", { scope: { tenant: "t" } })).length).toBe(1);
    await memory.close();
  });
});

describe("mapping scopes and ids onto URIs", () => {
  it("odd scope values get safe segments and stay isolated, including a user named _entries", async () => {
    const { memory, expanded } = await open();
    const odd = [
      "_entries",
      "x-ray",
      "two words",
      "ünï/côde".replace("/", ""),
      "a".repeat(200),
      ".hidden",
      "{calendar:today}",
    ];
    await memory.remember({ text: "marker at the tenant", scope: { tenant: "t" } });
    for (const user of odd)
      await memory.remember({ text: `marker for ${user}`, scope: { tenant: "t", user } });
    for (const user of odd) {
      const hits = await memory.recall("marker", { scope: { tenant: "t", user }, topK: 50 });
      expect(hits.map((h) => h.entry.text).sort(), user).toEqual(
        ["marker at the tenant", `marker for ${user}`].sort(),
      );
    }
    const tenantOnly = await memory.recall("marker", { scope: { tenant: "t" }, topK: 50 });
    expect(tenantOnly.map((h) => h.entry.text)).toEqual(["marker at the tenant"]);
    for (const uri of fake.files(ACCOUNT).filter((u) => u.startsWith(`${expanded}/`))) {
      expect(uri.slice(expanded.length), uri).toMatch(
        /^(\/[A-Za-z0-9][A-Za-z0-9_.-]*)+\/_entries\/[A-Za-z0-9][A-Za-z0-9_.-]*\.md$/,
      );
    }
    await memory.close();
  });

  it("explicit ids with any characters round-trip and can be forgotten", async () => {
    const { memory } = await open();
    const ids = ["a/b c", "ünïcode-id", "x-1", "h-2", "../../etc", "a".repeat(300)];
    await memory.remember(ids.map((id) => ({ id, text: `explicit id ${id.slice(0, 20)}` })));
    const hits = await memory.recall("explicit id", { topK: 20 });
    expect(hits.map((h) => h.entry.id).sort()).toEqual([...ids].sort());
    expect(await memory.forget({ ids, scope: hits[0]!.entry.scope })).toBe(ids.length);
    expect(await memory.recall("explicit id", { topK: 20 })).toEqual([]);
    await memory.close();
  });

  it("an explicit id at two scopes of a tenant is two entries (ids are unique within a scope)", async () => {
    const { memory, expanded } = await open();
    await memory.remember({ id: "pref", text: "Ann likes tea.", scope: { tenant: "acme", user: "ann" } });
    await memory.remember({
      id: "pref",
      text: "Ann likes green tea.",
      scope: { tenant: "acme", user: "ann", agent: "barista" },
    });
    const atUser = await memory.recall("tea", { scope: { tenant: "acme", user: "ann" } });
    expect(atUser.map((h) => h.entry.text)).toEqual(["Ann likes tea."]);
    const atAgent = await memory.recall("tea", { scope: { tenant: "acme", user: "ann", agent: "barista" } });
    expect(atAgent.map((h) => h.entry.text).sort()).toEqual(["Ann likes green tea.", "Ann likes tea."]);
    expect(
      fake.files(ACCOUNT).filter((u) => u.startsWith(`${expanded}/`) && u.endsWith("/pref.md")),
    ).toHaveLength(2);
    await memory.close();
  });

  it("the store's default scope applies to remember, recall and commit", async () => {
    const { memory, root } = await open({}, { scope: { tenant: "acme", user: "bob" } });
    const [entry] = await memory.remember({ text: "Defaults apply here." });
    expect(entry!.scope).toEqual({ tenant: "acme", user: "bob" });
    const before = fake.requests.length;
    expect((await memory.recall("defaults")).map((h) => h.entry.id)).toEqual([entry!.id]);
    expect((since(before)[0]!.body as { target_uri: string[] }).target_uri).toEqual([
      `${root}/acme/_entries`,
      `${root}/acme/bob/_entries`,
    ]);
    const [committed] = await memory.commit(Session.fromUserMessage("Committed at the default scope."));
    expect(committed!.scope).toEqual({ tenant: "acme", user: "bob" });
    await memory.close();
  });

  it("a file without our trailer in an entries directory is recalled at that directory's scope", async () => {
    const { memory, root } = await open();
    await memory.remember({ text: "ours", scope: { tenant: "acme", user: "bob" } });
    const response = await fetch(`${fake.url}/api/v1/content/write`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-API-Key": KEY },
      body: JSON.stringify({
        uri: `${root}/acme/bob/_entries/handwritten.md`,
        content: "a handwritten note",
        mode: "create",
      }),
    });
    expect(response.status).toBe(200);
    const hits = await memory.recall("handwritten note", {
      scope: { tenant: "acme", user: "bob", agent: "x" },
    });
    expect(hits.map((h) => h.entry)).toEqual([
      { id: "handwritten", text: "a handwritten note", scope: { tenant: "acme", user: "bob" }, createdAt: 0 },
    ]);
    await memory.close();
  });

  it("a file whose trailer names another scope than its place is not recalled", async () => {
    const { memory, root } = await open();
    const [entry] = await memory.remember({ text: "secret of bob", scope: { tenant: "acme", user: "bob" } });
    const content = fake.readFile(
      `${root.replace("~", "user/u1")}/acme/bob/_entries/${entry!.id}.md`,
      ACCOUNT,
    )!;
    // Copied into ann's directory: the trailer still says bob.
    await fetch(`${fake.url}/api/v1/content/write`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-API-Key": KEY },
      body: JSON.stringify({ uri: `${root}/acme/ann/_entries/${entry!.id}.md`, content, mode: "create" }),
    });
    expect(await memory.recall("secret", { scope: { tenant: "acme", user: "ann" } })).toEqual([]);
    await memory.close();
  });

  it("with a server that cannot filter exactly, recall filters by URI and over-fetches to fill topK", async () => {
    const { root } = freshRoot();
    let finds = 0;
    // A server that ignores target_uri: every entry under the root comes back, other scopes' first.
    const sloppy: typeof fetch = async (input, init) => {
      if (String(input).endsWith("/api/v1/search/find")) {
        finds++;
        const body = JSON.parse(String(init!.body)) as Record<string, unknown>;
        return fetch(input, { ...init, body: JSON.stringify({ ...body, target_uri: root }) });
      }
      return fetch(input, init);
    };
    const memory = await openVikingMemory({ url: fake.url, apiKey: KEY, root, fetch: sloppy }).open(
      undefined,
    );
    const noise = Array.from({ length: 40 }, (_, i) => ({
      text: `orchid orchid orchid note ${i}`,
      scope: { tenant: "acme", user: `other${i}` },
    }));
    await memory.remember(noise);
    await memory.remember([
      { text: "orchid care for bob", scope: { tenant: "acme", user: "bob" } },
      { text: "orchid shop list", scope: { tenant: "acme" } },
    ]);
    const hits = await memory.recall("orchid", { scope: { tenant: "acme", user: "bob" }, topK: 2 });
    expect(hits.map((h) => h.entry.text).sort()).toEqual(["orchid care for bob", "orchid shop list"]);
    expect(finds, "the first window held only other scopes' entries, so recall asked again").toBeGreaterThan(
      1,
    );
    await memory.close();
  });

  it("directory (L0) hits are ignored", async () => {
    const dirFake = await startFakeOpenViking({ directoryHits: true });
    try {
      const memory = await openVikingMemory({ url: dirFake.url }).open(undefined);
      await memory.remember([{ text: "maple syrup" }, { text: "maple leaves" }]);
      const hits = await memory.recall("maple", { topK: 10 });
      expect(hits.map((h) => h.entry.text).sort()).toEqual(["maple leaves", "maple syrup"]);
      await memory.close();
    } finally {
      await dirFake.close();
    }
  });
});

describe("commit and OpenViking's own extraction", () => {
  it("waitForIndex: false sends wait: false with the batch", async () => {
    const { memory } = await open({ waitForIndex: false });
    const before = fake.requests.length;
    await memory.remember({ text: "fire and forget" });
    const batch = since(before).find((r) => r.path === "/api/v1/content/batch-write")!;
    expect((batch.body as { wait: boolean }).wait).toBe(false);
    await memory.close();
  });

  it("commitSessions: false keeps commit off the sessions API", async () => {
    const { memory } = await open({ commitSessions: false });
    const before = fake.requests.length;
    await memory.commit(Session.fromUserMessage("No sessions for this one."));
    expect(since(before).some((r) => r.path.startsWith("/api/v1/sessions"))).toBe(false);
    await memory.close();
  });

  it("an existing OpenViking session (409 on create) is reused", async () => {
    const { memory } = await open();
    const session = Session.fromUserMessage("first turn");
    await fetch(`${fake.url}/api/v1/sessions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-API-Key": KEY },
      body: JSON.stringify({ session_id: session.id }),
    });
    expect((await memory.commit(session)).map((e) => e.text)).toEqual(["first turn"]);
    expect(fake.session(ACCOUNT, "u1", session.id)?.commitCount).toBe(1);
    await memory.close();
  });

  it("waitForExtraction polls the task; the server's memories stay outside every scope", async () => {
    const { memory } = await open({ waitForExtraction: true });
    const session = Session.fromUserMessage("I always use dark mode.");
    const before = fake.requests.length;
    expect(await memory.commit(session, { scope: { tenant: "acme" } })).toHaveLength(1);
    const polls = since(before).filter((r) => r.path.startsWith("/api/v1/tasks/"));
    expect(polls.length).toBe(2);
    expect(fake.readFile("viking://user/u1/memories/preferences/i_always_use_dark_mode.md", ACCOUNT)).toBe(
      "I always use dark mode.",
    );
    const hits = await memory.recall("dark mode", { scope: { tenant: "acme" }, topK: 10 });
    expect(hits.map((h) => h.entry.text)).toEqual(["I always use dark mode."]);
    await memory.close();
  });

  it("a failed extraction task is memory_remote_error, after our entries were stored", async () => {
    const { memory } = await open({ waitForExtraction: true });
    fake.failNextTask("PROCESSING_ERROR", "the VLM is down");
    const error = await rejection(memory.commit(Session.fromUserMessage("Extraction will fail for this.")));
    expect(error.code).toBe("memory_remote_error");
    expect(error.message).toMatch(/stored 1 entries.*failed: PROCESSING_ERROR: the VLM is down/);
    expect(error.details).toMatchObject({ taskStatus: "failed", storedIds: [expect.any(String)] });
    expect(await memory.recall("extraction fail")).toHaveLength(1);
    await memory.close();
  });

  it("an OpenViking session whose archive failed stops the commit with FAILED_PRECONDITION", async () => {
    const { memory } = await open();
    const session = Session.fromUserMessage("first");
    await memory.commit(session);
    fake.breakArchive(ACCOUNT, "u1", session.id);
    const error = await rejection(memory.commit(session.append({ kind: "user", content: "second" })));
    expect(error.code).toBe("memory_remote_error");
    expect(error.details).toMatchObject({ status: 412, remoteCode: "FAILED_PRECONDITION" });
    await memory.close();
  });
});

describe("faults", () => {
  it("a wrong API key is memory_unauthorized at open", async () => {
    const error = await rejection(openVikingMemory({ url: fake.url, apiKey: "wrong" }).open(undefined));
    expect(error.code).toBe("memory_unauthorized");
    expect(error.details).toMatchObject({
      status: 401,
      remoteCode: "UNAUTHENTICATED",
      remoteMessage: "Invalid API Key",
    });
    expect(error.message).toMatch(/OPENVIKING_API_KEY/);
  });

  it("no key against an api_key server, and a ROOT key, are memory_unauthorized", async () => {
    const saved = process.env.OPENVIKING_API_KEY;
    delete process.env.OPENVIKING_API_KEY;
    try {
      const missing = await rejection(openVikingMemory({ url: fake.url }).open(undefined));
      expect(missing.code).toBe("memory_unauthorized");
      expect(missing.details).toMatchObject({ remoteMessage: "Missing API Key" });
    } finally {
      if (saved !== undefined) process.env.OPENVIKING_API_KEY = saved;
    }
    const root = await rejection(openVikingMemory({ url: fake.url, apiKey: ROOT_KEY }).open(undefined));
    expect(root.code).toBe("memory_unauthorized");
    expect(root.details).toMatchObject({ status: 403, remoteCode: "PERMISSION_DENIED" });
  });

  it("a key revoked after open makes the next call memory_unauthorized", async () => {
    const { memory } = await open();
    fake.script({
      path: "/api/v1/search/find",
      fault: { kind: "error", status: 401, code: "UNAUTHENTICATED", message: "Invalid API Key" },
    });
    expect((await rejection(memory.recall("anything"))).code).toBe("memory_unauthorized");
    await memory.close();
  });

  it("a server that is down is memory_unavailable, quickly", async () => {
    const url = `http://127.0.0.1:${await deadPort()}`;
    const started = Date.now();
    const error = await rejection(openVikingMemory({ url }).open(undefined));
    expect(error.code).toBe("memory_unavailable");
    expect(error.details).toMatchObject({ transport: "refused" });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("a server that goes away after open makes calls memory_unavailable", async () => {
    const gone = await startFakeOpenViking();
    const memory = await openVikingMemory({ url: gone.url }).open(undefined);
    await gone.close();
    const started = Date.now();
    expect((await rejection(memory.remember({ text: "too late" }))).code).toBe("memory_unavailable");
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("a 500 error envelope is memory_remote_error carrying the server's code and message", async () => {
    const { memory } = await open();
    fake.script({
      method: "POST",
      path: "/api/v1/content/batch-write",
      fault: {
        kind: "error",
        status: 500,
        code: "EMBEDDING_FAILED",
        message: "embedding model timed out",
        details: { model: "e5" },
      },
    });
    const error = await rejection(memory.remember({ text: "will fail" }));
    expect(error.code).toBe("memory_remote_error");
    expect(error.message).toMatch(/HTTP 500 EMBEDDING_FAILED: embedding model timed out/);
    expect(error.details).toMatchObject({
      status: 500,
      remoteCode: "EMBEDDING_FAILED",
      remoteMessage: "embedding model timed out",
      remoteDetails: { model: "e5" },
      method: "POST",
      path: "/api/v1/content/batch-write",
    });
    await memory.close();
  });

  it("enveloped 503, 504, 429 and 409 ABORTED are memory_unavailable and retryable; 409 ALREADY_EXISTS is not", async () => {
    const { memory } = await open();
    for (const [status, code] of [
      [503, "UNAVAILABLE"],
      [503, "MODEL_UNAVAILABLE"],
      [504, "DEADLINE_EXCEEDED"],
      [429, "RESOURCE_EXHAUSTED"],
      [409, "ABORTED"],
    ] as const) {
      fake.script({
        path: "/api/v1/search/find",
        fault: { kind: "error", status, code, message: "try later" },
      });
      const error = await rejection(memory.recall("x"));
      expect(error.code, code).toBe("memory_unavailable");
      expect(error.details, code).toMatchObject({ remoteCode: code, status, retryable: true });
    }
    fake.script({
      path: "/api/v1/search/find",
      fault: { kind: "error", status: 409, code: "CONFLICT", message: "conflict" },
    });
    const conflict = await rejection(memory.recall("x"));
    expect(conflict.code).toBe("memory_remote_error");
    expect(conflict.details).not.toHaveProperty("retryable");
    fake.script({
      path: "/api/v1/search/find",
      fault: { kind: "raw", status: 502, body: "<html>Bad Gateway</html>", contentType: "text/html" },
    });
    const gateway = await rejection(memory.recall("x"));
    expect(gateway.code).toBe("memory_unavailable");
    expect(gateway.details).toMatchObject({ retryable: true });
    await memory.close();
  });

  it("a 200 carrying status:error is an error, not a result", async () => {
    const { memory } = await open();
    fake.script({
      path: "/api/v1/search/find",
      fault: {
        kind: "raw",
        status: 200,
        body: JSON.stringify({
          status: "error",
          result: null,
          error: { code: "INTERNAL", message: "half-broken" },
        }),
      },
    });
    const error = await rejection(memory.recall("x"));
    expect(error.code).toBe("memory_remote_error");
    expect(error.details).toMatchObject({
      status: 200,
      remoteCode: "INTERNAL",
      remoteMessage: "half-broken",
    });
    fake.script({ path: "/api/v1/search/find", fault: { kind: "raw", status: 200, body: "not json" } });
    expect((await rejection(memory.recall("x"))).code).toBe("memory_remote_error");
    await memory.close();
  });

  it("a 404 NOT_FOUND where something must exist is memory_not_found", async () => {
    const { memory } = await open();
    fake.script({
      path: "/api/v1/search/find",
      fault: { kind: "error", status: 404, code: "NOT_FOUND", message: "Not Found" },
    });
    expect((await rejection(memory.recall("x"))).code).toBe("memory_not_found");
    await memory.close();
  });

  it("a slow answer times out as memory_unavailable without hanging", async () => {
    const { memory } = await open({ requestTimeoutMs: 300 });
    fake.script({ path: "/api/v1/search/find", fault: { kind: "delay", ms: 3000 } });
    let started = Date.now();
    const slow = await rejection(memory.recall("x"));
    expect(slow.code).toBe("memory_unavailable");
    expect(slow.details).toMatchObject({ transport: "timeout" });
    expect(Date.now() - started).toBeLessThan(2000);
    fake.script({ path: "/api/v1/content/batch-write", fault: { kind: "hang" } });
    started = Date.now();
    expect((await rejection(memory.remember({ text: "hangs" }))).code).toBe("memory_unavailable");
    expect(Date.now() - started).toBeLessThan(2000);
    await memory.close();
  });

  it("a dropped connection is memory_unavailable", async () => {
    const { memory } = await open();
    fake.script({ path: "/api/v1/search/find", fault: { kind: "drop" } });
    const error = await rejection(memory.recall("x"));
    expect(error.code).toBe("memory_unavailable");
    expect(error.details).toMatchObject({ transport: "network" });
    await memory.close();
  });

  it("a failed batch stores nothing of it and leaves earlier entries alone", async () => {
    const { memory } = await open();
    const scope = { tenant: "acme" };
    const [kept] = await memory.remember({ text: "already there", scope });
    fake.script({
      path: "/api/v1/content/batch-write",
      fault: { kind: "error", status: 500, code: "INTERNAL", message: "disk full" },
    });
    const error = await rejection(
      memory.remember([
        { text: "first lost", scope },
        { text: "second lost", scope },
      ]),
    );
    expect(error.code).toBe("memory_remote_error");
    expect((await memory.recall("lost there already", { scope, topK: 10 })).map((h) => h.entry.id)).toEqual([
      kept!.id,
    ]);
    await memory.close();
  });

  it("an aborted open rejects with aborted", async () => {
    const controller = new AbortController();
    fake.script({ path: "/health", fault: { kind: "delay", ms: 2000 } });
    const pending = openVikingMemory({ url: fake.url, apiKey: KEY }).open(undefined, {
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 50);
    expect((await rejection(pending)).code).toBe("aborted");
  });
});

describe("argument checks", () => {
  it("bad recall, forget and commit arguments are invalid_argument", async () => {
    const { memory } = await open();
    const cases: [string, () => Promise<unknown>][] = [
      ["recall(42)", () => memory.recall(42 as never)],
      ["recall topK -1", () => memory.recall("x", { topK: -1 })],
      ["recall topK 1.5", () => memory.recall("x", { topK: 1.5 })],
      ["recall minScore NaN", () => memory.recall("x", { minScore: Number.NaN })],
      ["forget(null)", () => memory.forget(null as never)],
      ["forget({ ids: [1] })", () => memory.forget({ ids: [1] as never })],
      ["forget({})", () => memory.forget({} as never)],
      ["commit({})", () => memory.commit({} as never)],
      ["remember metadata array", () => memory.remember({ text: "x", metadata: [] as never })],
      ["remember id empty", () => memory.remember({ id: "", text: "x" })],
    ];
    for (const [what, call] of cases) expect((await rejection(call())).code, what).toBe("invalid_argument");
    expect(await memory.recall("x", { topK: 0 })).toEqual([]);
    expect((await rejection(memory.recall("x", { scope: { tennant: "acme" } as never }))).code).toBe(
      "invalid_scope",
    );
    await memory.close();
  });
});
