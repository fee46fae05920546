import { describeProviderConformance } from "@openrath/testing/provider";
import { openaiProvider } from "./index.js";
import { startOpenAIConformanceFixture } from "./testing/openai-conformance-fixture.js";

describeProviderConformance({
  name: "openai (Chat Completions)",
  start: () => startOpenAIConformanceFixture("chat"),
  create: (fixture, { timeoutMs }) =>
    openaiProvider({ baseURL: fixture.baseURL, apiKey: "sk-test", model: "gpt-4o-mini", timeoutMs }),
  capabilities: { streaming: true, reasoning: false },
});

describeProviderConformance({
  name: "openai (Responses API)",
  start: () => startOpenAIConformanceFixture("responses"),
  create: (fixture, { timeoutMs }) =>
    openaiProvider({
      api: "responses",
      baseURL: fixture.baseURL,
      apiKey: "sk-test",
      model: "gpt-5-mini",
      timeoutMs,
    }),
  capabilities: { streaming: true, reasoning: true, stopSequences: false },
});
