import type { AddressInfo } from "node:net";
import { createDurableRuntime, type DurableRuntime, defineWorkflow } from "@openrath/runtime-durable";
import { inProcessSignals } from "@openrath/runtime-durable/store";
import { type AuthOptions, createServer, type ServerOptions } from "@openrath/server";
import { pgliteStore } from "@openrath/store-postgres";
import { afterAll, beforeAll } from "vitest";

/** A workflow that answers at once. */
export const echo = defineWorkflow("echo").step(
  "answer",
  async (session) => {
    const last = session.chunks.at(-1);
    const said = last && "content" in last && typeof last.content === "string" ? last.content : "";
    return session.append({ kind: "assistant", content: `echo: ${said}` });
  },
  { entry: true },
);

/** A workflow whose step asks for approval before it answers. */
export const approval = defineWorkflow("approval").step(
  "ask",
  async (session, ctx) => {
    const decision = await ctx.interrupt({ kind: "approval", request: { question: "Ship it?" } });
    return session.append({ kind: "assistant", content: `decided: ${decision.kind}` });
  },
  { entry: true },
);

/** How many `tick` events a `chatty` run stores, a few milliseconds apart, with a live event after each. */
export const TICKS = 12;

/** A workflow whose step stores {@link TICKS} events while it runs, so a stream can be cut mid-run. */
export const chatty = defineWorkflow("chatty").step(
  "talk",
  async (session, ctx) => {
    for (let i = 1; i <= TICKS; i++) {
      await ctx.emit("tick", { i });
      ctx.emitLive("token.delta", { text: `t${i}` });
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    return session.append({ kind: "assistant", content: "done" });
  },
  { entry: true },
);

export interface TestServer {
  readonly runtime: DurableRuntime;
  readonly app: Awaited<ReturnType<typeof createServer>>;
  /** `http://127.0.0.1:<port>` of the listening server. */
  readonly baseUrl: string;
  /** Closes the server, then the runtime and its store. */
  close(): Promise<void>;
}

/**
 * Starts a real Agent Server on an in-memory PGlite store (with in-process signals, which carry
 * live events), listening on a loopback port, with the
 * echo, approval and chatty workflows registered and a worker running.
 */
export async function startServer(
  options: { auth?: AuthOptions; memory?: ServerOptions["memory"] } = {},
): Promise<TestServer> {
  // The embedded store's own signals carry no live payloads; in-process ones do (one process here).
  const runtime = createDurableRuntime({ store: await pgliteStore({}), signals: inProcessSignals() });
  for (const workflow of [echo, approval, chatty]) await runtime.register(workflow);
  await runtime.worker({ concurrency: 4 }).start();
  const app = await createServer({
    runtime,
    auth: options.auth ?? { mode: "local" },
    rateLimit: false,
    ...(options.memory ? { memory: options.memory } : {}),
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as AddressInfo;
  return {
    runtime,
    app,
    baseUrl: `http://127.0.0.1:${port}`,
    close: async () => {
      await app.close();
      await runtime.close();
    },
  };
}

/**
 * One {@link startServer} server for the tests of a file (a store starts in seconds): started
 * before them, closed after them. Tests tell their objects apart by the ids they made.
 */
export function serverPerFile(options: { auth?: AuthOptions } = {}): () => TestServer {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startServer(options);
  });
  afterAll(async () => {
    await server?.close();
  });
  return () => {
    if (!server) throw new Error("The test server starts in beforeAll; call this inside a test.");
    return server;
  };
}
