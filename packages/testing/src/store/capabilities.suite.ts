import type { RunStoreV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { registeredPlan, submit } from "./fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** The descriptor's shape, the database clock, and every capability the backend claims. */
export function capabilitiesSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "capabilities", "store", (group) => {
    group.test("declares specVersion v1, a name, capabilities and signals", async () => {
      const store = group.track(await context.create());
      expect(store.specVersion).toBe("v1");
      expect(typeof store.name).toBe("string");
      expect(store.capabilities).toEqual(context.capabilities);
      expect(store.signals.specVersion).toBe("v1");
      for (const key of [
        "multiProcess",
        "notifiesOnCommit",
        "databaseClock",
        "retention",
        "tenantLimits",
      ] as const) {
        expect(typeof store.capabilities[key], key).toBe("boolean");
      }
    });

    group.test(
      "a capability that names a member is true exactly when the member is there (journal, deployments, access, schedules, webhooks, messageQueue, stats, groupCommit, newSessionSubmit, claimOnSubmit)",
      async () => {
        const store = group.track(await context.create());
        const methods = {
          journal: ["openStep", "record", "beginEffect", "decideInterrupt"],
          deployments: ["deploy", "current", "revisions"],
          access: ["createToken", "findToken", "listTokens", "revokeToken", "appendAudit", "listAudit"],
          schedules: ["create", "get", "list", "update", "delete", "fireDue", "nextDue"],
          messageQueue: ["enqueue", "get", "takeReady", "complete", "release"],
          stats: ["read"],
          webhooks: [
            "createWebhook",
            "getWebhook",
            "listWebhooks",
            "deleteWebhook",
            "listDeliveries",
            "takeDue",
            "recordAttempt",
          ],
          groupCommit: ["commitSteps"],
          newSessionSubmit: ["submitIfNew"],
          claimOnSubmit: ["submit"],
        } as const;
        for (const [key, names] of Object.entries(methods) as [keyof typeof methods, readonly string[]][]) {
          const declared = store.capabilities[key] === true;
          const member = store[key] as Record<string, unknown> | undefined;
          expect(member !== undefined, `store.${key} is there exactly when capabilities.${key} is true`).toBe(
            declared,
          );
          if (!declared) continue;
          expect(member!.specVersion, `store.${key}.specVersion`).toBe("v1");
          for (const name of names) expect(member![name], `store.${key}.${name}`).toBeTypeOf("function");
        }
        // claimOnSubmit.submitIfNew comes with the newSessionSubmit fast path, and only with it.
        if (store.capabilities.claimOnSubmit)
          expect(typeof store.claimOnSubmit!.submitIfNew === "function").toBe(
            store.capabilities.newSessionSubmit === true,
          );
      },
    );

    group.test("now() is the database's clock, close to this machine's", async () => {
      const store = group.track(await context.create());
      const before = Date.now();
      const now = await store.now();
      expect(Math.abs(now - before)).toBeLessThan(5_000);
    });

    if (context.capabilities.notifiesOnCommit) {
      group.test("a submission wakes work subscribers without polling (notifiesOnCommit)", async () => {
        const store = group.track(await context.create());
        const plan = await registeredPlan(store);
        let woke!: (signal: unknown) => void;
        const woken = new Promise<unknown>((resolve) => {
          woke = resolve;
        });
        await store.signals.subscribe("work", (signal) => woke(signal));
        await submit(store, plan);
        const signal = await Promise.race([
          woken,
          new Promise((r) => setTimeout(() => r("timeout"), 10_000)),
        ]);
        expect(signal).toEqual({ kind: "work", planHash: plan.hash });
      });
    } else
      group.skip(
        "a submission wakes work subscribers without polling (notifiesOnCommit)",
        "the store does not notify on commit",
      );

    group.test("close() is idempotent and later calls fail with store_unavailable", async () => {
      const store = await context.create();
      await store.close();
      await store.close();
      await expect(store.now()).rejects.toMatchObject({ code: "store_unavailable" });
    });
  });
}
