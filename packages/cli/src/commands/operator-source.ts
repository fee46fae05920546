import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Effect, Event, Interrupt, Run, Token } from "@openrath/client";
import { OpenRathError } from "@openrath/core";
import type { DecisionInput, EffectResolutionInput, RunStatus, RunStoreV1 } from "@openrath/runtime-durable";
import { readConfig, stateDir } from "../config.js";
import type { CommandContext } from "../internal/command.js";

type Options = Readonly<Record<string, string | true | undefined>>;

/** A page of items and the cursor of the next one. */
export interface Listed<T> {
  readonly items: readonly T[];
  readonly next: string | null;
}

/**
 * What the operator commands (`runs`, `interrupts`, `effects`, `tokens`) work on: the Agent Server
 * (`--server`, `OPENRATH_SERVER_URL`, with `OPENRATH_TOKEN`) or, without one, the configured store
 * straight from this process. Both answer in the API's shapes, so `--json` is the same either way.
 */
export interface OperatorSource {
  /** Where the answers come from, for messages. */
  readonly where: string;
  listRuns(query: { status?: RunStatus; limit: number; after?: string }): Promise<Listed<Run>>;
  getRun(runId: string): Promise<Run>;
  /** The stored events after `after`; with `follow`, new ones as they commit, until the run ends. */
  events(runId: string, after: number, follow: boolean): AsyncIterable<Event>;
  cancel(runId: string, reason: string | undefined): Promise<Run>;
  /** Puts a run parked for review back in the queue (`effects_under_review` while effects wait). */
  resume(runId: string, reason: string | undefined): Promise<Run>;
  listInterrupts(query: {
    status: string;
    runId?: string;
    cursor?: string;
    limit: number;
  }): Promise<Listed<Interrupt>>;
  decide(
    interruptId: string,
    decision: Omit<DecisionInput, "actor">,
  ): Promise<{ interrupt: Interrupt; run: Run }>;
  listEffects(query: {
    status: string;
    runId?: string;
    cursor?: string;
    limit: number;
  }): Promise<Listed<Effect>>;
  resolve(
    effectId: string,
    resolution: Omit<EffectResolutionInput, "actor">,
  ): Promise<{ effect: Effect; run: Run }>;
  listTokens(): Promise<readonly Token[]>;
  createToken(input: {
    name: string;
    grants: string[];
    projectId?: string;
    expiresInSeconds?: number;
  }): Promise<{
    token: Token;
    secret: string;
  }>;
  revokeToken(tokenId: string): Promise<Token>;
  close(): Promise<void>;
}

const notFound = (what: string, id: string, tenantId: string) =>
  new OpenRathError("not_found", `No ${what} ${id} in tenant ${tenantId}`, { details: { id, tenantId } });

/** The source the options and the environment name. */
export async function openSource(ctx: CommandContext, options: Options): Promise<OperatorSource> {
  const config = readConfig(ctx.env);
  const server = typeof options.server === "string" ? options.server : config.OPENRATH_SERVER_URL;
  const tenantId = typeof options.tenant === "string" ? options.tenant : config.OPENRATH_TENANT;
  if (server) return serverSource(server, config.OPENRATH_TOKEN);
  const { store, where } = await openConfiguredStore(ctx, options);
  return storeSource(store, tenantId, where);
}

/**
 * The configured store, opened from this process: PostgreSQL with DATABASE_URL, else the embedded
 * store under `--state`, which must exist unless `create` (reading makes no database where the
 * user has none).
 */
export async function openConfiguredStore(
  ctx: CommandContext,
  options: Options,
  create = false,
): Promise<{ store: RunStoreV1; where: string }> {
  const config = readConfig(ctx.env);
  const { pgliteStore, postgresStore } = await import("@openrath/store-postgres");
  const dataDir = join(stateDir(ctx, config, options), "db");
  if (!config.DATABASE_URL && !create && !existsSync(dataDir)) {
    throw new OpenRathError(
      "not_found",
      `No embedded store at ${dataDir}: run openrath demo first, pass --state <dir>, set DATABASE_URL, or talk to a server with --server <url>`,
      { details: { dataDir } },
    );
  }
  try {
    const store = config.DATABASE_URL
      ? await postgresStore({ connectionString: config.DATABASE_URL, schema: config.OPENRATH_DB_SCHEMA })
      : await pgliteStore({ dataDir });
    return { store, where: config.DATABASE_URL ? "PostgreSQL" : dataDir };
  } catch (error) {
    if (OpenRathError.isInstance(error, "store_locked"))
      throw new OpenRathError(
        "store_locked",
        `${(error as Error).message.replace(/\.$/, "")}: is openrath serve running on it? Pass --server http://127.0.0.1:8787 to go through it`,
      );
    throw error;
  }
}

