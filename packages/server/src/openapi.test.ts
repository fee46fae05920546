import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { ACTIONS } from "./grants.js";
import { openApiText } from "./testing/openapi-document.js";

const committed = new URL("../../../deploy/openapi.json", import.meta.url);

describe("the OpenAPI document", () => {
  it("matches deploy/openapi.json (run `pnpm --filter @openrath/server openapi` after changing a route)", async () => {
    expect(await openApiText()).toBe(await readFile(committed, "utf8"));
  });

  it("is OpenAPI 3.1, names each operation's grant, and describes every error with the envelope", async () => {
    const document = JSON.parse(await openApiText());
    expect(document.openapi).toBe("3.1.0");
    const operations = Object.entries(
      document.paths as Record<string, Record<string, Record<string, unknown>>>,
    ).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
    );
    expect(operations.length).toBeGreaterThan(15);
    for (const { path, method, operation } of operations) {
      if (path.startsWith("/health")) continue;
      const action = operation["x-openrath-action"];
      expect(ACTIONS, `${method} ${path}`).toContain(action);
      expect(operation.security, `${method} ${path}`).toEqual([{ bearer: [] }]);
      const responses = operation.responses as Record<
        string,
        { content?: Record<string, { schema: unknown }> }
      >;
      const unauthorized = responses["401"]?.content?.["application/json"]?.schema;
      expect(JSON.stringify(unauthorized), `${method} ${path}`).toContain("Error");
    }
  });
});
