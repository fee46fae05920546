import { OpenRathError, type ProviderRequest, type SecretProviderV1, secret } from "@openrath/core";
import { callProvider } from "@openrath/core/backend";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { openaiProvider } from "./index.js";
import {
  chatCompletion,
  chatCompletionChunks,
  type OpenAIWireServer,
  startOpenAIWireServer,
} from "./testing/openai-wire-server.js";

let server: OpenAIWireServer;

beforeEach(async () => {
  for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "OPENRATH_TEST_OPENAI_KEY"]) {
    vi.stubEnv(name, "");
  }
  server = await startOpenAIWireServer();
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await server.close();
});

const hello: ProviderRequest = { messages: [{ role: "user", content: "Hello" }] };

describe("openaiProvider with apiKey: secret(...)", () => {
  it("resolves the key before every request, so a rotated key is used at once", async () => {
    const provider = openaiProvider({
      baseURL: server.baseURL,
      model: "gpt-4o-mini",
      apiKey: secret("OPENRATH_TEST_OPENAI_KEY"),
    });
    vi.stubEnv("OPENRATH_TEST_OPENAI_KEY", "sk-first");
    server.enqueue({ type: "json", body: chatCompletion({ content: "one" }) });
    await provider.complete(hello);
    vi.stubEnv("OPENRATH_TEST_OPENAI_KEY", "sk-rotated");
    server.enqueue({ type: "stream", events: chatCompletionChunks({ content: "two" }) });
    for await (const _ of provider.stream!(hello)) {
      // drain
    }
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      "Bearer sk-first",
      "Bearer sk-rotated",
    ]);
  });

  it("asks the secrets option when given", async () => {
    const asked: string[] = [];
    const secrets: SecretProviderV1 = {
      specVersion: "v1",
      name: "vault",
      get: async (name) => {
        asked.push(name);
        return "sk-from-vault";
      },
    };
    const provider = openaiProvider({
      baseURL: server.baseURL,
      model: "gpt-4o-mini",
      apiKey: secret("OPENAI_API_KEY"),
      secrets,
    });
    server.enqueue({ type: "json", body: chatCompletion({ content: "ok" }) });
    await provider.complete(hello);
    expect(asked).toEqual(["OPENAI_API_KEY"]);
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-from-vault");
  });

  it("fails with secret_not_found before any request, and is not retried", async () => {
    const provider = openaiProvider({
      baseURL: server.baseURL,
      model: "gpt-4o-mini",
      apiKey: secret("OPENRATH_TEST_OPENAI_KEY"),
    });
    const error = await callProvider(provider, hello).catch((e: unknown) => e);
    expect(OpenRathError.isInstance(error, "secret_not_found")).toBe(true);
    expect((error as Error).message).toContain("OPENRATH_TEST_OPENAI_KEY");
    expect(server.requests).toHaveLength(0);
  });

  it("refuses an apiKey that is neither a string nor a secret reference", () => {
    expect(() =>
      openaiProvider({ baseURL: server.baseURL, model: "m", apiKey: { secret: "X" } as never }),
    ).toThrow(/apiKey/);
  });
});
