import type { MessageQueueV1, QueuedMessage as QueuedRecord } from "@openrath/runtime-durable/store";
import type { FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { auditOf, principalOf, type ServerContext } from "../context.js";
import { ApiError, ErrorEnvelope, notFound } from "../errors.js";

export const QueuedMessage = z
  .object({
    id: z.string(),
    sessionId: z.string(),
    assistant: z.string(),
    status: z
      .enum(["pending", "submitted", "failed"])
      .describe("`pending` until the session's active run ends, then `submitted` (see `runId`)."),
    runId: z.string().nullable().describe("The run the message became, once submitted."),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    createdAt: z.string(),
  })
  .meta({ id: "QueuedMessage" });

function queuedOut(message: QueuedRecord): z.input<typeof QueuedMessage> {
  return {
    id: message.id,
    sessionId: message.sessionId,
    assistant: message.workflow,
    status: message.status,
    runId: message.runId,
    error: message.error ? { code: message.error.code, message: message.error.message } : null,
    createdAt: new Date(message.createdAt).toISOString(),
  };
}

function queueOf(context: ServerContext): MessageQueueV1 {
  const { store } = context.runtime;
  const queue = store.capabilities.messageQueue ? store.messageQueue : undefined;
  if (!queue) throw new ApiError(501, "not_supported", "This store queues no messages behind busy sessions.");
  return queue;
}

/**
 * The busy-session policy `enqueue` of `POST /v1/runs`: the next message of a session whose run is
 * still active is stored, and a worker submits it as the session's next run once that run ends.
 */
export async function enqueueMessage(
  context: ServerContext,
  request: FastifyRequest,
  body: {
    readonly assistant: string;
    readonly sessionId?: string | undefined;
    readonly input?: string | undefined;
    readonly priority?: number | undefined;
    readonly metadata?: Record<string, unknown> | undefined;
  },
): Promise<z.input<typeof QueuedMessage>> {
  const principal = principalOf(request);
  if (body.sessionId === undefined || body.input === undefined)
    throw new ApiError(
      400,
      "invalid_request",
      "`ifBusy: enqueue` queues a session's next message: give `sessionId` and `input`.",
    );
  const message = await queueOf(context).enqueue({
    tenantId: principal.tenantId,
    projectId: principal.projectId,
    sessionId: body.sessionId,
    workflow: body.assistant,
    input: body.input,
    ...(body.metadata !== undefined ? { metadata: body.metadata as never } : {}),
    ...(body.priority !== undefined ? { priority: body.priority } : {}),
    audit: auditOf(request, "queued_message", null, "allowed", {
      attributes: { assistant: body.assistant, sessionId: body.sessionId },
    }),
  });
  return queuedOut(message);
}

/** Messages queued behind busy sessions: read one to learn the run it became. */
export const queuedMessageRoutes =
  (context: ServerContext): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      "/v1/queued-messages/:messageId",
      {
        config: { action: "run.read" },
        schema: {
          tags: ["runs"],
          summary: "Read a message queued behind a busy session",
          params: z.object({ messageId: z.string().min(1).max(128) }),
          response: {
            200: QueuedMessage,
            401: ErrorEnvelope,
            403: ErrorEnvelope,
            404: ErrorEnvelope,
            501: ErrorEnvelope,
          },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { messageId } = request.params;
        const message = await queueOf(context).get(principal.tenantId, messageId);
        if (!message || (principal.projectId !== null && message.projectId !== principal.projectId))
          throw notFound("queued message", messageId);
        return queuedOut(message);
      },
    );
  };
