import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { ServerContext } from "../context.js";

const Ready = z.object({
  status: z.enum(["ready", "not_ready"]),
  checks: z.record(z.string(), z.enum(["ok", "failed"])),
});

/** How long a dependency check may take before it counts as failed. */
const CHECK_MS = 2000;

async function check(probe: () => Promise<unknown>): Promise<"ok" | "failed"> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("timed out")), CHECK_MS);
  });
  try {
    await Promise.race([probe(), timeout]);
    return "ok";
  } catch {
    return "failed";
  } finally {
    clearTimeout(timer);
  }
}

/** `/health/live` (the process answers) and `/health/ready` (every configured dependency answers). */
export const healthRoutes =
  (context: ServerContext): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      "/health/live",
      { schema: { tags: ["health"], response: { 200: z.object({ status: z.literal("ok") }) } } },
      async () => ({ status: "ok" as const }),
    );
    app.get(
      "/health/ready",
      { schema: { tags: ["health"], response: { 200: Ready, 503: Ready } } },
      async (_request, reply) => {
        const checks: Record<string, "ok" | "failed"> = {
          store: await check(() => context.runtime.store.now()),
        };
        const artifacts = context.artifacts;
        if (artifacts) checks.artifacts = await check(() => artifacts.stat("health", "0".repeat(64)));
        const ready = Object.values(checks).every((value) => value === "ok");
        reply.status(ready ? 200 : 503);
        return { status: ready ? ("ready" as const) : ("not_ready" as const), checks };
      },
    );
  };
