import type { CreateWebhookInput, RunStoreV1, WebhooksV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { expectOpenRathError } from "../internal/expect-error.js";
import { claimOne, registeredPlan, sleep, submit } from "./fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** The store's webhooks; fails the test when the store claims the capability without them. */
function webhooksOf(store: RunStoreV1): WebhooksV1 {
  expect(store.capabilities.webhooks, "capabilities.webhooks").toBe(true);
  const webhooks = store.webhooks;
  if (!webhooks) throw new Error("the store claims capabilities.webhooks but has no `webhooks` member");
  expect(webhooks.specVersion).toBe("v1");
  return webhooks;
}

const hook = (tenantId: string, overrides: Partial<CreateWebhookInput> = {}): CreateWebhookInput => ({
  tenantId,
  url: "http://127.0.0.1:9/hooks",
  secret: "whsec_suite_secret_0123456789",
  events: ["run.ended", "run.parked"],
  ...overrides,
});

/** Webhook endpoints and the outbox written with the run changes it reports (`capabilities.webhooks`). */
export function webhooksSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "webhooks", "store", (group) => {
    group.test(
      "a webhook is created, read, listed and deleted in its tenant only; its secret is never given back; a URL that is not http(s) is invalid_argument",
      async () => {
        const store = group.track(await context.create());
        const webhooks = webhooksOf(store);
        const created = await webhooks.createWebhook(
          hook("tenant-a", { projectId: "alpha", events: ["run.ended"] }),
        );
        expect(created).toEqual({
          id: expect.any(String),
          tenantId: "tenant-a",
          projectId: "alpha",
          url: "http://127.0.0.1:9/hooks",
          events: ["run.ended"],
          enabled: true,
          createdAt: expect.any(Number),
        });
        expect(await webhooks.getWebhook("tenant-a", created.id)).toEqual(created);
        expect(await webhooks.getWebhook("tenant-b", created.id)).toBeUndefined();
        expect(await webhooks.listWebhooks("tenant-a")).toEqual([created]);
        expect(await webhooks.listWebhooks("tenant-b")).toEqual([]);
        expect(JSON.stringify(await webhooks.listWebhooks("tenant-a"))).not.toContain("whsec_suite_secret");
        for (const bad of [
          hook("tenant-a", { url: "ftp://127.0.0.1/x" }),
          hook("tenant-a", { url: "not a url" }),
          hook("tenant-a", { secret: "short" }),
          hook("tenant-a", { events: [] }),
          hook("tenant-a", { events: ["run.started" as never] }),
        ])
          await expectOpenRathError(
            () => webhooks.createWebhook(bad),
            "invalid_argument",
            JSON.stringify(bad),
          );
        expect(await webhooks.deleteWebhook("tenant-b", created.id)).toBe(false);
        expect(await webhooks.deleteWebhook("tenant-a", created.id)).toBe(true);
        expect(await webhooks.listWebhooks("tenant-a")).toEqual([]);
      },
    );

    group.test(
      "a run that ends or parks has its deliveries written with the change, for the webhooks of its tenant and project that ask for the event; none for other tenants",
      async () => {
        const store = group.track(await context.create());
        const webhooks = webhooksOf(store);
        const plan = await registeredPlan(store);
        const all = await webhooks.createWebhook(hook("tenant-a"));
        const endedOnly = await webhooks.createWebhook(hook("tenant-a", { events: ["run.ended"] }));
        const otherProject = await webhooks.createWebhook(hook("tenant-a", { projectId: "beta" }));
        const otherTenant = await webhooks.createWebhook(hook("tenant-b"));

        const first = await submit(store, plan, { projectId: "alpha" });
        const claim = await claimOne(store, plan);
        await store.park(claim.fence, { status: "waiting", reason: "asks a human" });
        // Written in the park's transaction: there as soon as the park has returned.
        const parked = await webhooks.listDeliveries({ tenantId: "tenant-a", runId: first.run.id });
        expect(parked.items.map((d) => [d.webhookId, d.event, d.status, d.attempts])).toEqual([
          [all.id, "run.parked", "pending", 0],
        ]);
        expect(parked.items[0]!.payload).toMatchObject({
          runId: first.run.id,
          status: "waiting",
          previousStatus: "running",
          workflow: plan.name,
          projectId: "alpha",
        });

        await store.cancel(first.run.id, { reason: "no longer needed" });
        const ended = await webhooks.listDeliveries({ tenantId: "tenant-a", runId: first.run.id });
        // The park's delivery first; the two of the end in either order.
        expect(ended.items[0]).toMatchObject({ webhookId: all.id, event: "run.parked" });
        expect(
          ended.items
            .slice(1)
            .map((d) => `${d.webhookId} ${d.event}`)
            .sort(),
        ).toEqual([`${all.id} run.ended`, `${endedOnly.id} run.ended`].sort());
        expect(ended.items.find((d) => d.event === "run.ended")!.payload).toMatchObject({
          status: "cancelled",
        });
        expect(
          ended.items.some((d) => d.webhookId === otherProject.id || d.webhookId === otherTenant.id),
        ).toBe(false);

        // A run of another tenant: delivered to that tenant's webhook only.
        const theirs = await submit(store, plan, { tenantId: "tenant-b" });
        await store.cancel(theirs.run.id);
        expect(
          (await webhooks.listDeliveries({ tenantId: "tenant-b" })).items.map((d) => d.webhookId),
        ).toEqual([otherTenant.id]);
        expect((await webhooks.listDeliveries({ tenantId: "tenant-a", runId: theirs.run.id })).items).toEqual(
          [],
        );
      },
    );

    group.test("a refused change (a stale fence) writes no delivery", async () => {
      const store = group.track(await context.create());
      const webhooks = webhooksOf(store);
      const plan = await registeredPlan(store);
      await webhooks.createWebhook(hook("tenant-a"));
      const { run } = await submit(store, plan);
      const claim = await claimOne(store, plan);
      await store.release(claim.fence);
      await expectOpenRathError(
        () => store.finish(claim.fence, { status: "succeeded" }),
        "stale_fence",
        "finish",
      );
      expect((await webhooks.listDeliveries({ tenantId: "tenant-a", runId: run.id })).items).toEqual([]);
    });

    group.test(
      "due deliveries are taken once (hidden for the lease), and each attempt is recorded: retried later, failed for good, or delivered",
      async () => {
        const store = group.track(await context.create());
        const peer =
          context.peer && context.capabilities.multiProcess ? group.track(await context.peer()) : store;
        const webhooks = webhooksOf(store);
        const plan = await registeredPlan(store);
        const endpoint = await webhooks.createWebhook(hook("tenant-a", { events: ["run.ended"] }));
        for (let i = 0; i < 6; i++) await store.cancel((await submit(store, plan)).run.id);
        const takes = await Promise.all([webhooks.takeDue(4, 60_000), webhooksOf(peer).takeDue(4, 60_000)]);
        const taken = takes.flat();
        expect(taken).toHaveLength(6);
        expect(new Set(taken.map((t) => t.delivery.id)).size).toBe(6);
        expect(taken[0]).toMatchObject({ url: endpoint.url, secret: "whsec_suite_secret_0123456789" });
        expect(await webhooks.takeDue(10, 60_000)).toEqual([]);

        const [a, b, c] = taken.map((t) => t.delivery.id);
        expect(await webhooks.recordAttempt(a!, { ok: true })).toMatchObject({
          status: "delivered",
          attempts: 1,
          lastError: null,
          deliveredAt: expect.any(Number),
        });
        expect(
          await webhooks.recordAttempt(b!, { ok: false, error: "HTTP 500", retryInMs: 50 }),
        ).toMatchObject({
          status: "pending",
          attempts: 1,
          lastError: "HTTP 500",
        });
        expect(await webhooks.recordAttempt(c!, { ok: false, error: "HTTP 410" })).toMatchObject({
          status: "failed",
          attempts: 1,
        });
        // A delivered or failed delivery takes no further attempt.
        expect(await webhooks.recordAttempt(a!, { ok: false, error: "late" })).toBeUndefined();
        await sleep(100);
        expect((await webhooks.takeDue(10, 60_000)).map((t) => t.delivery.id)).toEqual([b]);
        const failed = await webhooks.listDeliveries({ tenantId: "tenant-a", status: "failed" });
        expect(failed.items.map((d) => d.id)).toEqual([c]);
        const paged = await webhooks.listDeliveries({ tenantId: "tenant-a", limit: 4 });
        const rest = await webhooks.listDeliveries({
          tenantId: "tenant-a",
          limit: 4,
          cursor: paged.nextCursor!,
        });
        expect([...paged.items, ...rest.items]).toHaveLength(6);
        expect(rest.nextCursor).toBeNull();
        // Deleting the webhook deletes its deliveries.
        await webhooks.deleteWebhook("tenant-a", endpoint.id);
        expect((await webhooks.listDeliveries({ tenantId: "tenant-a" })).items).toEqual([]);
      },
    );
  });
}
