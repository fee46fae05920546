import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Agent, ScriptedProvider } from "@openrath/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type McpHttpTransportOptions,
  type McpWorkflowServer,
  mcpTools,
  serveWorkflowAsMcp,
} from "./index.js";

const echo = () =>
  new Agent({
    name: "echo",
    provider: new ScriptedProvider((req) => ({
      text: `echo: ${String(req.messages.at(-1)?.content ?? "")}`,
    })),
  });

const serve = (options: Omit<McpHttpTransportOptions, "port"> = {}) =>
  serveWorkflowAsMcp(echo(), { transport: { port: 0, ...options } });

/** Connects the official SDK client with `headers` on every request; rejects as the SDK does. */
async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "guard-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** The SDK client's failure to connect with `headers`: its HTTP status. */
async function refusedStatus(url: string, headers: Record<string, string>): Promise<number> {
  const error = await connect(url, headers).then(
    async (client) => {
      await client.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error, "the SDK client connected, but the server should have refused it").toBeInstanceOf(
    StreamableHTTPError,
  );
  return (error as StreamableHTTPError).code!;
}

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** A raw initialize POST with `headers`, for what the SDK client does not show (status line, headers, body). */
function post(url: string, headers: Record<string, string>, body = initialize): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body,
  });
}

async function echoes(client: Client): Promise<unknown> {
  const result = await client.callTool({ name: "echo", arguments: { message: "hi" } });
  await client.close();
  return result.content;
}

