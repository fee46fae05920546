import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { studioAssetsDir } from "./studio.js";
import { serverHarness } from "./testing/harness.js";

const harness = serverHarness();
const dir = await studioAssetsDir();

// The assets come from `pnpm build` (the test command builds first); a checkout without them
// gets the 503 that says how to build them.
describe("Studio under /studio", () => {
  it.runIf(dir)(
    "serves the built page and its hashed assets without credentials, and nothing outside them",
    async () => {
      const { app } = await harness.setup();
      const redirect = await app.inject({ url: "/studio" });
      expect(redirect.statusCode).toBe(302);
      expect(redirect.headers.location).toBe("/studio/");
      const page = await app.inject({ url: "/studio/" });
      expect(page.statusCode).toBe(200);
      expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(page.headers["cache-control"]).toBe("no-cache");
      expect(page.body).toBe(await readFile(join(dir!, "index.html"), "utf8"));
      expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
      const [script] = (await readdir(join(dir!, "assets"))).filter((f) => f.endsWith(".js"));
      const asset = await app.inject({ url: `/studio/assets/${script}` });
      expect(asset.statusCode).toBe(200);
      expect(asset.headers["content-type"]).toBe("text/javascript; charset=utf-8");
      expect(asset.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
      for (const url of [
        "/studio/..%2fpackage.json",
        "/studio/assets/..%2f..%2fpackage.json",
        "/studio/nope.js",
      ]) {
        const outside = await app.inject({ url });
        expect(outside.statusCode, url).toBe(404);
        expect(outside.json().error.code).toBe("not_found");
      }
    },
  );

  it.skipIf(dir)("says how to build the assets when they are missing", async () => {
    const { app } = await harness.setup();
    const page = await app.inject({ url: "/studio/" });
    expect(page.statusCode).toBe(503);
    expect(page.json().error.code).toBe("studio_not_built");
  });
});
