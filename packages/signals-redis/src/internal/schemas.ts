import type { SignalsV1 } from "@openrath/runtime-durable/store";
import type { RedisOptions } from "ioredis";
import * as z from "zod";
import { redisUrlProblem } from "./redis-url.js";

const positiveMs = (fallback: number) =>
  z
    .number({ error: "it must be a positive number of milliseconds" })
    .positive("it must be a positive number of milliseconds")
    .default(fallback);

/** The options of `redisSignals`, with their defaults. `url` and `redis` may hold passwords. */
export const RedisSignalsOptionsSchema = z.strictObject({
  url: z
    .string({ error: "a Redis URL must be a string such as redis://127.0.0.1:6379" })
    .superRefine((url, context) => {
      const problem = redisUrlProblem(url);
      if (problem !== undefined) context.addIssue({ code: "custom", message: problem });
    })
    .optional(),
  redis: z
    .custom<RedisOptions>((value) => typeof value === "object" && value !== null, {
      error: "it must be an object of ioredis options",
    })
    .optional(),
  prefix: z
    .string({
      error: 'it must be 1 to 64 letters, digits, "_", ".", ":" or "-", starting with a letter or digit',
    })
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/,
      'it must be 1 to 64 letters, digits, "_", ".", ":" or "-", starting with a letter or digit',
    )
    .default("openrath"),
  fallback: z
    .custom<SignalsV1>(
      (value) =>
        typeof value === "object" &&
        value !== null &&
        typeof (value as SignalsV1).publish === "function" &&
        typeof (value as SignalsV1).subscribe === "function",
      { error: "it must be signals (publish and subscribe), such as store.signals" },
    )
    .optional(),
  publishTimeoutMs: positiveMs(500),
  subscribeTimeoutMs: positiveMs(1000),
  maxReconnectDelayMs: positiveMs(1000),
  fallbackGraceMs: positiveMs(250),
});
