import { type ServiceCheck, serviceAvailable } from "@openrath/testing";
import pg from "pg";

/** The test PostgreSQL server (tooling/scripts/services.mjs starts it). */
export const POSTGRES_URL = process.env.OPENRATH_TEST_POSTGRES_URL;

/** Whether the test PostgreSQL server answers (a failure under OPENRATH_REQUIRE_SERVICES). */
export function postgresAvailable(): Promise<ServiceCheck> {
  return serviceAvailable("postgres", async () => {
    if (!POSTGRES_URL)
      throw new Error("OPENRATH_TEST_POSTGRES_URL is not set (tooling/scripts/services.mjs starts it)");
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    await client.end();
    return true;
  });
}
