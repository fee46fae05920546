import { bm25Memory } from "@openrath/memory-bm25";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "./create-client.js";
import { startServer, type TestServer } from "./testing/server.js";

let server: TestServer;
const memory = await bm25Memory().open({});
beforeAll(async () => {
  server = await startServer({ memory });
});
afterAll(async () => {
  await server.close();
  await memory.close();
});

describe("memory through the client", () => {
  it("remembers at a user's scope, recalls from that user's agent, and forgets", async () => {
    const client = createClient({ baseUrl: server.baseUrl });
    const stored = await client.memory.remember({
      scope: { user: "ana" },
      entries: [{ id: "lang", text: "Ana wants answers in Portuguese." }],
    });
    expect(stored.items).toEqual([expect.objectContaining({ id: "lang", scope: { user: "ana" } })]);
    const hits = await client.memory.recall({
      query: "answers Portuguese",
      scope: { user: "ana", agent: "a" },
    });
    expect(hits.items.map((hit) => hit.entry.id)).toEqual(["lang"]);
    expect(
      (await client.memory.recall({ query: "answers Portuguese", scope: { user: "bo" } })).items,
    ).toEqual([]);
    expect(await client.memory.forget({ scope: { user: "ana" }, ids: ["lang"] })).toEqual({ removed: 1 });
  });
});
