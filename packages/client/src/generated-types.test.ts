import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { DOCUMENT, GENERATED, openApiTypes } from "../scripts/openapi-types.js";

describe("the generated types", () => {
  it("match deploy/openapi.json (run `pnpm --filter @openrath/client generate` after the document changes)", async () => {
    const regenerated = await openApiTypes(await readFile(DOCUMENT, "utf8"));
    expect(regenerated).toBe(await readFile(GENERATED, "utf8"));
  });
});
