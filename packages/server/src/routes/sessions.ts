import { type LineageSource, lineageGraph } from "@openrath/core";
import { restoreSession } from "@openrath/runtime-durable/store";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { principalOf, type ServerContext } from "../context.js";
import { ErrorEnvelope, notFound } from "../errors.js";
import { Run, runOut, SessionBody, sessionOut } from "../schemas.js";

const SessionId = z.object({ sessionId: z.string().min(1).max(128) });
const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 404: ErrorEnvelope };

const LineageGraph = z
  .object({
    nodes: z.array(
      z.object({
        id: z.string(),
        op: z.string(),
        operator: z.string(),
        parents: z.array(z.string()),
        extras: z.record(z.string(), z.unknown()),
        createdAt: z.number(),
        chunkCount: z.number().int(),
        usage: z.record(z.string(), z.unknown()).nullable(),
      }),
    ),
    edges: z.array(z.object({ from: z.string(), to: z.string(), op: z.string() })),
  })
  .meta({ id: "LineageGraph" });

/**
 * Sessions as the store keeps them: each is durable as the checkpoints of the runs that carried
 * it. A session reads as its newest checkpoint, with the runs it went through and its lineage.
 */
export const sessionRoutes =
  (context: ServerContext): FastifyPluginAsyncZod =>
  async (app) => {
    const { runtime } = context;

    /** The session's newest state and runs, when one of its runs is visible to the principal. */
    const load = async (request: Parameters<typeof principalOf>[0], sessionId: string) => {
      const principal = principalOf(request);
      const runs = await runtime.listRuns({
        tenantId: principal.tenantId,
        sessionId,
        limit: 200,
        ...(principal.projectId !== null ? { projectId: principal.projectId } : {}),
      });
      const head =
        runs.length > 0 ? await runtime.store.findSessionHead(principal.tenantId, [sessionId]) : undefined;
      if (!head) throw notFound("session", sessionId);
      return { session: restoreSession(head), runs };
    };

    app.get(
      "/v1/sessions/:sessionId",
      {
        config: { action: "session.read" },
        schema: {
          tags: ["sessions"],
          summary: "A session's newest checkpoint and the runs it went through",
          params: SessionId,
          response: {
            200: z.object({ session: SessionBody, runs: z.array(Run) }),
            ...errors,
          },
        },
      },
      async (request) => {
        const { session, runs } = await load(request, request.params.sessionId);
        return { session: sessionOut(session), runs: runs.map(runOut) };
      },
    );

    app.get(
      "/v1/sessions/:sessionId/lineage",
      {
        config: { action: "session.read" },
        schema: {
          tags: ["sessions"],
          summary: "The lineage DAG behind a session: forks, merges, loops, compressions, parents first",
          description:
            "The session's own ancestors and what the runs that carried it made of it: a run's steps hand on new session identities (an agent's loop, a fork merged back, a compression), so the graph holds the DAG behind each of those runs' last checkpoints too (of up to 200 runs).",
          params: SessionId,
          response: { 200: LineageGraph, ...errors },
        },
      },
      async (request) => {
        const { session, runs } = await load(request, request.params.sessionId);
        // The run's last checkpoint holds a descendant of the session it was submitted with,
        // whose lineage reaches back to it: read one at a time, keeping only the lineage.
        const carried: LineageSource[] = [];
        for (const run of runs) {
          if (run.checkpointSeq === 0) continue;
          const checkpoint = await runtime.store.loadCheckpoint(run.id);
          if (!checkpoint) continue;
          const { lineage, length, usage } = restoreSession(checkpoint);
          carried.push({ lineage, length, usage });
        }
        return lineageGraph(session, ...carried) as unknown as z.input<typeof LineageGraph>;
      },
    );
  };
