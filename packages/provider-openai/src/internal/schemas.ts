import { isSecretRef, type SecretProviderV1, type SecretRef } from "@openrath/core";
import type OpenAI from "openai";
import type { ClientOptions } from "openai";
import * as z from "zod";
import type { OpenAIProviderOptions } from "../openai-provider.js";

/** The options of `openaiProvider`. The model and the key may also come from the environment. */
export const OpenAIProviderOptionsSchema: z.ZodType<OpenAIProviderOptions> = z.strictObject({
  api: z.enum(["chat", "responses"]).optional(),
  apiKey: z
    .union([z.string(), z.custom<SecretRef>((value) => isSecretRef(value))], {
      error: 'it must be a string or secret("NAME")',
    })
    .optional(),
  baseURL: z
    .url({
      protocol: /^https?$/,
      error: 'it must be an http or https URL such as "http://localhost:11434/v1"',
    })
    .optional(),
  model: z.string().optional(),
  organization: z.string().optional(),
  project: z.string().optional(),
  headers: z.record(z.string(), z.string({ error: "header values must be strings" })).optional(),
  temperature: z.number().optional(),
  topP: z.number().optional(),
  maxTokens: z.int({ error: "it must be a whole number of at least 1" }).min(1).optional(),
  maxTokensField: z.enum(["max_completion_tokens", "max_tokens"]).optional(),
  stop: z.array(z.string()).optional(),
  seed: z.int().optional(),
  parallelToolCalls: z.boolean().optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
  timeoutMs: z
    .number({ error: "it must be a positive number of milliseconds" })
    .positive("it must be a positive number of milliseconds")
    .optional(),
  client: z
    .custom<OpenAI>((value) => typeof value === "object" && value !== null, {
      error: "it must be an OpenAI client",
    })
    .optional(),
  fetch: z
    .custom<NonNullable<ClientOptions["fetch"]>>((value) => typeof value === "function", {
      error: "it must be a fetch function",
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
