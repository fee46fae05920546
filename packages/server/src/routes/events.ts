import type { FollowedEvent } from "@openrath/runtime-durable";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { principalOf, type ServerContext, visibleRun } from "../context.js";
import { ApiError, ErrorEnvelope } from "../errors.js";
import { Event, eventOut, limit, page } from "../schemas.js";

const RunId = z.object({ runId: z.string().min(1).max(128) });
const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope };
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEP_ALIVE_MS = 15_000;

/** The stream's starting point: `Last-Event-ID` (a reconnecting client) wins over `after`. */
function startAfter(lastEventId: string | undefined, after: number | undefined): number {
  if (lastEventId === undefined) return after ?? 0;
  if (!/^\d{1,15}$/.test(lastEventId))
    throw new ApiError(400, "invalid_request", "`Last-Event-ID` must be an event sequence number.");
  return Number(lastEventId);
}

/** Frames by event: the followers of a run get the same event objects, so each is encoded once. */
const frames = new WeakMap<FollowedEvent, string>();

/** One SSE frame. Stored events carry their sequence as `id`; live ones (token deltas) carry none. */
export function sseFrame(event: FollowedEvent): string {
  let frame = frames.get(event);
  if (frame !== undefined) return frame;
  frame =
    "live" in event
      ? `event: live\ndata: ${JSON.stringify({ type: event.type, data: event.data, after: event.after })}\n\n`
      : `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(eventOut(event))}\n\n`;
  frames.set(event, frame);
  return frame;
}

/** A run's events: a page at a time, or as server-sent events that a client resumes with `Last-Event-ID`. */
export const eventRoutes =
  (context: ServerContext): FastifyPluginAsyncZod =>
  async (app) => {
    // Open streams end when the server closes, so `close()` does not wait on followers forever.
    const streams = new Set<AbortController>();
    app.addHook("preClose", async () => {
      for (const stream of streams) stream.abort(new Error("server closing"));
      context.followers.close();
    });

    app.get(
      "/v1/runs/:runId/events",
      {
        config: { action: "event.read" },
        schema: {
          tags: ["events"],
          summary: "A page of a run's stored events",
          params: RunId,
          querystring: z.object({
            after: z.coerce
              .number()
              .int()
              .min(0)
              .optional()
              .describe("Events with a higher sequence (default 0)."),
            limit: limit(1000, 200),
          }),
          response: { 200: page(Event), ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        await visibleRun(context, principal, request.params.runId);
        const { after = 0, limit: count } = request.query;
        const events = await context.runtime.store.readEvents(request.params.runId, { after, limit: count });
        return {
          items: events.map(eventOut),
          next: events.length === count ? String(events.at(-1)?.seq ?? after) : null,
        };
      },
    );

    app.get(
      "/v1/runs/:runId/stream",
      {
        config: { action: "event.read" },
        schema: {
          tags: ["events"],
          summary: "A run's events as server-sent events",
          description:
            "Stored events as frames with `id` = sequence and `event` = type; live events (token deltas) as `event: live` without an id. Reconnect with `Last-Event-ID` to continue with no gap. Ends after the event that ends the run (or parks it, with `parked=true`).",
          params: RunId,
          querystring: z.object({
            after: z.coerce.number().int().min(0).optional(),
            parked: z
              .enum(["true", "false"])
              .optional()
              .describe("End the stream when the run parks for an interrupt or a review (default false)."),
          }),
          headers: z.object({ "last-event-id": z.string().max(32).optional() }),
          response: { 200: z.string().describe("text/event-stream"), ...errors },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const { runId } = request.params;
        const parked = request.query.parked === "true";
        // A run this process follows already in the principal's tenant needs no read of its own
        // when its project is the principal's: the follow's buffer serves the rest. (A follower
        // that ends at a park reads the run: it may be parked now.)
        const shared = parked ? undefined : context.followers.projectOf(principal.tenantId, runId);
        const run =
          shared !== undefined && (principal.projectId === null || shared === principal.projectId)
            ? undefined
            : await visibleRun(context, principal, runId);
        const after = startAfter(request.headers["last-event-id"], request.query.after);
        const abort = new AbortController();
        streams.add(abort);
        // Followers of one run share one follow of the store (see run-followers.ts).
        const events = context.followers.follow(runId, {
          after,
          tenantId: principal.tenantId,
          parked,
          ...(run ? { run } : {}),
          signal: abort.signal,
        });
        reply.hijack();
        const raw = reply.raw;
        raw.writeHead(200, {
          "Content-Type": "text/event-stream; charset=utf-8",
          "Cache-Control": "no-cache",
          Connection: "keep-alive",
          "X-Accel-Buffering": "no",
          "X-Request-ID": request.id,
        });
        raw.write(": stream open\n\n");
        const keepAlive = setInterval(() => raw.write(": keep-alive\n\n"), KEEP_ALIVE_MS);
        const closed = () => abort.abort(new Error("client went away"));
        raw.on("close", closed);
        try {
          for await (const event of events) {
            if (!raw.write(sseFrame(event))) {
              await new Promise((resolve) => {
                raw.once("drain", resolve);
                raw.once("close", resolve);
              });
            }
          }
        } catch (error) {
          if (!abort.signal.aborted) {
            raw.write(
              `event: error\ndata: ${JSON.stringify({ code: "stream_failed", message: (error as Error).message })}\n\n`,
            );
          }
        } finally {
          clearInterval(keepAlive);
          streams.delete(abort);
          raw.off("close", closed);
          raw.end();
        }
      },
    );
  };
