import { readFile } from "node:fs/promises";
import { OpenRathError } from "@openrath/core";
import { describe, expect, it } from "vitest";
import { configReference, readConfig } from "./config.js";

describe("the configuration schema", () => {
  it("gives every variable its default and reads the ones set", () => {
    expect(readConfig({})).toMatchObject({
      OPENRATH_STATE: ".openrath",
      PORT: 8787,
      OPENRATH_HOST: "127.0.0.1",
    });
    const config = readConfig({
      PORT: "9000",
      OPENRATH_CORS_ORIGINS: "https://a.test, https://b.test",
      UNRELATED: "x",
    });
    expect(config.PORT).toBe(9000);
    expect(config.OPENRATH_CORS_ORIGINS).toEqual(["https://a.test", "https://b.test"]);
  });

  it("refuses bad values with invalid_config, naming each variable, and never echoes a connection string", () => {
    let error: unknown;
    try {
      readConfig({ PORT: "http", OPENRATH_AUTH: "magic", DATABASE_URL: "mysql://root:hunter2@db" });
    } catch (caught) {
      error = caught;
    }
    expect(OpenRathError.isInstance(error, "invalid_config")).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain("PORT");
    expect(message).toContain("OPENRATH_AUTH");
    expect(message).toContain("DATABASE_URL must be a postgres:// URL");
    expect(message).not.toContain("hunter2");
  });

  it("matches docs/reference/configuration.md (run `pnpm --filter @openrath/cli config-docs` after a change)", async () => {
    const committed = await readFile(
      new URL("../../../docs/reference/configuration.md", import.meta.url),
      "utf8",
    );
    expect(committed).toBe(configReference());
  });
});
