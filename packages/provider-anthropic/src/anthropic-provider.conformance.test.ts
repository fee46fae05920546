import { describeProviderConformance } from "@openrath/testing/provider";
import { anthropicProvider } from "./index.js";
import { startAnthropicConformanceFixture } from "./testing/anthropic-conformance-fixture.js";

describeProviderConformance({
  name: "anthropic (Messages API)",
  start: startAnthropicConformanceFixture,
  create: (fixture, { timeoutMs }) =>
    anthropicProvider({
      apiKey: "test-key",
      baseURL: fixture.url,
      model: "claude-conformance-1",
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    }),
  capabilities: { streaming: true, reasoning: true },
});
