import { compilePlan, defineWorkflow } from "@openrath/runtime-durable";
import type { DeploymentsV1, RunStoreV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { expectOpenRathError } from "../internal/expect-error.js";
import type { StoreSuiteContext } from "./suite-context.js";

let counter = 0;

/** Revision `version` of a one-step workflow `name` whose step is called `step` (another step, another plan). */
function revision(name: string, version: string, step = "only") {
  return compilePlan(
    defineWorkflow(name, { version }).step(step, (s) => s.append({ kind: "assistant", content: version }), {
      entry: true,
    }),
  );
}

/** Workflow names resolved through the store (`capabilities.deployments`). */
export function deploymentsSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "deployments", "store", (group) => {
    const open = async (): Promise<{ store: RunStoreV1; deployments: DeploymentsV1 }> => {
      const store = group.track(await context.create());
      expect(store.deployments?.specVersion).toBe("v1");
      return { store, deployments: store.deployments! };
    };

    group.test(
      "another plan under a name and version already registered is plan_conflict, and nothing of it is stored",
      async () => {
        const { store } = await open();
        const name = `dep-${++counter}`;
        const first = revision(name, "1");
        const changed = revision(name, "1", "renamed");
        expect(changed.hash).not.toBe(first.hash);
        await store.registerPlan(first.record);
        await expectOpenRathError(
          () => store.registerPlan(changed.record),
          "plan_conflict",
          "same name and version",
        );
        expect(await store.getPlan(changed.hash)).toBeUndefined();
        // The same plan again is fine; a new version is a new revision.
        await store.registerPlan(first.record);
        await store.registerPlan(revision(name, "2", "renamed").record);
      },
    );

    group.test(
      "a name points at one revision: deploy moves it, current and revisions report it",
      async () => {
        const { store, deployments } = await open();
        const name = `dep-${++counter}`;
        const v1 = revision(name, "1");
        const v2 = revision(name, "2");
        expect(await deployments.current(name)).toBeUndefined();
        await store.registerPlan(v1.record);
        await store.registerPlan(v2.record);
        const first = await deployments.deploy(v1.hash);
        expect(first).toMatchObject({
          moved: true,
          deployment: { name, hash: v1.hash, version: "1", previous: null },
        });
        const second = await deployments.deploy(v2.hash);
        expect(second).toMatchObject({
          moved: true,
          deployment: { hash: v2.hash, version: "2", previous: v1.hash },
        });
        expect(await deployments.deploy(v2.hash)).toMatchObject({
          moved: false,
          deployment: { hash: v2.hash },
        });
        expect(await deployments.current(name)).toMatchObject({ hash: v2.hash, previous: v1.hash });
        const revisions = await deployments.revisions(name);
        expect(revisions.map((r) => [r.version, r.deployed])).toEqual([
          ["2", true],
          ["1", false],
        ]);
        // A rollback is a deploy of the older revision.
        expect(await deployments.deploy(v1.hash)).toMatchObject({
          moved: true,
          deployment: { hash: v1.hash },
        });
        expect(await deployments.revisions(`dep-none-${counter}`)).toEqual([]);
      },
    );

    group.test("ifNewer does not move a name back to an older revision", async () => {
      const { store, deployments } = await open();
      const name = `dep-${++counter}`;
      const v1 = revision(name, "1");
      const v2 = revision(name, "2");
      await store.registerPlan(v1.record);
      await new Promise((r) => setTimeout(r, 5));
      await store.registerPlan(v2.record);
      expect(await deployments.deploy(v1.hash, { ifNewer: true })).toMatchObject({ moved: true });
      expect(await deployments.deploy(v2.hash, { ifNewer: true })).toMatchObject({ moved: true });
      expect(await deployments.deploy(v1.hash, { ifNewer: true })).toMatchObject({
        moved: false,
        deployment: { hash: v2.hash },
      });
    });

    group.test("deploying a plan never registered is unknown_plan", async () => {
      const { deployments } = await open();
      await expectOpenRathError(() => deployments.deploy("f".repeat(64)), "unknown_plan", "deploy(unknown)");
    });
  });
}
