import { describe, expect, it } from "vitest";
import { createClient } from "./create-client.js";
import { OpenRathApiError } from "./openrath-api-error.js";
import { serverPerFile } from "./testing/server.js";

const server = serverPerFile();

describe("artifacts through the client", () => {
  it("a server without an artifact store answers not_supported, as a typed error", async () => {
    const client = createClient({ baseUrl: server().baseUrl });
    const error = await client.artifacts.get("a".repeat(64)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenRathApiError);
    expect(error).toMatchObject({ status: 501, code: "not_supported" });
  });
});
