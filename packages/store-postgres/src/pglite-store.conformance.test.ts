import { PGlite } from "@electric-sql/pglite";
import { describeStoreConformance } from "@openrath/testing/store";
import { afterAll } from "vitest";
import { pgliteStore } from "./postgres-store.js";

// One embedded database for the file (starting PGlite takes seconds); each test gets its own schema.
const db = PGlite.create();
afterAll(async () => (await db).close());
let n = 0;
let schema = "";

describeStoreConformance({
  name: "pglite",
  create: async () => {
    schema = `suite_${++n}`;
    return pgliteStore({ db: await db, schema });
  },
  peer: async () => pgliteStore({ db: await db, schema }),
  capabilities: {
    multiProcess: false,
    notifiesOnCommit: true,
    databaseClock: true,
    retention: true,
    tenantLimits: true,
    journal: true,
    deployments: true,
    groupCommit: true,
    newSessionSubmit: true,
    claimOnSubmit: true,
    access: true,
    schedules: true,
    webhooks: true,
    messageQueue: true,
    stats: true,
  },
});
