import { randomBytes } from "node:crypto";
import { describeStoreConformance } from "@openrath/testing/store";
import { describe, it } from "vitest";
import { postgresStore } from "./postgres-store.js";
import { POSTGRES_URL, postgres } from "./testing/postgres-url.js";

let schema = "";

if (postgres.available) {
  describeStoreConformance({
    name: "postgres",
    create: async () => {
      schema = `suite_${randomBytes(6).toString("hex")}`;
      return postgresStore({ connectionString: POSTGRES_URL, schema, migrate: true });
    },
    peer: () => postgresStore({ connectionString: POSTGRES_URL, schema }),
    capabilities: {
      multiProcess: true,
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
} else {
  describe.skip(`store conformance: postgres (${postgres.reason})`, () => {
    it("needs the PostgreSQL test server", () => {});
  });
}
