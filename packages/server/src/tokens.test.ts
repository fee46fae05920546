import { PGlite } from "@electric-sql/pglite";
import type { AccessStoreV1 } from "@openrath/runtime-durable/store";
import { describe, expect, it } from "vitest";
import { newTokenSecret } from "./auth.js";
import { bearer, mint, serverHarness } from "./testing/harness.js";

const harness = serverHarness();

describe("bearer tokens kept in the store", () => {
  it("authenticate a request by its tenant and grants; unknown, revoked and expired tokens are 401, missing grants 403, each audited", async () => {
    const { app, runtime } = await harness.setup({ auth: { mode: "tokens" } });
    const access = runtime.store.access as AccessStoreV1;
    const admin = await mint(access, { grants: ["*"] });
    const reader = await mint(access, { grants: ["run.read"] });
    const expired = await mint(access, { grants: ["*"], expiresAt: Date.now() - 1000 });
    const created = await app.inject({
      method: "POST",
      url: "/v1/runs",
      headers: bearer(admin),
      payload: { assistant: "echo", input: "hi" },
    });
    expect(created.statusCode).toBe(201);
    const run = created.json();
    expect(
      (await app.inject({ method: "GET", url: `/v1/runs/${run.id}`, headers: bearer(reader) })).statusCode,
    ).toBe(200);
    const denied = await app.inject({
      method: "POST",
      url: `/v1/runs/${run.id}/cancel`,
      headers: bearer(reader),
      payload: {},
    });
    expect(denied.statusCode).toBe(403);
    const unknown = await app.inject({ method: "GET", url: "/v1/runs", headers: bearer(newTokenSecret()) });
    expect(unknown.json().error.details).toEqual({ reason: "unknown_token" });
    expect(
      (await app.inject({ method: "GET", url: "/v1/runs", headers: bearer(expired) })).json().error.details,
    ).toEqual({
      reason: "token_expired",
    });
    // Revoke the reader through the API: from then on it authenticates nothing.
    const listed = (await app.inject({ method: "GET", url: "/v1/tokens", headers: bearer(admin) })).json()
      .items;
    const readerToken = listed.find((token: { grants: string[] }) => token.grants.join() === "run.read");
    expect(
      (await app.inject({ method: "DELETE", url: `/v1/tokens/${readerToken.id}`, headers: bearer(admin) }))
        .statusCode,
    ).toBe(200);
    expect(
      (await app.inject({ method: "GET", url: "/v1/runs", headers: bearer(reader) })).json().error.details,
    ).toEqual({
      reason: "token_revoked",
    });
    // The audit log holds the creation (in its transaction), the denial and every failed authentication.
    const audit = (
      await app.inject({ method: "GET", url: "/v1/audit?limit=500", headers: bearer(admin) })
    ).json().items;
    const summary = audit.map((entry: { action: string; outcome: string; reason: string | null }) =>
      `${entry.action} ${entry.outcome} ${entry.reason ?? ""}`.trim(),
    );
    expect(summary).toEqual(
      expect.arrayContaining([
        "run.create allowed",
        "run.cancel denied missing_grant",
        "run.read failed token_expired",
        "token.revoke allowed",
        "run.read failed token_revoked",
      ]),
    );
    expect(audit.filter((entry: { action: string }) => entry.action === "run.create")).toHaveLength(1);
    // A token nobody knows names no tenant: its failure is kept under "-".
    const anonymous = await access.listAudit({ tenantId: "-" });
    expect(anonymous.items.map((entry) => entry.reason)).toContain("unknown_token");
  });

  it("a refused mutation leaves no allowed record: cancelling an ended run is a conflict and audits nothing as allowed", async () => {
    const { app, runtime } = await harness.setup({ auth: { mode: "tokens" } });
    const admin = await mint(runtime.store.access as AccessStoreV1, { grants: ["*"] });
    const run = (
      await app.inject({
        method: "POST",
        url: "/v1/runs",
        headers: bearer(admin),
        payload: { assistant: "echo", input: "x" },
      })
    ).json();
    await runtime.wait(run.id);
    const refused = await app.inject({
      method: "POST",
      url: `/v1/runs/${run.id}/cancel`,
      headers: bearer(admin),
      payload: {},
    });
    expect(refused.statusCode).toBe(409);
    const audit = (
      await app.inject({ method: "GET", url: "/v1/audit?action=run.cancel", headers: bearer(admin) })
    ).json().items;
    expect(audit).toEqual([]);
  });

  it("scope a project's token to its project: other projects' runs are not found and not listed", async () => {
    const { app, runtime } = await harness.setup({ auth: { mode: "tokens" } });
    const access = runtime.store.access as AccessStoreV1;
    const alpha = await mint(access, { projectId: "alpha", grants: ["run.*", "session.read", "event.read"] });
    const beta = await mint(access, { projectId: "beta", grants: ["run.*"] });
    const tenantWide = await mint(access, { grants: ["run.read"] });
    const inAlpha = (
      await app.inject({
        method: "POST",
        url: "/v1/runs",
        headers: bearer(alpha),
        payload: { assistant: "echo", input: "a" },
      })
    ).json();
    expect(inAlpha.projectId).toBe("alpha");
    const inBeta = (
      await app.inject({
        method: "POST",
        url: "/v1/runs",
        headers: bearer(beta),
        payload: { assistant: "echo", input: "b" },
      })
    ).json();
    for (const url of [
      `/v1/runs/${inBeta.id}`,
      `/v1/runs/${inBeta.id}/events`,
      `/v1/runs/${inBeta.id}/session`,
      `/v1/sessions/${inBeta.sessionId}`,
    ]) {
      const response = await app.inject({ method: "GET", url, headers: bearer(alpha) });
      expect(response.statusCode, url).toBe(404);
    }
    const forked = await app.inject({
      method: "POST",
      url: "/v1/runs",
      headers: bearer(alpha),
      payload: { assistant: "echo", from: { runId: inBeta.id } },
    });
    expect(forked.statusCode).toBe(404);
    const listed = (await app.inject({ method: "GET", url: "/v1/runs", headers: bearer(alpha) })).json()
      .items;
    expect(listed.map((run: { id: string }) => run.id)).toEqual([inAlpha.id]);
    const all = (await app.inject({ method: "GET", url: "/v1/runs", headers: bearer(tenantWide) })).json()
      .items;
    expect(all.map((run: { id: string }) => run.id).sort()).toEqual([inAlpha.id, inBeta.id].sort());
  });

  it("never mints a token wider than its maker, and stores no secret: the whole database holds only hashes", async () => {
    const db = await PGlite.create();
    const { app, runtime } = await harness.setup({ auth: { mode: "tokens" }, db });
    const maker = await mint(runtime.store.access as AccessStoreV1, {
      projectId: "alpha",
      grants: ["run.*", "token.*"],
    });
    const wider = await app.inject({
      method: "POST",
      url: "/v1/tokens",
      headers: bearer(maker),
      payload: { name: "x", grants: ["*"] },
    });
    expect(wider.statusCode).toBe(403);
    const otherProject = await app.inject({
      method: "POST",
      url: "/v1/tokens",
      headers: bearer(maker),
      payload: { name: "x", grants: ["run.read"], projectId: "beta" },
    });
    expect(otherProject.statusCode).toBe(403);
    const made = await app.inject({
      method: "POST",
      url: "/v1/tokens",
      headers: bearer(maker),
      payload: { name: "ci", grants: ["run.read"] },
    });
    expect(made.statusCode).toBe(201);
    const { secret, token } = made.json();
    expect(token.projectId).toBe("alpha");
    expect((await app.inject({ method: "GET", url: "/v1/runs", headers: bearer(secret) })).statusCode).toBe(
      200,
    );
    // Search every row of every table for either secret.
    const tables = await db.query<{ schema: string; name: string }>(
      "select table_schema as schema, table_name as name from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema')",
    );
    expect(tables.rows.length).toBeGreaterThan(5);
    for (const { schema, name } of tables.rows) {
      const rows = await db.query<{ row: string }>(`select t::text as row from "${schema}"."${name}" t`);
      for (const { row } of rows.rows) {
        expect(row.includes(secret), `${schema}.${name}`).toBe(false);
        expect(row.includes(maker), `${schema}.${name}`).toBe(false);
      }
    }
  });
});

