import { randomUUID } from "node:crypto";
import { type ServiceCheck, serviceAvailable } from "@openrath/testing";
import pg from "pg";
import { afterAll } from "vitest";

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

/** A schema name of its own for one test file, dropped after the file's tests. */
export function schemaPerFile(prefix: string, check: ServiceCheck): string {
  const schema = `${prefix}_${randomUUID().slice(0, 8)}`;
  afterAll(async () => {
    if (!check.available) return;
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(`drop schema if exists ${schema} cascade`);
    } finally {
      await client.end();
    }
  });
  return schema;
}
