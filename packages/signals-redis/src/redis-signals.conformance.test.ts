import { randomBytes } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { pgliteStore, postgresStore } from "@openrath/store-postgres";
import { describeSignalsConformance } from "@openrath/testing/signals";
import { afterAll, describe, it } from "vitest";
import { redisSignals } from "./redis-signals.js";
import { POSTGRES_URL, postgresTestService, redisTestService } from "./testing/redis-server.js";

const redis = await redisTestService();
const postgres = await postgresTestService();
afterAll(() => redis.stop());

const capabilities = { crossProcess: true, livePayloads: true };
const unique = () => randomBytes(5).toString("hex");

if (redis.available) {
  const url = redis.url!;
  // Each test gets its own channel prefix, so tests never hear each other.
  let prefix = "";

  // One embedded database for the file; each test gets its own schema.
  const db = PGlite.create();
  afterAll(async () => (await db).close());
  let schema = "";
  describeSignalsConformance({
    name: "redis over pglite (fallback: in-process)",
    create: async () => {
      prefix = `t-${unique()}`;
      schema = `sig_${unique()}`;
      const store = await pgliteStore({ db: await db, schema });
      return { store, signals: redisSignals({ url, prefix, fallback: store.signals }) };
    },
    peer: async () => {
      const store = await pgliteStore({ db: await db, schema });
      return { store, signals: redisSignals({ url, prefix, fallback: store.signals }) };
    },
    capabilities,
  });

  if (postgres.available) {
    let pgSchema = "";
    describeSignalsConformance({
      name: "redis over postgres (fallback: LISTEN/NOTIFY)",
      create: async () => {
        prefix = `t-${unique()}`;
        pgSchema = `sig_${unique()}`;
        const store = await postgresStore({
          connectionString: POSTGRES_URL,
          schema: pgSchema,
          migrate: true,
        });
        return { store, signals: redisSignals({ url, prefix, fallback: store.signals }) };
      },
      peer: async () => {
        const store = await postgresStore({ connectionString: POSTGRES_URL, schema: pgSchema });
        return { store, signals: redisSignals({ url, prefix, fallback: store.signals }) };
      },
      capabilities,
    });

    // Without a fallback, every wake-up, cancel and live event the runtime sees came through Redis.
    describeSignalsConformance({
      name: "redis alone over postgres (no fallback)",
      create: async () => {
        prefix = `t-${unique()}`;
        pgSchema = `sig_${unique()}`;
        const store = await postgresStore({
          connectionString: POSTGRES_URL,
          schema: pgSchema,
          migrate: true,
        });
        return { store, signals: redisSignals({ url, prefix }) };
      },
      peer: async () => {
        const store = await postgresStore({ connectionString: POSTGRES_URL, schema: pgSchema });
        return { store, signals: redisSignals({ url, prefix }) };
      },
      capabilities,
    });
  } else {
    describe.skip(`signals conformance: redis over postgres (${postgres.reason})`, () => {
      it("needs the PostgreSQL test server", () => {});
    });
  }
} else {
  describe.skip(`signals conformance: redis (${redis.reason})`, () => {
    it("needs a Redis server", () => {});
  });
}
