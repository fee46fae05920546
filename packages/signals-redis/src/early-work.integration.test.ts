import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session } from "@openrath/core";
import {
  createDurableRuntime,
  type DurableWorker,
  defineWorkflow,
  filesystemArtifactStore,
  withArtifactOffload,
} from "@openrath/runtime-durable";
import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import { postgresStore } from "@openrath/store-postgres";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { redisSignals } from "./redis-signals.js";
import { POSTGRES_URL, postgresTestService, redisTestService } from "./testing/redis-server.js";

const postgres = await postgresTestService();
const redis = await redisTestService();
afterAll(() => redis.stop());

// `commit_delay` can be set only by a superuser: the test services connect as one.
/** PostgreSQL's longest `commit_delay` (µs): every commit of the session that waits for a WAL flush first sleeps this long. */
const FLUSH_DELAY_US = 100_000;

/**
 * A connection string whose sessions flush the WAL slowly: with `commit_siblings = 0`, each commit
 * that waits for its flush first sleeps `commit_delay` (a slow disk, at the server). A relaxed
 * commit (`synchronous_commit off`) does not wait for a flush, so it does not sleep.
 */
function slowFlushUrl(): string {
  const url = new URL(POSTGRES_URL!);
  url.searchParams.set("options", `-c commit_delay=${FLUSH_DELAY_US} -c commit_siblings=0`);
  return url.toString();
}

// With signals other than the store's own (Redis, no LISTEN/NOTIFY fallback on the worker), a
// submission's `work` signal goes out once the store reports the run committed, before the store
// waits for the commit's WAL flush (ADR 0018, decision 6): a worker starts the run while the submitter still
// waits. Published only after `submit` returned, the worker would start it after the flush.
describe.skipIf(!postgres.available || !redis.available)(
  `a Redis worker starts a run during the submitter's WAL flush (${postgres.reason}; ${redis.reason})`,
  () => {
    const shapes: [string, (store: RunStoreV1, root: string) => RunStoreV1][] = [
      ["the PostgreSQL store", (store) => store],
      [
        "the store behind withArtifactOffload",
        (store, root) => withArtifactOffload(store, { artifacts: filesystemArtifactStore({ root }) }),
      ],
    ];
    for (const [label, shape] of shapes) {
      it(`through ${label}`, async () => {
        const schema = `early_${randomBytes(5).toString("hex")}`;
        const prefix = `early-${randomBytes(4).toString("hex")}`;
        const root = await mkdtemp(join(tmpdir(), "openrath-early-"));
        await (await postgresStore({ connectionString: POSTGRES_URL!, schema, migrate: true })).close();
        const admin = new pg.Client({ connectionString: slowFlushUrl() });
        await admin.connect();
        const apiStore = await postgresStore({ connectionString: slowFlushUrl(), schema });
        const workerStore = await postgresStore({ connectionString: POSTGRES_URL!, schema });
        const apiSignals = redisSignals({ url: redis.url!, prefix });
        const workerSignals = redisSignals({ url: redis.url!, prefix });
        const api = createDurableRuntime({ store: shape(apiStore, root), signals: apiSignals });
        const workers = createDurableRuntime({ store: workerStore, signals: workerSignals });
        const started = new Map<string, number>();
        const flow = defineWorkflow(`early-${schema}`).step(
          "only",
          (s, ctx) => {
            started.set(ctx.runId, performance.now());
            return s;
          },
          { entry: true },
        );
        let worker: DurableWorker | undefined;
        try {
          // The slow flush is in force on these sessions (a commit that writes WAL takes its delay).
          const t = performance.now();
          await admin.query("select pg_logical_emit_message(true, 'openrath.test', 'slow flush')");
          expect(performance.now() - t, "commit_delay slows a synchronous commit").toBeGreaterThan(
            FLUSH_DELAY_US / 1000 - 10,
          );
          await Promise.all([apiSignals.ready(), workerSignals.ready()]);
          await api.register(flow);
          await workers.register(flow);
          // A 30 s lease: the worker's safety sweep comes every 10 s, so only a signal wakes it here.
          worker = workers.worker({ concurrency: 2, leaseMs: 30_000 });
          await worker.start();
          // A new session (the store's submitIfNew), the same one again (submit), another new one.
          const first = Session.fromUserMessage("job");
          for (const session of [first, first, Session.fromUserMessage("another job")]) {
            const submittedAt = performance.now();
            const run = await api.submit(flow.name, session);
            const answeredAt = performance.now();
            // The caller still learns of the run only after the flush it waits for.
            expect(answeredAt - submittedAt).toBeGreaterThan(FLUSH_DELAY_US / 1000 - 10);
            const startedAt = started.get(run.id);
            expect(startedAt, "the worker started the run before submit answered").toBeDefined();
            expect(startedAt!).toBeLessThan(answeredAt);
            expect((await api.wait(run.id)).status).toBe("succeeded");
          }
        } finally {
          await worker?.stop({ drain: false });
          await api.close();
          await workers.close();
          await apiStore.close();
          await workerStore.close();
          await admin.end();
          await rm(root, { recursive: true, force: true });
        }
      }, 30_000);
    }
  },
);
