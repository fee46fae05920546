import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { principalOf } from "../context.js";
import { ErrorEnvelope } from "../errors.js";
import { ACTIONS, allows } from "../grants.js";
import { Whoami, whoamiOut } from "../schemas.js";

/** `GET /v1/auth/whoami`: the presenting credentials' own scope, grants and expiry. */
export const whoamiRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    "/v1/auth/whoami",
    {
      config: { action: "self.read" },
      schema: {
        tags: ["auth"],
        summary: "The tenant, project, grants and expiry of the credentials presented",
        description:
          "Needs no grant: any token or JWT that authenticates may read its own scope (never a secret). Not audited, like the other reads; a failed authentication is, as on every route.",
        response: { 200: Whoami, 401: ErrorEnvelope },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return whoamiOut(
        principal,
        ACTIONS.filter((action) => allows(principal.grants, action)),
      );
    },
  );
};
