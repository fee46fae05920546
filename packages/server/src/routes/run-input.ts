import { Session } from "@openrath/core";
import { restoreSession } from "@openrath/runtime-durable/store";
import { z } from "zod";
import type { Principal } from "../auth.js";
import { type ServerContext, visibleRun } from "../context.js";
import { ApiError, notFound } from "../errors.js";

/** The body of `POST /v1/runs`. */
export const CreateRun = z
  .object({
    assistant: z
      .string()
      .min(1)
      .max(200)
      .describe("The workflow's name (its deployed revision) or a plan hash."),
    input: z.string().max(1_000_000).optional().describe("A user message to start from (or to append)."),
    session: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("A whole session as `Session.toJSON()` writes it, instead of `input`."),
    from: z
      .object({
        runId: z.string().min(1).max(128),
        sequence: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe("A checkpoint of that run (default its latest)."),
        keepChunks: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe(
            "Keep only the first n chunks of that checkpoint's session (rewind to before a message, to send another in its place); recorded in the fork's lineage node.",
          ),
      })
      .optional()
      .describe(
        "Fork the session of another run's checkpoint (time travel), optionally rewound (`keepChunks`): `input`, if given, is appended.",
      ),
    merge: z
      .array(z.object({ runId: z.string().min(1).max(128), sequence: z.number().int().min(0).optional() }))
      .min(2)
      .max(16)
      .optional()
      .describe(
        "Merge the sessions of these runs' checkpoints (the shared prefix once, then each side): `input`, if given, is appended.",
      ),
    sessionId: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe(
        "Continue this session (its newest checkpoint): `input` is appended as the next user message.",
      ),
    ifBusy: z
      .enum(["reject", "interrupt", "enqueue"])
      .optional()
      .describe(
        "When the session already has an active run: `reject` (409 `session_busy`), `interrupt` (cancel it, then start this one; needs `run.cancel`) or `enqueue` (202 with the queued message: started as the session's next run when the active one ends; with `sessionId` and `input`).",
      ),
    priority: z.number().int().min(-100).max(100).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    deadline: z.iso.datetime({ offset: true }).optional(),
  })
  .strict()
  .meta({ id: "CreateRun" });

type CreateRunBody = z.output<typeof CreateRun>;

/**
 * The session a new run starts from: a user message, a whole session, a fork of another run's
 * checkpoint, a merge of several, or the next message of a session — each read only when visible
 * to the principal.
 */
export async function startingSession(
  context: ServerContext,
  principal: Principal,
  body: CreateRunBody,
): Promise<Session> {
  const { runtime } = context;
  const sources = [body.from, body.session, body.merge, body.sessionId].filter(
    (given) => given !== undefined,
  );
  if (sources.length > 1)
    throw new ApiError(400, "invalid_request", "Give one of `from`, `merge`, `session` and `sessionId`.");
  const withInput = (session: Session) =>
    body.input === undefined ? session : session.append({ kind: "user", content: body.input });
  const checkpoint = async ({ runId, sequence }: { runId: string; sequence?: number | undefined }) => {
    await visibleRun(context, principal, runId);
    return runtime.session(runId, sequence, { tenantId: principal.tenantId });
  };
  if (body.from) {
    const source = await checkpoint(body.from);
    const { keepChunks } = body.from;
    if (keepChunks === undefined || keepChunks >= source.length) return withInput(source.fork());
    // An edit of the past is a fork too: its node records what was kept of which session.
    const kept = source.chunks.slice(0, keepChunks);
    return withInput(
      source.derive({
        op: "fork",
        operator: "api.rewind",
        chunks: kept,
        extras: { "rewind.kept": keepChunks, "rewind.dropped": source.length - keepChunks },
      }),
    );
  }
  if (body.merge) {
    const [first, ...rest] = await Promise.all(body.merge.map(checkpoint));
    return withInput(rest.reduce((merged, next) => merged.merge(next), first as Session));
  }
  if (body.sessionId !== undefined) {
    if (body.input === undefined) throw new ApiError(400, "invalid_request", "`sessionId` needs `input`.");
    const runs = await runtime.listRuns({
      tenantId: principal.tenantId,
      sessionId: body.sessionId,
      limit: 1,
      ...(principal.projectId !== null ? { projectId: principal.projectId } : {}),
    });
    const head =
      runs.length > 0 ? await runtime.store.findSessionHead(principal.tenantId, [body.sessionId]) : undefined;
    if (!head) throw notFound("session", body.sessionId);
    return withInput(restoreSession(head));
  }
  if (body.session) {
    if (body.input !== undefined)
      throw new ApiError(400, "invalid_request", "Give `session` or `input`, not both.");
    try {
      return Session.fromJSON(body.session as never);
    } catch (error) {
      throw new ApiError(400, "invalid_request", `The session does not load: ${(error as Error).message}`);
    }
  }
  if (body.input !== undefined) return Session.fromUserMessage(body.input);
  throw new ApiError(400, "invalid_request", "Give `input`, `session`, `sessionId`, `from` or `merge`.");
}
