import type { PGlite } from "@electric-sql/pglite";
import type { Session } from "@openrath/core";
import {
  createDurableRuntime,
  type DurableDefinitionSource,
  type DurableRuntime,
  defineWorkflow,
} from "@openrath/runtime-durable";
import type { AccessStoreV1 } from "@openrath/runtime-durable/store";
import { pgliteStore } from "@openrath/store-postgres";
import type { FastifyInstance } from "fastify";
import { afterEach } from "vitest";
import { type AuthOptions, hashTokenSecret, newTokenSecret } from "../auth.js";
import { createServer, type ServerOptions } from "../server.js";

/** A workflow that answers at once. */
export const echo = defineWorkflow("echo").step(
  "answer",
  async (session: Session) => {
    const last = session.chunks.at(-1);
    const said = last && "content" in last && typeof last.content === "string" ? last.content : "";
    return session.append({ kind: "assistant", content: `echo: ${said}` });
  },
  { entry: true },
);

/** A workflow whose step asks for approval before it answers. */
export const approval = defineWorkflow("approval").step(
  "ask",
  async (session: Session, ctx) => {
    const decision = await ctx.interrupt({ kind: "approval", request: { question: "Ship it?" } });
    return session.append({ kind: "assistant", content: `decided: ${decision.kind}` });
  },
  { entry: true },
);

export interface Harness {
  readonly runtime: DurableRuntime;
  readonly app: FastifyInstance;
}

/**
 * A server on an in-memory PGlite store with the echo and approval workflows (and `workflows`)
 * registered and a worker running; closed after each test.
 */
export function serverHarness() {
  const open: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of open.splice(0).reverse()) await close();
  });
  return {
    async setup(
      options: {
        auth?: AuthOptions;
        tenantId?: string;
        db?: PGlite;
        workflows?: readonly DurableDefinitionSource[];
      } & Partial<Omit<ServerOptions, "runtime">> = {},
    ): Promise<Harness> {
      const store = await pgliteStore(options.db ? { db: options.db } : {});
      const runtime = createDurableRuntime({
        store,
        ...(options.tenantId ? { tenantId: options.tenantId } : {}),
      });
      open.push(() => runtime.close());
      await runtime.register(echo);
      await runtime.register(approval);
      for (const workflow of options.workflows ?? []) await runtime.register(workflow);
      const worker = runtime.worker({ concurrency: 4 });
      await worker.start();
      const { db: _db, workflows: _workflows, ...serverOptions } = options;
      const app = await createServer({ ...serverOptions, runtime, auth: options.auth ?? { mode: "local" } });
      open.push(() => app.close());
      return { runtime, app };
    },
  };
}

/** A token made straight in the store, as `openrath tokens create` does. */
export async function mint(
  access: AccessStoreV1,
  input: { tenantId?: string; projectId?: string; grants: string[]; expiresAt?: number },
): Promise<string> {
  const secret = newTokenSecret();
  await access.createToken({
    tenantId: input.tenantId ?? "default",
    projectId: input.projectId ?? null,
    name: "test",
    grants: input.grants,
    expiresAt: input.expiresAt ?? null,
    secretHash: hashTokenSecret(secret),
  });
  return secret;
}

/** The `Authorization` header of a token secret. */
export const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
