import type { JsonObject, MemoryEntry, MemoryScope } from "@openrath/core";
import type { FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Principal } from "../auth.js";
import { auditOf, principalOf, type ServerContext } from "../context.js";
import { ApiError, ErrorEnvelope } from "../errors.js";

const Level = z.string().min(1).max(256);

/**
 * Where under the caller's tenant: the tenant level itself, or a user, a user's agent, an agent's
 * session. The tenant level is always the credentials' tenant; a body cannot name another.
 */
const Scope = z
  .object({ user: Level.optional(), agent: Level.optional(), session: Level.optional() })
  .strict()
  .refine((scope) => !(scope.agent && !scope.user) && !(scope.session && !scope.agent), {
    message: "A level needs the levels before it: an agent needs a user, a session an agent.",
  })
  .meta({ id: "MemoryScope" });

const Metadata = z.record(z.string(), z.unknown());

const MemoryEntryOut = z
  .object({
    id: z.string(),
    text: z.string(),
    scope: z.object({
      user: z.string().optional(),
      agent: z.string().optional(),
      session: z.string().optional(),
    }),
    metadata: Metadata.optional(),
    source: z.string().optional(),
    createdAt: z.number().int().describe("Epoch milliseconds."),
  })
  .meta({ id: "MemoryEntry" });

const Remember = z
  .object({
    scope: Scope.optional(),
    entries: z
      .array(
        z
          .object({
            id: z.string().min(1).max(512).optional(),
            text: z
              .string()
              .min(1)
              .max(64 * 1024),
            metadata: Metadata.optional(),
            source: z.string().max(2048).optional(),
          })
          .strict(),
      )
      .min(1)
      .max(100),
  })
  .strict();

const Recall = z
  .object({
    query: z.string().min(1).max(8192),
    scope: Scope.optional(),
    topK: z.number().int().min(1).max(100).optional(),
    minScore: z.number().finite().optional(),
  })
  .strict();

const Forget = z
  .object({
    scope: Scope.optional(),
    ids: z
      .array(z.string().min(1).max(512))
      .min(1)
      .max(1000)
      .optional()
      .describe("Entries at exactly `scope`; without ids, every entry at and below `scope`."),
  })
  .strict();

const errors = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  501: ErrorEnvelope,
};

/**
 * The tenant's memory: the memory store's scope tree with the credentials' tenant as its root. A
 * project-scoped token is refused: memory is shared by every project of the tenant, and a project's
 * credentials reach only what belongs to their project.
 */
function scopeOf(principal: Principal, scope: z.infer<typeof Scope> | undefined): MemoryScope {
  if (principal.projectId !== null)
    throw new ApiError(
      403,
      "forbidden",
      "Memory is shared by the tenant's projects; a project-scoped token cannot reach it. Use a tenant-wide token.",
      { projectId: principal.projectId },
    );
  return { tenant: principal.tenantId, ...scope };
}

/** The entry as the API shows it: its place below the tenant, never the tenant itself. */
function entryOut(entry: MemoryEntry): z.infer<typeof MemoryEntryOut> {
  const { tenant: _tenant, ...scope } = entry.scope;
  return {
    id: entry.id,
    text: entry.text,
    scope,
    ...(entry.metadata !== undefined ? { metadata: entry.metadata } : {}),
    ...(entry.source !== undefined ? { source: entry.source } : {}),
    createdAt: entry.createdAt,
  };
}

/** Memory: remember, recall and forget entries at a scope of the caller's tenant. */
export const memoryRoutes =
  (context: ServerContext): FastifyPluginAsyncZod =>
  async (app) => {
    const memory = () => {
      if (!context.memory) throw new ApiError(501, "not_supported", "This server has no memory store.");
      return context.memory;
    };

    /**
     * The memory store is not the run store, so a change and its audit record cannot share a
     * transaction: the record is written first (a change is never made unrecorded), and a change
     * that then fails gets a second record saying so.
     */
    const audited = async <T>(request: FastifyRequest, attributes: JsonObject, change: () => Promise<T>) => {
      await context.access?.appendAudit([auditOf(request, "memory", null, "allowed", { attributes })]);
      try {
        return await change();
      } catch (error) {
        await context.access
          ?.appendAudit([
            auditOf(request, "memory", null, "failed", {
              attributes,
              reason: error instanceof Error ? error.message.slice(0, 500) : "failed",
            }),
          ])
          .catch(() => {});
        throw error;
      }
    };

    app.post(
      "/v1/memory/remember",
      {
        config: { action: "memory.write" },
        schema: {
          tags: ["memory"],
          summary: "Store entries at a scope",
          description:
            "An entry replaces the entry with the same id at the same scope; without an id, remembering the same text twice keeps one entry.",
          body: Remember,
          response: { 201: z.object({ items: z.array(MemoryEntryOut) }), ...errors },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const scope = scopeOf(principal, request.body.scope);
        const stored = await audited(
          request,
          { scope: { ...scope }, entries: request.body.entries.length },
          () =>
            memory().remember(
              request.body.entries.map((entry) => ({ ...entry, metadata: entry.metadata as never, scope })),
            ),
        );
        reply.status(201);
        return { items: stored.map(entryOut) };
      },
    );

    app.post(
      "/v1/memory/recall",
      {
        config: { action: "memory.read" },
        schema: {
          tags: ["memory"],
          summary: "Entries relevant to a query, best first",
          description:
            "Sees entries at the asking scope and at its enclosing levels (a user's entries reach that user's agents and sessions), never another user's, agent's or session's, nor another tenant's.",
          body: Recall,
          response: {
            200: z.object({ items: z.array(z.object({ entry: MemoryEntryOut, score: z.number() })) }),
            ...errors,
          },
        },
      },
      async (request) => {
        const { query, scope, topK, minScore } = request.body;
        const hits = await memory().recall(query, {
          scope: scopeOf(principalOf(request), scope),
          ...(topK !== undefined ? { topK } : {}),
          ...(minScore !== undefined ? { minScore } : {}),
        });
        return { items: hits.map((hit) => ({ entry: entryOut(hit.entry), score: hit.score })) };
      },
    );

    app.post(
      "/v1/memory/forget",
      {
        config: { action: "memory.write" },
        schema: {
          tags: ["memory"],
          summary: "Remove entries by id at a scope, or a scope's whole subtree",
          body: Forget,
          response: { 200: z.object({ removed: z.number().int() }), ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const scope = scopeOf(principal, request.body.scope);
        const { ids } = request.body;
        const removed = await audited(request, { scope: { ...scope }, ...(ids ? { ids } : {}) }, () =>
          memory().forget(ids ? { ids, scope } : { scope }),
        );
        return { removed };
      },
    );
  };
