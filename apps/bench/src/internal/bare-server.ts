// The anchor of the per-request overhead case: a bare Fastify server on the same store that answers
// `GET /health/live` and `GET /v1/runs/:runId` with the same JSON as the Agent Server, and nothing
// else: no authentication, hooks, plugins, schemas or rate limit. `bare-server <databaseUrl>`.
import { toApiRun } from "@openrath/server";
import { postgresStore } from "@openrath/store-postgres";
import Fastify from "fastify";

const store = await postgresStore({ connectionString: process.argv[2]! });
const app = Fastify();
app.get("/health/live", async () => ({ status: "ok" }));
app.get<{ Params: { runId: string } }>("/v1/runs/:runId", async (request, reply) => {
  const run = await store.getRun(request.params.runId);
  if (!run) return reply.status(404).send({ error: { code: "not_found" } });
  return toApiRun(run);
});
const address = await app.listen({ port: 0, host: "127.0.0.1" });
process.stderr.write(`bare Fastify listening on ${address}\n`);
const stop = async () => {
  await app.close();
  await store.close();
  process.exit(0);
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
