import { randomBytes } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { describeSignalsConformance } from "@openrath/testing/signals";
import { afterAll, describe, it } from "vitest";
import { pgliteStore, postgresStore } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

// The store's own signals: PostgreSQL LISTEN/NOTIFY (one listening connection per store handle,
// so the peer is another process's view) and PGlite's in-process notifications.

const db = PGlite.create();
afterAll(async () => (await db).close());
let liteSchema = "";

describeSignalsConformance({
  name: "pglite (in-process notifications)",
  create: async () => {
    liteSchema = `sig_${randomBytes(5).toString("hex")}`;
    const store = await pgliteStore({ db: await db, schema: liteSchema });
    return { store, signals: store.signals };
  },
  capabilities: { crossProcess: false, livePayloads: false, heardRuns: true },
});

if (postgres.available) {
  let schema = "";
  describeSignalsConformance({
    name: "postgres (LISTEN/NOTIFY)",
    create: async () => {
      schema = `sig_${randomBytes(5).toString("hex")}`;
      const store = await postgresStore({ connectionString: POSTGRES_URL, schema, migrate: true });
      return { store, signals: store.signals };
    },
    peer: async () => {
      const store = await postgresStore({ connectionString: POSTGRES_URL, schema });
      return { store, signals: store.signals };
    },
    capabilities: { crossProcess: true, livePayloads: false, heardRuns: true },
  });
} else {
  describe.skip(`signals conformance: postgres (${postgres.reason})`, () => {
    it("needs the PostgreSQL test server", () => {});
  });
}
