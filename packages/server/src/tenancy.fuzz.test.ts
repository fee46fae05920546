import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { serverHarness } from "./testing/harness.js";
import { jwtIssuer } from "./testing/jwt-issuer.js";

const harness = serverHarness();
const TENANTS = ["acme", "globex"] as const;
type Tenant = (typeof TENANTS)[number];

/** A request one tenant makes, on an object picked from everything created so far (any tenant's). */
type Step =
  | { kind: "create"; tenant: Tenant; workflow: "echo" | "approval" }
  | { kind: "read" | "cancel" | "events" | "session" | "fork"; tenant: Tenant; pick: number }
  | { kind: "list" | "inbox"; tenant: Tenant }
  | { kind: "decide"; tenant: Tenant; pick: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("create" as const),
    tenant: fc.constantFrom(...TENANTS),
    workflow: fc.constantFrom("echo" as const, "approval" as const),
  }),
  fc.record({
    kind: fc.constantFrom(
      "read" as const,
      "cancel" as const,
      "events" as const,
      "session" as const,
      "fork" as const,
    ),
    tenant: fc.constantFrom(...TENANTS),
    pick: fc.nat(),
  }),
  fc.record({
    kind: fc.constantFrom("list" as const, "inbox" as const),
    tenant: fc.constantFrom(...TENANTS),
  }),
  fc.record({ kind: fc.constant("decide" as const), tenant: fc.constantFrom(...TENANTS), pick: fc.nat() }),
);

describe("tenant isolation under random requests", () => {
  it("never reads or changes another tenant's run or interrupt: each such request is a 404, and lists hold only the caller's", async () => {
    const idp = await jwtIssuer();
    const { app } = await harness.setup({
      auth: { mode: "jwt", jwks: idp.jwks, issuer: idp.issuer, audience: idp.audience },
      rateLimit: false,
    });
    const tokens = Object.fromEntries(
      await Promise.all(TENANTS.map(async (tenant) => [tenant, await idp.sign({ tenant, grants: ["*"] })])),
    ) as Record<Tenant, string>;
    const owner = new Map<string, Tenant>();
    const interrupts = new Map<string, Tenant>();
    const send = (tenant: Tenant, method: "GET" | "POST", url: string, payload?: object) =>
      app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${tokens[tenant]}` },
        ...(payload ? { payload } : {}),
      });

    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        for (const s of steps) {
          const runs = [...owner.keys()];
          if (s.kind === "create") {
            const response = await send(s.tenant, "POST", "/v1/runs", { assistant: s.workflow, input: "x" });
            expect(response.statusCode).toBe(201);
            expect(response.json().tenantId).toBe(s.tenant);
            owner.set(response.json().id, s.tenant);
          } else if (s.kind === "list") {
            const response = await send(s.tenant, "GET", "/v1/runs?limit=200");
            for (const run of response.json().items) expect(owner.get(run.id)).toBe(s.tenant);
          } else if (s.kind === "inbox") {
            const response = await send(s.tenant, "GET", "/v1/interrupts?status=all&limit=200");
            for (const interrupt of response.json().items) {
              expect(owner.get(interrupt.runId)).toBe(s.tenant);
              interrupts.set(interrupt.id, s.tenant);
            }
          } else if (s.kind === "decide") {
            const ids = [...interrupts.keys()];
            if (ids.length === 0) continue;
            const id = ids[s.pick % ids.length] ?? "";
            const response = await send(s.tenant, "POST", `/v1/interrupts/${id}/decision`, {
              kind: "approve",
            });
            if (interrupts.get(id) !== s.tenant) {
              expect(response.statusCode).toBe(404);
              expect(response.json().error.code).toBe("interrupt_not_found");
            } else {
              expect([200, 409]).toContain(response.statusCode);
            }
          } else {
            if (runs.length === 0) continue;
            const id = runs[(s as { pick: number }).pick % runs.length] ?? "";
            const url = {
              read: `/v1/runs/${id}`,
              cancel: `/v1/runs/${id}/cancel`,
              events: `/v1/runs/${id}/events`,
              session: `/v1/runs/${id}/session`,
              fork: "/v1/runs",
            }[s.kind];
            const method = s.kind === "cancel" || s.kind === "fork" ? "POST" : "GET";
            const payload =
              s.kind === "fork"
                ? { assistant: "echo", from: { runId: id }, input: "more" }
                : s.kind === "cancel"
                  ? {}
                  : undefined;
            const response = await send(s.tenant, method, url, payload);
            if (owner.get(id) !== s.tenant) {
              expect(response.statusCode, `${s.kind} of another tenant's run`).toBe(404);
              expect(response.json().error.code).toBe("run_not_found");
            } else {
              expect(response.statusCode, `${s.kind} of its own run: ${response.body}`).toBeLessThan(500);
              if (s.kind === "fork" && response.statusCode === 201) owner.set(response.json().id, s.tenant);
            }
          }
        }
      }),
      { numRuns: 25 },
    );
  }, 180_000);
});
