import type { AccessStoreV1 } from "@openrath/runtime-durable/store";
import { describe, expect, it } from "vitest";
import { hashTokenSecret } from "./auth.js";
import { bearer, mint, serverHarness } from "./testing/harness.js";
import { jwtIssuer } from "./testing/jwt-issuer.js";

const harness = serverHarness();

describe("GET /v1/auth/whoami", () => {
  it("tells a store token its tenant, project, grants, actions and expiry without any grant for it, and never its secret", async () => {
    const { app, runtime } = await harness.setup({ auth: { mode: "tokens" } });
    const access = runtime.store.access as AccessStoreV1;
    const expiresAt = Date.now() + 3_600_000;
    const secret = await mint(access, {
      tenantId: "acme",
      projectId: "billing",
      grants: ["run.read", "interrupt.*"],
      expiresAt,
    });
    const response = await app.inject({ method: "GET", url: "/v1/auth/whoami", headers: bearer(secret) });
    expect(response.statusCode).toBe(200);
    const [stored] = await access.listTokens("acme");
    expect(response.json()).toEqual({
      kind: "token",
      actor: `token:${stored!.id}`,
      tenantId: "acme",
      projectId: "billing",
      grants: ["run.read", "interrupt.*"],
      actions: ["self.read", "run.read", "interrupt.read", "interrupt.decide"],
      expiresAt: new Date(expiresAt).toISOString(),
      token: { id: stored!.id, name: "test", createdAt: new Date(stored!.createdAt).toISOString() },
    });
    expect(response.body).not.toContain(secret);
    expect(response.body).not.toContain(hashTokenSecret(secret));
    // A token with no grant at all still reads its own scope, and nothing else.
    const bare = await mint(access, { tenantId: "acme", grants: [] });
    const own = await app.inject({ method: "GET", url: "/v1/auth/whoami", headers: bearer(bare) });
    expect(own.json()).toMatchObject({
      grants: [],
      actions: ["self.read"],
      projectId: null,
      expiresAt: null,
    });
    expect((await app.inject({ method: "GET", url: "/v1/runs", headers: bearer(bare) })).statusCode).toBe(
      403,
    );
  });

  it("refuses missing, revoked and expired credentials with 401, audited; a read of one's own scope is not", async () => {
    const { app, runtime } = await harness.setup({ auth: { mode: "tokens" } });
    const access = runtime.store.access as AccessStoreV1;
    const admin = await mint(access, { grants: ["*"] });
    const expired = await mint(access, { grants: ["*"], expiresAt: Date.now() - 1000 });
    const whoami = (secret?: string) =>
      app.inject({ method: "GET", url: "/v1/auth/whoami", headers: secret ? bearer(secret) : {} });
    expect((await whoami(admin)).json().actions).toContain("token.revoke");
    const missing = await whoami();
    expect(missing.statusCode).toBe(401);
    expect(missing.json().error).toMatchObject({
      code: "unauthenticated",
      details: { reason: "missing_credentials" },
    });
    expect((await whoami(expired)).json().error.details).toEqual({ reason: "token_expired" });
    const { id } = (await whoami(admin)).json().token;
    await app.inject({ method: "DELETE", url: `/v1/tokens/${id}`, headers: bearer(admin) });
    expect((await whoami(admin)).json().error.details).toEqual({ reason: "token_revoked" });
    const audit = (await access.listAudit({ tenantId: "default" })).items.map((entry) =>
      `${entry.action} ${entry.outcome} ${entry.reason ?? ""}`.trim(),
    );
    expect(audit).toEqual(
      expect.arrayContaining([
        "self.read failed token_expired",
        "token.revoke allowed",
        "self.read failed token_revoked",
      ]),
    );
    expect(audit).not.toContain("self.read allowed");
  });

  it("tells a JWT the tenant, project and grants of its claims and its exp; local mode acts as one tenant with every grant", async () => {
    const idp = await jwtIssuer();
    const { app } = await harness.setup({
      auth: { mode: "jwt", jwks: idp.jwks, issuer: idp.issuer, audience: idp.audience },
    });
    const exp = Math.floor(Date.now() / 1000) + 600;
    const jwt = await idp.sign(
      { sub: "ada", tenant: "acme", project: "web", grants: "run.read run.create" },
      exp,
    );
    const response = await app.inject({ method: "GET", url: "/v1/auth/whoami", headers: bearer(jwt) });
    expect(response.json()).toEqual({
      kind: "jwt",
      actor: "jwt:ada",
      tenantId: "acme",
      projectId: "web",
      grants: ["run.read", "run.create"],
      actions: ["self.read", "run.read", "run.create"],
      expiresAt: new Date(exp * 1000).toISOString(),
      token: null,
    });
    expect(response.body).not.toContain(jwt);
    const local = await harness.setup({ auth: { mode: "local", tenantId: "dev" } });
    const own = (await local.app.inject({ method: "GET", url: "/v1/auth/whoami" })).json();
    expect(own).toMatchObject({
      kind: "local",
      actor: "local",
      tenantId: "dev",
      grants: ["*"],
      expiresAt: null,
    });
    expect(own.actions).toContain("metrics.read");
  });
});
