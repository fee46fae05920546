import { bm25Memory } from "@openrath/memory-bm25";
import type { AccessStoreV1 } from "@openrath/runtime-durable/store";
import { afterEach, describe, expect, it } from "vitest";
import { bearer, mint, serverHarness } from "./testing/harness.js";

const harness = serverHarness();
const memories: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const memory of memories.splice(0)) await memory.close();
});

async function setup() {
  const memory = await bm25Memory().open({});
  memories.push(memory);
  const { app, runtime } = await harness.setup({ auth: { mode: "tokens" }, memory });
  const access = runtime.store.access as AccessStoreV1;
  return { app, memory, access };
}

describe("memory over HTTP", () => {
  it("remembers, recalls by scope (enclosing levels only) and forgets, each change audited", async () => {
    const { app, access } = await setup();
    const token = bearer(await mint(access, { grants: ["memory.*", "audit.read"] }));
    const remember = (payload: object) =>
      app.inject({ method: "POST", url: "/v1/memory/remember", headers: token, payload });
    const stored = await remember({ entries: [{ text: "The deploy window is Tuesday.", id: "window" }] });
    expect(stored.statusCode, stored.body).toBe(201);
    expect(stored.json().items).toEqual([
      expect.objectContaining({ id: "window", text: "The deploy window is Tuesday.", scope: {} }),
    ]);
    expect(
      (
        await remember({
          scope: { user: "ana" },
          entries: [{ text: "Ana prefers the deploy report in French.", source: "chat" }],
        })
      ).statusCode,
    ).toBe(201);
    expect(
      (await remember({ scope: { user: "bo" }, entries: [{ text: "Bo reads the deploy report at night." }] }))
        .statusCode,
    ).toBe(201);

    const recall = async (payload: object) => {
      const response = await app.inject({
        method: "POST",
        url: "/v1/memory/recall",
        headers: token,
        payload,
      });
      expect(response.statusCode, response.body).toBe(200);
      return (response.json().items as { entry: { text: string; scope: object } }[]).map((hit) => hit.entry);
    };
    // Ana's agent sees the tenant's entry and Ana's, never Bo's.
    const forAna = await recall({ query: "deploy report", scope: { user: "ana", agent: "writer" } });
    expect(forAna.map((entry) => entry.text).sort()).toEqual([
      "Ana prefers the deploy report in French.",
      "The deploy window is Tuesday.",
    ]);
    expect(forAna.find((entry) => entry.text.startsWith("Ana"))).toMatchObject({ scope: { user: "ana" } });
    // The tenant level sees only itself.
    expect((await recall({ query: "deploy report" })).map((entry) => entry.text)).toEqual([
      "The deploy window is Tuesday.",
    ]);

    const forgotten = await app.inject({
      method: "POST",
      url: "/v1/memory/forget",
      headers: token,
      payload: { scope: { user: "ana" } },
    });
    expect(forgotten.json()).toEqual({ removed: 1 });
    expect(
      (await recall({ query: "deploy report", scope: { user: "ana" } })).map((entry) => entry.text),
    ).toEqual(["The deploy window is Tuesday."]);

    const audit = await access.listAudit({ tenantId: "default", limit: 100 });
    const changes = audit.items.filter((record) => record.resourceKind === "memory");
    expect(changes.map((record) => [record.action, record.outcome])).toEqual([
      ["memory.write", "allowed"],
      ["memory.write", "allowed"],
      ["memory.write", "allowed"],
      ["memory.write", "allowed"],
    ]);
  });

  it("keeps tenants apart: a body cannot name a tenant, and another tenant recalls nothing", async () => {
    const { app, access } = await setup();
    const acme = bearer(await mint(access, { tenantId: "acme", grants: ["memory.*"] }));
    const globex = bearer(await mint(access, { tenantId: "globex", grants: ["memory.*"] }));
    expect(
      (
        await app.inject({
          method: "POST",
          url: "/v1/memory/remember",
          headers: acme,
          payload: { entries: [{ text: "acme's launch code is 1234" }] },
        })
      ).statusCode,
    ).toBe(201);
    const smuggled = await app.inject({
      method: "POST",
      url: "/v1/memory/recall",
      headers: globex,
      payload: { query: "launch code", scope: { tenant: "acme" } },
    });
    expect(smuggled.statusCode).toBe(400);
    expect(smuggled.json().error.code).toBe("invalid_request");
    for (const scope of [undefined, { user: "default" }, { user: "acme" }]) {
      const response = await app.inject({
        method: "POST",
        url: "/v1/memory/recall",
        headers: globex,
        payload: { query: "acme launch code", ...(scope ? { scope } : {}) },
      });
      expect(response.json().items).toEqual([]);
    }
    const removed = await app.inject({
      method: "POST",
      url: "/v1/memory/forget",
      headers: globex,
      payload: {},
    });
    expect(removed.json()).toEqual({ removed: 0 });
    const own = await app.inject({
      method: "POST",
      url: "/v1/memory/recall",
      headers: acme,
      payload: { query: "launch code" },
    });
    expect(own.json().items).toHaveLength(1);
  });

  it("refuses project-scoped tokens, tokens without the grant, and servers without memory", async () => {
    const { app, access } = await setup();
    const project = bearer(await mint(access, { projectId: "web", grants: ["memory.*"] }));
    const reader = bearer(await mint(access, { grants: ["memory.read"] }));
    const byProject = await app.inject({
      method: "POST",
      url: "/v1/memory/recall",
      headers: project,
      payload: { query: "anything" },
    });
    expect(byProject.statusCode).toBe(403);
    const denied = await app.inject({
      method: "POST",
      url: "/v1/memory/remember",
      headers: reader,
      payload: { entries: [{ text: "x" }] },
    });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().error.details).toEqual({ action: "memory.write" });
    const bad = await app.inject({
      method: "POST",
      url: "/v1/memory/recall",
      headers: reader,
      payload: { query: "x", scope: { session: "s1" } },
    });
    expect(bad.statusCode).toBe(400);

    const { app: bare } = await harness.setup({ auth: { mode: "local" } });
    const none = await bare.inject({ method: "POST", url: "/v1/memory/recall", payload: { query: "x" } });
    expect(none.statusCode).toBe(501);
    expect(none.json().error.code).toBe("not_supported");
  });
});
