import { serviceAvailable } from "@openrath/testing";
import pg from "pg";

/** The test server's URL (from the test services), or undefined. */
export const POSTGRES_URL = process.env.OPENRATH_TEST_POSTGRES_URL;

/** Whether the PostgreSQL test server answers; under `OPENRATH_REQUIRE_SERVICES` a missing one fails. */
export const postgres = await serviceAvailable("postgres", async () => {
  if (!POSTGRES_URL)
    throw new Error("OPENRATH_TEST_POSTGRES_URL is not set (tooling/scripts/services.mjs starts the server)");
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.end();
  return true;
});