async function serverSource(baseUrl: string, token: string | undefined): Promise<OperatorSource> {
  const { createClient } = await import("@openrath/client");
  const client = createClient({ baseUrl, ...(token ? { token } : {}) });
  return {
    where: baseUrl,
    listRuns: ({ status, limit, after }) =>
      client.runs.list({ limit, ...(status ? { status } : {}), ...(after ? { after } : {}) }),
    getRun: (runId) => client.runs.get(runId),
    async *events(runId, after, follow) {
      if (follow) {
        for await (const event of client.events.stream(runId, { after })) if (!event.live) yield event;
        return;
      }
      yield* client.events.listAll(runId, { after, limit: 1000 });
    },
    cancel: (runId, reason) => client.runs.cancel(runId, reason === undefined ? {} : { reason }),
    resume: (runId, reason) => client.runs.resume(runId, reason === undefined ? {} : { reason }),
    listInterrupts: (query) => client.interrupts.list(query as never),
    decide: (interruptId, decision) => client.interrupts.decide(interruptId, decision as never),
    listEffects: (query) => client.effects.list(query as never),
    resolve: (effectId, resolution) => client.effects.resolve(effectId, resolution as never),
    listTokens: async () => (await client.tokens.list()).items,
    createToken: (input) => client.tokens.create(input),
    revokeToken: (tokenId) => client.tokens.revoke(tokenId),
    close: async () => {},
  };
}

async function storeSource(store: RunStoreV1, tenantId: string, where: string): Promise<OperatorSource> {
  const server = await import("@openrath/server");
  const { createDurableRuntime } = await import("@openrath/runtime-durable");
  const runtime = createDurableRuntime({ store, tenantId });
  const actor = "openrath-cli";
  const run = async (runId: string) => {
    const found = await runtime.get(runId);
    if (!found) throw notFound("run", runId, tenantId);
    return found;
  };
  const access = () => {
    if (!store.capabilities.access || !store.access)
      throw new OpenRathError("not_supported", `The ${store.name} store keeps no tokens`);
    return store.access;
  };
  return {
    where,
    async listRuns({ status, limit, after }) {
      // Newest first, as the server lists; one run more than the page says whether another follows.
      const runs = await runtime.listRuns({
        limit: limit + 1,
        order: "desc",
        ...(status ? { status } : {}),
        ...(after ? { after } : {}),
      });
      const items = runs.slice(0, limit);
      return {
        items: items.map(server.toApiRun) as Run[],
        next: runs.length > limit ? (items.at(-1)?.id ?? null) : null,
      };
    },
    getRun: async (runId) => server.toApiRun(await run(runId)) as Run,
    async *events(runId, after, follow) {
      await run(runId);
      if (follow) {
        for await (const event of runtime.follow(runId, { after })) yield server.toApiEvent(event) as Event;
        return;
      }
      for (let from = after; ; ) {
        const page = await store.readEvents(runId, { after: from, limit: 500 });
        for (const event of page) yield server.toApiEvent(event) as Event;
        if (page.length < 500) return;
        from = page.at(-1)?.seq ?? from;
      }
    },
    async cancel(runId, reason) {
      await run(runId);
      return server.toApiRun(
        await store.cancel(runId, { actor, ...(reason === undefined ? {} : { reason }) }),
      ) as Run;
    },
    async resume(runId, reason) {
      await run(runId);
      return server.toApiRun(
        await runtime.resume(runId, { actor, ...(reason === undefined ? {} : { reason }) }),
      ) as Run;
    },
    async listInterrupts({ status, runId, cursor, limit }) {
      const page = await runtime.interrupts.list({
        status: status as never,
        limit,
        ...(runId ? { runId } : {}),
        ...(cursor ? { cursor } : {}),
      });
      return { items: page.items.map(server.toApiInterrupt) as Interrupt[], next: page.nextCursor };
    },
    async decide(interruptId, decision) {
      const result = await runtime.interrupts.decide(interruptId, { ...decision, actor });
      return {
        interrupt: server.toApiInterrupt(result.interrupt) as Interrupt,
        run: server.toApiRun(result.run) as Run,
      };
    },
    async listEffects({ status, runId, cursor, limit }) {
      const page = await runtime.effects.list({
        status: status as never,
        limit,
        ...(runId ? { runId } : {}),
        ...(cursor ? { cursor } : {}),
      });
      return { items: page.items.map(server.toApiEffect) as Effect[], next: page.nextCursor };
    },
    async resolve(effectId, resolution) {
      const result = await runtime.effects.resolve(effectId, {
        ...resolution,
        actor,
      } as EffectResolutionInput);
      return { effect: server.toApiEffect(result.effect) as Effect, run: server.toApiRun(result.run) as Run };
    },
    listTokens: async () => (await access().listTokens(tenantId)).map(server.toApiToken) as Token[],
    async createToken({ name, grants, projectId, expiresInSeconds }) {
      const unknown = server.unknownGrants(grants);
      if (unknown.length > 0)
        throw new OpenRathError("invalid_argument", `Unknown grants: ${unknown.join(", ")}`);
      const secret = server.newTokenSecret();
      const token = await access().createToken({
        tenantId,
        projectId: projectId ?? null,
        name,
        grants,
        expiresAt: expiresInSeconds === undefined ? null : Date.now() + expiresInSeconds * 1000,
        secretHash: server.hashTokenSecret(secret),
        audit: {
          tenantId,
          actor,
          action: "token.create",
          outcome: "allowed",
          resourceKind: "token",
          attributes: { name, grants },
        },
      });
      return { token: server.toApiToken(token) as Token, secret };
    },
    async revokeToken(tokenId) {
      const token = await access().revokeToken(tenantId, tokenId, {
        tenantId,
        actor,
        action: "token.revoke",
        outcome: "allowed",
        resourceKind: "token",
        resourceId: tokenId,
      });
      if (!token) throw notFound("token", tokenId, tenantId);
      return server.toApiToken(token) as Token;
    },
    close: () => runtime.close(),
  };
}
