import { describe, expect, it } from "vitest";
import { allows, unknownGrants } from "./grants.js";
import { serverHarness } from "./testing/harness.js";
import { jwtIssuer } from "./testing/jwt-issuer.js";

const harness = serverHarness();

describe("grants", () => {
  it("match exactly, by namespace or entirely, and nothing else", () => {
    expect(allows(["run.read"], "run.read")).toBe(true);
    expect(allows(["run.*"], "run.cancel")).toBe(true);
    expect(allows(["*"], "token.create")).toBe(true);
    expect(allows(["run.read"], "run.create")).toBe(false);
    expect(allows(["run.*"], "interrupt.decide")).toBe(false);
    expect(allows(["run"], "run.read")).toBe(false);
    // Reading one's own scope needs no grant.
    expect(allows([], "self.read")).toBe(true);
    expect(unknownGrants(["run.read", "run.*", "*", "runs.read", "run.delete", "x.*"])).toEqual([
      "runs.read",
      "run.delete",
      "x.*",
    ]);
  });
});

describe("JWT authentication", () => {
  it("accepts a token from the identity provider and scopes the request to its tenant and grants", async () => {
    const idp = await jwtIssuer();
    const { app } = await harness.setup({
      auth: { mode: "jwt", jwks: idp.jwks, issuer: idp.issuer, audience: idp.audience },
    });
    const writer = await idp.sign({ tenant: "acme", grants: ["run.create", "run.read"] });
    const created = await app.inject({
      method: "POST",
      url: "/v1/runs",
      headers: { authorization: `Bearer ${writer}` },
      payload: { assistant: "echo", input: "hi" },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().tenantId).toBe("acme");
    const reader = await idp.sign({ tenant: "acme", grants: "run.read" });
    const cancel = await app.inject({
      method: "POST",
      url: `/v1/runs/${created.json().id}/cancel`,
      headers: { authorization: `Bearer ${reader}` },
      payload: {},
    });
    expect(cancel.statusCode).toBe(403);
    expect(cancel.json().error).toMatchObject({ code: "forbidden", details: { action: "run.cancel" } });
  });

  it("refuses missing, malformed, expired, foreign and tenantless tokens with 401 and a reason", async () => {
    const idp = await jwtIssuer();
    const other = await jwtIssuer();
    const { app } = await harness.setup({
      auth: { mode: "jwt", jwks: idp.jwks, issuer: idp.issuer, audience: idp.audience },
    });
    const cases: [string | undefined, string][] = [
      [undefined, "missing_credentials"],
      ["Basic abc", "malformed_credentials"],
      [
        `Bearer ${await idp.sign({ tenant: "acme", grants: ["*"] }, Math.floor(Date.now() / 1000) - 60)}`,
        "token_expired",
      ],
      [`Bearer ${await other.sign({ tenant: "acme", grants: ["*"] })}`, "invalid_jwt"],
      [
        `Bearer ${await idp.sign({ tenant: "acme", grants: ["*"] }, "1h", { issuer: idp.issuer, audience: "someone-else" })}`,
        "invalid_jwt",
      ],
      [`Bearer ${await idp.sign({ grants: ["*"] })}`, "missing_tenant"],
    ];
    for (const [authorization, reason] of cases) {
      const response = await app.inject({
        method: "GET",
        url: "/v1/runs",
        headers: authorization ? { authorization } : {},
      });
      expect(response.statusCode, reason).toBe(401);
      expect(response.json().error).toMatchObject({ code: "unauthenticated", details: { reason } });
    }
    // Health needs no credentials.
    expect((await app.inject({ method: "GET", url: "/health/live" })).statusCode).toBe(200);
  });
});
