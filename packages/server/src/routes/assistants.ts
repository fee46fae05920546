import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { ServerContext } from "../context.js";
import { ErrorEnvelope, notFound } from "../errors.js";

const Revision = z
  .object({
    hash: z.string(),
    version: z.string(),
    registeredAt: z.string(),
    deployed: z.boolean().describe("Whether the name points at this revision."),
  })
  .meta({ id: "Revision" });

const Assistant = z
  .object({
    name: z.string(),
    current: z.object({ hash: z.string(), version: z.string(), deployedAt: z.string() }).nullable(),
    revisions: z.array(Revision),
  })
  .meta({ id: "Assistant" });

const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope };
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Assistants: the workflows this server's runtime registered, each name resolved through the
 * store to its deployed revision; several revisions stay live, and a deploy moves the pointer.
 */
export const assistantRoutes =
  (context: ServerContext): FastifyPluginAsyncZod =>
  async (app) => {
    const { runtime } = context;
    const describe = async (name: string): Promise<z.input<typeof Assistant>> => {
      const current = await runtime.store.deployments?.current(name);
      const revisions = await runtime.revisions(name);
      return {
        name,
        current: current
          ? { hash: current.hash, version: current.version, deployedAt: iso(current.deployedAt) }
          : null,
        revisions: revisions.map((revision) => ({
          hash: revision.hash,
          version: revision.version,
          registeredAt: iso(revision.registeredAt),
          deployed: revision.deployed,
        })),
      };
    };

    app.get(
      "/v1/assistants",
      {
        config: { action: "assistant.read" },
        schema: {
          tags: ["assistants"],
          summary: "Registered workflows",
          response: { 200: z.object({ items: z.array(Assistant) }), ...errors },
        },
      },
      async () => {
        const names = [...new Set(runtime.plans.map((plan) => plan.name))].sort();
        return { items: await Promise.all(names.map(describe)) };
      },
    );

    app.get(
      "/v1/assistants/:name",
      {
        config: { action: "assistant.read" },
        schema: {
          tags: ["assistants"],
          params: z.object({ name: z.string().min(1).max(200) }),
          response: { 200: Assistant, ...errors },
        },
      },
      async (request) => {
        const assistant = await describe(request.params.name);
        if (
          assistant.revisions.length === 0 &&
          !runtime.plans.some((plan) => plan.name === request.params.name)
        )
          throw notFound("assistant", request.params.name);
        return assistant;
      },
    );

    app.post(
      "/v1/assistants/:name/deployments",
      {
        config: { action: "assistant.deploy" },
        schema: {
          tags: ["assistants"],
          summary: "Point the name at one of its revisions",
          params: z.object({ name: z.string().min(1).max(200) }),
          body: z.object({ version: z.string().min(1).max(200) }).strict(),
          response: { 200: Assistant, ...errors, 409: ErrorEnvelope },
        },
      },
      async (request) => {
        await runtime.deploy(request.params.name, request.body.version);
        return describe(request.params.name);
      },
    );
  };
