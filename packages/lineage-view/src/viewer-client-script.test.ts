import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { bundleClient, generatedModule } from "../scripts/bundle-client.js";
import { VIEWER_CLIENT_SCRIPT } from "./index.js";

describe("the bundled viewer client", () => {
  it("is the committed bundle of src/viewer-client.ts (run `pnpm --filter @openrath/lineage-view generate` when this fails)", async () => {
    const committed = await readFile(new URL("./generated/viewer-client-script.ts", import.meta.url), "utf8");
    expect(committed).toBe(generatedModule(await bundleClient()));
  });

  it("is one classic script that parses, cannot close its <script> element and writes no markup", () => {
    expect(() => new Function(VIEWER_CLIENT_SCRIPT)).not.toThrow();
    expect(VIEWER_CLIENT_SCRIPT).not.toMatch(/<\/script|<!--/i);
    expect(VIEWER_CLIENT_SCRIPT).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    expect(VIEWER_CLIENT_SCRIPT).not.toMatch(/\bimport\b|\bexport\b|fetch\(|XMLHttpRequest|https?:\/\//);
  });
});
