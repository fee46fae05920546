import { OpenRathError, type ProviderRequest, type SecretProviderV1, secret } from "@openrath/core";
import { callProvider } from "@openrath/core/backend";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { anthropicProvider } from "./index.js";
import {
  type AnthropicWireServer,
  messageReply,
  startAnthropicWireServer,
  streamReply,
} from "./testing/anthropic-wire-server.js";

let server: AnthropicWireServer;

beforeEach(async () => {
  server = await startAnthropicWireServer();
  for (const name of [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
    "OPENRATH_TEST_ANTHROPIC_KEY",
  ]) {
    vi.stubEnv(name, "");
  }
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await server.close();
});

const hello: ProviderRequest = { messages: [{ role: "user", content: "Hello" }] };
const answer = { content: [{ type: "text" as const, text: "hi" }] };

describe("anthropicProvider with apiKey: secret(...)", () => {
  it("resolves the key before every request, streamed or not, so a rotated key is used at once", async () => {
    const provider = anthropicProvider({
      baseURL: server.url,
      model: "claude-test-1",
      apiKey: secret("OPENRATH_TEST_ANTHROPIC_KEY"),
    });
    vi.stubEnv("OPENRATH_TEST_ANTHROPIC_KEY", "sk-ant-first");
    server.enqueue(messageReply(answer));
    await provider.complete(hello);
    vi.stubEnv("OPENRATH_TEST_ANTHROPIC_KEY", "sk-ant-rotated");
    server.enqueue(streamReply(answer));
    for await (const _ of provider.stream!(hello)) {
      // drain
    }
    const sent = server.requests.map((r) => r.headers.authorization ?? r.headers["x-api-key"]);
    expect(sent).toEqual(["Bearer sk-ant-first", "Bearer sk-ant-rotated"]);
    expect(JSON.stringify(server.requests.map((r) => r.headers))).not.toContain("resolved-per-request");
  });

  it("asks the secrets option when given", async () => {
    const secrets: SecretProviderV1 = {
      specVersion: "v1",
      name: "vault",
      get: async (name) => (name === "ANTHROPIC_API_KEY" ? "sk-ant-vault" : undefined),
    };
    const provider = anthropicProvider({
      baseURL: server.url,
      model: "claude-test-1",
      apiKey: secret("ANTHROPIC_API_KEY"),
      secrets,
    });
    server.enqueue(messageReply(answer));
    await provider.complete(hello);
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-ant-vault");
  });

  it("fails with secret_not_found before any request, and is not retried", async () => {
    const provider = anthropicProvider({
      baseURL: server.url,
      model: "claude-test-1",
      apiKey: secret("OPENRATH_TEST_ANTHROPIC_KEY"),
    });
    const error = await callProvider(provider, hello).catch((e: unknown) => e);
    expect(OpenRathError.isInstance(error, "secret_not_found")).toBe(true);
    expect((error as Error).message).toContain("OPENRATH_TEST_ANTHROPIC_KEY");
    expect(server.requests).toHaveLength(0);
  });
});