describe("the token cache", () => {
  it("reads the store once per token within the TTL; a revocation through the API is 401 at once, one made in the store within the TTL", async () => {
    const { app, runtime } = await harness.setup({ auth: { mode: "tokens" }, tokenCacheMs: 1000 });
    const access = runtime.store.access as AccessStoreV1;
    const findToken = access.findToken.bind(access);
    let finds = 0;
    access.findToken = (hash) => {
      finds++;
      return findToken(hash);
    };
    const admin = await mint(access, { grants: ["*"] });
    const reader = await mint(access, { grants: ["run.read"] });
    const status = async (secret: string) =>
      (await app.inject({ method: "GET", url: "/v1/runs", headers: bearer(secret) })).statusCode;
    for (let i = 0; i < 5; i++) expect(await status(reader)).toBe(200);
    expect(finds).toBe(1);
    // Newest first: the reader was made last.
    const tokens = (await access.listTokens("default")).map((token) => token.id);
    const [readerId, adminId] = tokens as [string, string];
    expect(await status(admin)).toBe(200);
    const revoked = await app.inject({
      method: "DELETE",
      url: `/v1/tokens/${readerId}`,
      headers: bearer(admin),
    });
    expect(revoked.statusCode).toBe(200);
    expect(await status(reader)).toBe(401);
    // Revoked elsewhere (`openrath tokens revoke` on another process): seen once the entry expires.
    await access.revokeToken("default", adminId);
    const started = Date.now();
    while ((await status(admin)) === 200) {
      expect(Date.now() - started).toBeLessThan(1000 + 500);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await status(admin)).toBe(401);
  });

  it("reads the store on every request with tokenCacheMs 0", async () => {
    const { app, runtime } = await harness.setup({ auth: { mode: "tokens" }, tokenCacheMs: 0 });
    const access = runtime.store.access as AccessStoreV1;
    const findToken = access.findToken.bind(access);
    let finds = 0;
    access.findToken = (hash) => {
      finds++;
      return findToken(hash);
    };
    const reader = await mint(access, { grants: ["run.read"] });
    for (let i = 0; i < 3; i++) await app.inject({ method: "GET", url: "/v1/runs", headers: bearer(reader) });
    expect(finds).toBe(3);
  });
});
