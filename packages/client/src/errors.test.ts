import { hashTokenSecret, newTokenSecret } from "@openrath/server";
import { describe, expect, it } from "vitest";
import { createClient } from "./create-client.js";
import { OpenRathApiError } from "./openrath-api-error.js";
import { serverPerFile, startServer } from "./testing/server.js";

const caught = (pending: Promise<unknown>) =>
  pending.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error as OpenRathApiError,
  );

describe("errors, with the local mode", () => {
  const server = serverPerFile();

  it("maps the envelope to OpenRathApiError: status, code, message, requestId, details", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    const missing = await caught(client.runs.get("no-such-run"));
    expect(OpenRathApiError.isInstance(missing)).toBe(true);
    expect(missing).toBeInstanceOf(OpenRathApiError);
    expect(missing).toMatchObject({ status: 404, code: "run_not_found", name: "OpenRathApiError" });
    expect(missing.message).toContain("no-such-run");
    expect(missing.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const invalid = await caught(client.runs.create({ assistant: "echo" }));
    expect(invalid).toMatchObject({ status: 400, code: "invalid_request" });
    const unknownKind = await caught(client.interrupts.decide("x", { kind: "maybe" as "approve" }));
    expect(unknownKind.code).toBe("invalid_request");
    expect(unknownKind.details?.issues).toBeDefined();
  });

  it("keeps the request id a caller sends", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    const requestId = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9";
    const error = await caught(client.runs.get("nope", { headers: { "X-Request-ID": requestId } }));
    expect(error.requestId).toBe(requestId);
  });

  it("says unexpected_response for an answer without the envelope", async () => {
    const client = createClient({
      baseUrl: server().baseUrl,
      fetch: async () => new Response("<html>bad gateway</html>", { status: 502 }),
    });
    const error = await caught(client.health.live());
    expect(error).toMatchObject({ status: 502, code: "unexpected_response", requestId: null });
    expect(error.message).toContain("bad gateway");
  });
});

describe("errors, with fewer grants", () => {
  const server = serverPerFile({ auth: { mode: "local", grants: ["run.read"] } });

  it("is forbidden, naming the grant, for an action the credentials lack", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    expect((await client.runs.list()).items).toEqual([]);
    const denied = await caught(client.runs.create({ assistant: "echo", input: "hi" }));
    expect(denied).toMatchObject({ status: 403, code: "forbidden", details: { action: "run.create" } });
  });
});

describe("tokens", () => {
  const server = serverPerFile();
  const hasAccess = () => server().runtime.store.capabilities.access === true;

  it("sends the token as a bearer header on every request", async () => {
    const seen: (string | null)[] = [];
    const client = createClient({
      baseUrl: server().baseUrl,
      token: "ort_example",
      headers: { "X-Client": "test" },
      fetch: (request) => {
        seen.push(request.headers.get("authorization"), request.headers.get("x-client"));
        return fetch(request);
      },
    });
    await client.health.live();
    const run = await client.runs.create({ assistant: "echo", input: "hi" });
    for await (const _ of client.events.stream(run.id)) {
      // to the end
    }
    expect(seen).toEqual([
      "Bearer ort_example",
      "test",
      "Bearer ort_example",
      "test",
      "Bearer ort_example",
      "test",
    ]);
  });

  it("says not_supported for tokens and the audit log on a store that keeps neither", async (context) => {
    if (hasAccess()) context.skip("this store keeps tokens and an audit log");
    const client = createClient({ baseUrl: server().baseUrl });
    expect(await caught(client.tokens.list())).toMatchObject({ status: 501, code: "not_supported" });
    expect(await caught(client.audit.list())).toMatchObject({ status: 501, code: "not_supported" });
  });

  it("is unauthenticated without a token and authorised with one; tokens are made, listed and revoked", async (context) => {
    if (!hasAccess()) context.skip("the store has no capabilities.access, which token authentication needs");
    const tokens = await startServer({ auth: { mode: "tokens" } });
    try {
      const { runtime, baseUrl } = tokens;
      const anonymous = createClient({ baseUrl });
      expect((await caught(anonymous.runs.list())).code).toBe("unauthenticated");
      expect(await anonymous.health.live()).toEqual({ status: "ok" });
      const secret = newTokenSecret();
      await runtime.store.access?.createToken({
        tenantId: "default",
        projectId: null,
        name: "admin",
        grants: ["*"],
        expiresAt: null,
        secretHash: hashTokenSecret(secret),
      });
      const admin = createClient({ baseUrl, token: secret });
      const made = await admin.tokens.create({ name: "reader", grants: ["run.read"] });
      expect(made.token).toMatchObject({ name: "reader", grants: ["run.read"], revokedAt: null });
      const reader = createClient({ baseUrl, token: made.secret });
      expect(await reader.auth.whoami()).toMatchObject({
        kind: "token",
        tenantId: "default",
        grants: ["run.read"],
        actions: ["self.read", "run.read"],
        token: { id: made.token.id, name: "reader" },
      });
      expect((await reader.runs.list()).items).toEqual([]);
      expect(await caught(reader.runs.create({ assistant: "echo", input: "hi" }))).toMatchObject({
        status: 403,
        code: "forbidden",
      });
      expect((await admin.tokens.list()).items.map((token) => token.name).sort()).toEqual([
        "admin",
        "reader",
      ]);
      expect((await admin.tokens.revoke(made.token.id)).revokedAt).not.toBeNull();
      expect((await caught(reader.runs.list())).code).toBe("unauthenticated");
    } finally {
      await tokens.close();
    }
  });
});