describe("Origin checks (DNS rebinding protection)", () => {
  let plain: McpWorkflowServer;
  let browserFacing: McpWorkflowServer;
  beforeAll(async () => {
    plain = await serve();
    browserFacing = await serve({ allowedOrigins: ["https://app.example", "http://localhost:5173"] });
  });
  afterAll(async () => {
    await plain?.close();
    await browserFacing?.close();
  });

  it("lets a client that sends no Origin in (clients that are not browsers)", async () => {
    expect(await echoes(await connect(plain.url!))).toEqual([{ type: "text", text: "echo: hi" }]);
    expect(await echoes(await connect(browserFacing.url!))).toEqual([{ type: "text", text: "echo: hi" }]);
  });

  it("refuses any Origin by default with 403 and a JSON-RPC error naming it", async () => {
    for (const origin of ["https://evil.example", `http://127.0.0.1:${new URL(plain.url!).port}`, "null"]) {
      expect(await refusedStatus(plain.url!, { Origin: origin })).toBe(403);
    }
    const res = await post(plain.url!, { Origin: "https://evil.example" });
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(await res.json()).toEqual({
      jsonrpc: "2.0",
      error: {
        code: -32000,
        message: expect.stringContaining('Origin "https://evil.example" is not allowed'),
      },
      id: null,
    });
  });

  it("accepts a listed origin and refuses look-alikes of it", async () => {
    const client = await connect(browserFacing.url!, { Origin: "https://app.example" });
    expect(await echoes(client)).toEqual([{ type: "text", text: "echo: hi" }]);
    for (const origin of [
      "https://app.example.evil.example",
      "http://app.example",
      "https://app.example:8443",
      "http://localhost:5174",
      "https://evil.example, https://app.example",
    ]) {
      expect(await refusedStatus(browserFacing.url!, { Origin: origin }), origin).toBe(403);
    }
  });

  it("gives a listed origin CORS headers and answers its preflight; a foreign preflight is refused", async () => {
    const res = await post(browserFacing.url!, { Origin: "http://localhost:5173" });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(res.headers.get("access-control-expose-headers")).toContain("mcp-session-id");
    await res.body?.cancel();
    const preflight = await fetch(browserFacing.url!, {
      method: "OPTIONS",
      headers: {
        Origin: "http://localhost:5173",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("authorization");
    const foreign = await fetch(browserFacing.url!, {
      method: "OPTIONS",
      headers: { Origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("bearer token", () => {
  const token = randomBytes(32).toString("base64url");
  let served: McpWorkflowServer;
  beforeAll(async () => {
    served = await serve({ bearerToken: token, allowedOrigins: ["https://app.example"] });
  });
  afterAll(() => served?.close());

  it("refuses a request without Authorization with 401 and WWW-Authenticate: Bearer", async () => {
    expect(await refusedStatus(served.url!, {})).toBe(401);
    const res = await post(served.url!, {});
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="mcp"$/);
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 }, id: null });
  });

  it("refuses a wrong token, a token of another length, another scheme and the token alone", async () => {
    const wrong = [
      `Bearer ${randomBytes(32).toString("base64url")}`,
      `Bearer ${token.slice(0, -1)}`,
      `Bearer ${token}x`,
      `Basic ${Buffer.from(`user:${token}`).toString("base64")}`,
      token,
      `Bearer`,
    ];
    for (const authorization of wrong) {
      expect(await refusedStatus(served.url!, { Authorization: authorization }), authorization).toBe(401);
    }
    const res = await post(served.url!, { Authorization: `Bearer ${token.toUpperCase()}` });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="mcp", error="invalid_token"');
  });

  it("accepts the right token sent through the SDK client's request headers", async () => {
    const client = await connect(served.url!, { Authorization: `Bearer ${token}` });
    expect(await echoes(client)).toEqual([{ type: "text", text: "echo: hi" }]);
    const lowerScheme = await connect(served.url!, { Authorization: `bearer ${token}` });
    await lowerScheme.close();
  });

  it("checks every request, not only initialize: a live session id without the token is refused", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(served.url!), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: "guard-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const sessionId = transport.sessionId!;
      expect(sessionId).toBeTruthy();
      const list = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
      const headers = { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" };
      expect((await post(served.url!, headers, list)).status).toBe(401);
      const get = await fetch(served.url!, { headers: { ...headers, accept: "text/event-stream" } });
      expect(get.status).toBe(401);
      const del = await fetch(served.url!, { method: "DELETE", headers });
      expect(del.status).toBe(401);
      // The session survived the refused DELETE.
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["echo"]);
    } finally {
      await client.close();
    }
  });

  it("checks Origin before the token, and answers an allowed origin's preflight without one", async () => {
    expect(
      await refusedStatus(served.url!, { Origin: "https://evil.example", Authorization: `Bearer ${token}` }),
    ).toBe(403);
    const preflight = await fetch(served.url!, {
      method: "OPTIONS",
      headers: { Origin: "https://app.example", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    const unauthorized = await post(served.url!, { Origin: "https://app.example" });
    expect(unauthorized.status).toBe(401);
    // The page can read why it was refused.
    expect(unauthorized.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(unauthorized.headers.get("access-control-expose-headers")).toContain("www-authenticate");
  });

  it("lets mcpTools call it with the token in its headers", async () => {
    const remote = await mcpTools({ url: served.url!, headers: { Authorization: `Bearer ${token}` } });
    try {
      expect(remote.tools.map((t) => t.name)).toEqual(["echo"]);
    } finally {
      await remote.close();
    }
    const refused = await mcpTools({ url: served.url! }, { connectTimeoutMs: 5_000 }).catch(
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({ code: "mcp_connect_failed" });
  });
});

describe("guard options", () => {
  it.each([
    [{ allowedOrigins: "https://app.example" as unknown as string[] }],
    [{ allowedOrigins: ["app.example"] }],
    [{ allowedOrigins: ["https://app.example/path"] }],
    [{ allowedOrigins: ["https://app.example?x=1"] }],
    [{ allowedOrigins: ["https://user@app.example"] }],
    [{ allowedOrigins: ["ftp://app.example"] }],
    [{ allowedOrigins: ["*"] }],
    [{ allowedOrigins: ["null"] }],
    [{ bearerToken: "" }],
    [{ bearerToken: "too-short" }],
    [{ bearerToken: "a token with spaces in it" }],
    [{ bearerToken: `${"a".repeat(20)}\n` }],
    [{ bearerToken: 42 as unknown as string }],
  ])("refuses %j with invalid_argument before listening", async (options) => {
    await expect(serve(options)).rejects.toMatchObject({ code: "invalid_argument" });
  });

  it("names the bad option and never shows a bearer token it refuses", async () => {
    const token = "a token with spaces in it";
    const error = (await serve({ bearerToken: token }).catch((e: unknown) => e)) as Error & {
      details: unknown;
    };
    expect(error.message).toContain('"transport.bearerToken" is given (not shown');
    expect(`${error.message}${JSON.stringify(error.details)}`).not.toContain(token);
    await expect(serve({ allowedOrigins: ["app.example"] })).rejects.toThrow(
      /"transport.allowedOrigins\[0\]" is "app.example"; it is not an origin/,
    );
  });

  it("normalizes a listed origin the way browsers send it", async () => {
    const served = await serve({ allowedOrigins: ["HTTPS://App.Example:443/"] });
    try {
      expect(await echoes(await connect(served.url!, { Origin: "https://app.example" }))).toEqual([
        { type: "text", text: "echo: hi" },
      ]);
    } finally {
      await served.close();
    }
  });
});
