import type Anthropic from "@anthropic-ai/sdk";
import { isSecretRef, type SecretProviderV1, type SecretRef } from "@openrath/core";
import * as z from "zod";
import type { AnthropicProviderOptions } from "../anthropic-provider.js";

const wholeAtLeast = (min: number) =>
  z
    .int({ error: `it must be a whole number of at least ${min}` })
    .min(min, `it must be a whole number of at least ${min}`);

/** The options of `anthropicProvider`. The model and the key may also come from the environment. */
export const AnthropicProviderOptionsSchema: z.ZodType<AnthropicProviderOptions> = z.strictObject({
  apiKey: z
    .union([z.string(), z.custom<SecretRef>((value) => isSecretRef(value))], {
      error: 'it must be a string or secret("NAME")',
    })
    .optional(),
  baseURL: z
    .url({
      protocol: /^https?$/,
      error: 'it must be an http or https URL such as "https://api.anthropic.com"',
    })
    .optional(),
  model: z.string().optional(),
  maxTokens: wholeAtLeast(1).optional(),
  temperature: z.number().optional(),
  topP: z.number().optional(),
  stop: z.array(z.string()).optional(),
  timeoutMs: z
    .number({ error: "it must be a positive number of milliseconds" })
    .positive("it must be a positive number of milliseconds")
    .optional(),
  structuredOutput: z.enum(["tool", "native"]).optional(),
  maxPauseContinuations: wholeAtLeast(0).optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
  headers: z.record(z.string(), z.string({ error: "header values must be strings" })).optional(),
  fetch: z
    .custom<typeof globalThis.fetch>((value) => typeof value === "function", {
      error: "it must be a fetch function",
    })
    .optional(),
  client: z
    .custom<Anthropic>((value) => typeof value === "object" && value !== null, {
      error: "it must be an Anthropic client",
    })
    .optional(),
  secrets: z
    .custom<SecretProviderV1>(
      (value) =>
        typeof value === "object" && value !== null && typeof (value as { get?: unknown }).get === "function",
      { error: 'it must be a secret provider { specVersion: "v1", name, get(name) }' },
    )
    .optional(),
});
