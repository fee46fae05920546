import { readArtifactText } from "@openrath/runtime-durable";
import { expect } from "vitest";
import { collect } from "./internal/bytes.js";
import { defineGroup } from "./internal/define-group.js";
import { expectArtifactError } from "./internal/expect-artifact-error.js";
import type { ArtifactSuiteContext } from "./suite-context.js";

/**
 * Tenant isolation: no method of one tenant observes or changes another tenant's objects, and
 * the same content in two tenants is two objects with independent lifetimes.
 */
export function tenantsSuite(context: ArtifactSuiteContext): void {
  defineGroup(context, "tenant isolation", (group) => {
    group.test("an object is invisible to every method of another tenant", async () => {
      const store = await group.open();
      const { digest } = await store.put("acme", "acme's secret plan");
      const error = await expectArtifactError(
        () => store.get("initech", digest),
        "artifact_not_found",
        "get of acme's digest as initech",
      );
      expect(error.details).toMatchObject({ tenant: "initech", digest });
      expect(await store.stat("initech", digest)).toBeUndefined();
      expect(await collect(store.list({ tenant: "initech" }))).toEqual([]);
      expect(await store.delete("initech", digest)).toBe(false);
      expect(await readArtifactText(store, "acme", digest)).toBe("acme's secret plan");
    });

    group.test("the same content in two tenants is two objects", async () => {
      const store = await group.open();
      const a = await store.put("acme", "shared words");
      const b = await store.put("initech", "shared words");
      expect(a.digest).toBe(b.digest);
      expect(a.uri).not.toBe(b.uri);
      expect(await store.delete("acme", a.digest)).toBe(true);
      expect(await store.stat("acme", a.digest)).toBeUndefined();
      expect(await readArtifactText(store, "initech", b.digest)).toBe("shared words");
      const all = await collect(store.list());
      expect(all.map((s) => `${s.tenant}/${s.digest}`)).toEqual([`initech/${b.digest}`]);
    });

    group.test("tenant ids differing only in case are different tenants", async () => {
      const store = await group.open();
      const { digest } = await store.put("Acme", "case matters");
      expect(await store.stat("acme", digest)).toBeUndefined();
      expect((await store.stat("Acme", digest))?.size).toBe(12);
    });
  });
}
