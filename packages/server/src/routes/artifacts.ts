import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { principalOf, type ServerContext } from "../context.js";
import { ApiError, ErrorEnvelope, notFound } from "../errors.js";

/** Artifacts (large payloads runs offloaded) by digest, streamed and verified as they flow. */
export const artifactRoutes =
  (context: ServerContext): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      "/v1/artifacts/:digest",
      {
        config: { action: "artifact.read" },
        schema: {
          tags: ["artifacts"],
          summary: "Download an artifact of the caller's tenant by its SHA-256",
          description:
            "Streamed; the store checks the digest while the bytes flow and cuts the response if they do not match.",
          params: z.object({ digest: z.string().regex(/^[0-9a-f]{64}$/, "a lower-case SHA-256 digest") }),
          response: {
            200: z.string().describe("application/octet-stream"),
            400: ErrorEnvelope,
            401: ErrorEnvelope,
            403: ErrorEnvelope,
            404: ErrorEnvelope,
            501: ErrorEnvelope,
          },
        },
      },
      async (request, reply) => {
        const artifacts = context.artifacts;
        if (!artifacts) throw new ApiError(501, "not_supported", "This server has no artifact store.");
        const { tenantId } = principalOf(request);
        const { digest } = request.params;
        const stat = await artifacts.stat(tenantId, digest);
        if (!stat) throw notFound("artifact", digest, "artifact_not_found");
        const body = await artifacts.get(tenantId, digest);
        reply.header("Content-Type", "application/octet-stream");
        reply.header("Content-Length", String(stat.size));
        reply.header("ETag", `"${digest}"`);
        return reply.send(body as never);
      },
    );
  };
