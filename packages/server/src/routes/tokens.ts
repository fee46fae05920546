import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { hashTokenSecret, newTokenSecret } from "../auth.js";
import { auditOf, principalOf, type ServerContext } from "../context.js";
import { ApiError, ErrorEnvelope, notFound } from "../errors.js";
import { allows, unknownGrants } from "../grants.js";
import { Token, tokenOut } from "../schemas.js";

const errors = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  501: ErrorEnvelope,
};

const CreateToken = z
  .object({
    name: z.string().min(1).max(200),
    grants: z.array(z.string().min(1).max(64)).min(1).max(64),
    projectId: z.string().min(1).max(128).optional(),
    expiresInSeconds: z
      .number()
      .int()
      .min(60)
      .max(10 * 365 * 86_400)
      .optional(),
  })
  .strict()
  .meta({ id: "CreateToken" });

/**
 * Tokens of the caller's tenant. A token never gets more than its maker has: grants the maker
 * lacks, or another project than the maker's, are refused.
 */
export const tokenRoutes =
  (context: ServerContext): FastifyPluginAsyncZod =>
  async (app) => {
    const access = () => {
      if (!context.access) throw new ApiError(501, "not_supported", "This store keeps no tokens.");
      return context.access;
    };

    app.get(
      "/v1/tokens",
      {
        config: { action: "token.read" },
        schema: { tags: ["tokens"], response: { 200: z.object({ items: z.array(Token) }), ...errors } },
      },
      async (request) => {
        const principal = principalOf(request);
        const tokens = await access().listTokens(principal.tenantId);
        const visible = tokens.filter(
          (token) => principal.projectId === null || token.projectId === principal.projectId,
        );
        return { items: visible.map(tokenOut) };
      },
    );

    app.post(
      "/v1/tokens",
      {
        config: { action: "token.create" },
        schema: {
          tags: ["tokens"],
          summary: "Make a token; its secret is in this response only",
          body: CreateToken,
          response: { 201: z.object({ token: Token, secret: z.string() }), ...errors },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const { name, grants, projectId, expiresInSeconds } = request.body;
        const unknown = unknownGrants(grants);
        if (unknown.length > 0)
          throw new ApiError(400, "invalid_request", `Unknown grants: ${unknown.join(", ")}.`);
        const wider = grants.filter((grant) => !coveredBy(principal.grants, grant));
        if (wider.length > 0)
          throw new ApiError(
            403,
            "forbidden",
            `A token cannot get grants its maker lacks: ${wider.join(", ")}.`,
          );
        if (principal.projectId !== null && projectId !== undefined && projectId !== principal.projectId)
          throw new ApiError(403, "forbidden", "A project's token can only make tokens for its project.");
        const secret = newTokenSecret();
        const token = await access().createToken({
          tenantId: principal.tenantId,
          projectId: projectId ?? principal.projectId,
          name,
          grants,
          expiresAt: expiresInSeconds === undefined ? null : Date.now() + expiresInSeconds * 1000,
          secretHash: hashTokenSecret(secret),
          audit: auditOf(request, "token", null, "allowed", { attributes: { name, grants } }),
        });
        reply.status(201);
        return { token: tokenOut(token), secret };
      },
    );

    app.delete(
      "/v1/tokens/:tokenId",
      {
        config: { action: "token.revoke" },
        schema: {
          tags: ["tokens"],
          params: z.object({ tokenId: z.string().min(1).max(128) }),
          response: { 200: Token, ...errors },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { tokenId } = request.params;
        const existing = (await access().listTokens(principal.tenantId)).find(
          (token) => token.id === tokenId,
        );
        if (!existing || (principal.projectId !== null && existing.projectId !== principal.projectId))
          throw notFound("token", tokenId);
        const token = await access().revokeToken(
          principal.tenantId,
          tokenId,
          auditOf(request, "token", tokenId),
        );
        if (!token) throw notFound("token", tokenId);
        context.tokenCache?.evict(tokenId);
        return tokenOut(token);
      },
    );
  };

/** Whether holding `grants` covers everything `grant` would allow. */
function coveredBy(grants: readonly string[], grant: string): boolean {
  if (grant === "*") return grants.includes("*");
  if (grant.endsWith(".*")) return grants.includes("*") || grants.includes(grant);
  return allows(grants, grant as never);
}
