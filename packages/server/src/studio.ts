import { readFile, realpath } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, extname, join, sep } from "node:path";
import type { FastifyPluginAsync } from "fastify";

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".woff2": "font/woff2",
};

/**
 * Where Studio's built assets are: the `dist` directory of the `@openrath/studio` package this
 * server depends on, or `undefined` when it is not installed or not built.
 */
export async function studioAssetsDir(): Promise<string | undefined> {
  try {
    const manifest = createRequire(import.meta.url).resolve("@openrath/studio/package.json");
    const dir = await realpath(join(dirname(manifest), "dist"));
    await readFile(join(dir, "index.html"));
    return dir;
  } catch {
    return undefined;
  }
}

/**
 * Serves Studio (the browser UI, `@openrath/studio`) under `/studio/`: its static assets, read
 * from the package's `dist`, with no credentials needed (the page asks for a token and sends it
 * only to this server's API). Hashed assets are cached for a year; the page is revalidated.
 * When the assets are missing (a source checkout before `pnpm build`) `/studio/` says so with a
 * 503 and the code `studio_not_built`.
 */
export const studioRoutes: FastifyPluginAsync = async (app) => {
  let root = await studioAssetsDir();

  app.get("/studio", { schema: { hide: true } }, async (_request, reply) => reply.redirect("/studio/", 302));
  app.get("/studio/*", { schema: { hide: true } }, async (request, reply) => {
    // Looked up again while missing, so a build after the server started is picked up.
    root ??= await studioAssetsDir();
    if (!root) {
      reply.status(503);
      return {
        error: {
          code: "studio_not_built",
          message:
            "Studio's assets are not built: run `pnpm --filter @openrath/studio build` (or `pnpm build`).",
          requestId: request.id,
        },
      };
    }
    const wanted = (request.params as { "*": string })["*"] || "index.html";
    let file: string;
    try {
      file = await realpath(join(root, decodeURIComponent(wanted)));
    } catch {
      file = "";
    }
    // Only files inside the assets directory; anything else (a missing file, `..`) is not found.
    if (!file.startsWith(root + sep)) {
      reply.status(404);
      return { error: { code: "not_found", message: `No Studio asset ${wanted}.`, requestId: request.id } };
    }
    const body = await readFile(file);
    reply.header("Content-Type", TYPES[extname(file)] ?? "application/octet-stream");
    reply.header(
      "Cache-Control",
      file.startsWith(join(root, "assets") + sep) ? "public, max-age=31536000, immutable" : "no-cache",
    );
    return reply.send(body);
  });
};
