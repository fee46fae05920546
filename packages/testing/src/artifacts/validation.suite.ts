import { expect } from "vitest";
import { collect, pseudoRandomBytes, sha256Hex } from "./internal/bytes.js";
import { defineGroup } from "./internal/define-group.js";
import { expectArtifactError } from "./internal/expect-artifact-error.js";
import type { ArtifactSuiteContext } from "./suite-context.js";

/** Tenant ids that must never become a path segment or a key prefix. */
const BAD_TENANTS: unknown[] = [
  "",
  "..",
  ".",
  "../other",
  "a/b",
  "a\\b",
  ".staging",
  "-leading-dash",
  "x".repeat(129),
  "nul\u0000byte",
  "é",
  " acme",
  42,
  undefined,
];

/** Strings that are not a lower-case hexadecimal SHA-256. */
const BAD_DIGESTS: unknown[] = [
  "",
  "abc",
  "A".repeat(64),
  "0".repeat(63),
  "0".repeat(65),
  `../${"0".repeat(61)}`,
  `${"0".repeat(62)}/x`,
  "g".repeat(64),
  null,
];

/**
 * Validation: a declared digest or size that does not match the content is refused and stores
 * nothing; hostile tenant ids and malformed digests are refused by every method with a coded
 * error; a body of the wrong type is `invalid_argument`.
 */
export function validationSuite(context: ArtifactSuiteContext): void {
  defineGroup(context, "validation", (group) => {
    group.test(
      "a declared digest that does not match the content is refused and nothing is stored",
      async () => {
        const store = await group.open();
        const bytes = pseudoRandomBytes(10_000, 31);
        const wrong = sha256Hex("something else");
        const error = await expectArtifactError(
          () => store.put("acme", bytes, { digest: wrong }),
          "artifact_digest_mismatch",
          "put with a wrong declared digest",
        );
        expect(error.details).toMatchObject({
          tenant: "acme",
          digest: wrong,
          actualDigest: sha256Hex(bytes),
        });
        expect(await store.stat("acme", sha256Hex(bytes))).toBeUndefined();
        expect(await store.stat("acme", wrong)).toBeUndefined();
        expect(await collect(store.list())).toEqual([]);
      },
    );

    group.test(
      "a declared size that does not match the content is refused and nothing is stored",
      async () => {
        const store = await group.open();
        const bytes = pseudoRandomBytes(10_000, 32);
        for (const size of [9_999, 10_001, 0]) {
          await expectArtifactError(
            () => store.put("acme", bytes, { size }),
            "artifact_digest_mismatch",
            `put of 10000 bytes declaring ${size}`,
          );
        }
        await expectArtifactError(
          () => store.put("acme", bytes, { size: -1 }),
          "invalid_argument",
          "put declaring size -1",
        );
        expect(await collect(store.list())).toEqual([]);
      },
    );

    group.test("hostile or malformed tenant ids are refused by every method", async () => {
      const store = await group.open();
      const digest = sha256Hex("x");
      for (const tenant of BAD_TENANTS) {
        const t = tenant as string;
        const shown = JSON.stringify(tenant) ?? String(tenant);
        await expectArtifactError(() => store.put(t, "x"), "invalid_tenant", `put(${shown})`);
        await expectArtifactError(() => store.get(t, digest), "invalid_tenant", `get(${shown})`);
        await expectArtifactError(() => store.stat(t, digest), "invalid_tenant", `stat(${shown})`);
        await expectArtifactError(() => store.delete(t, digest), "invalid_tenant", `delete(${shown})`);
        // list({ tenant: undefined }) lists every tenant, so it is not a bad tenant there.
        if (tenant !== undefined) {
          await expectArtifactError(
            () => collect(store.list({ tenant: t })),
            "invalid_tenant",
            `list(${shown})`,
          );
        }
      }
      expect(await collect(store.list())).toEqual([]);
    });

    group.test("malformed digests are refused by every method", async () => {
      const store = await group.open();
      await store.put("acme", "kept");
      for (const digest of BAD_DIGESTS) {
        const d = digest as string;
        const shown = JSON.stringify(digest);
        await expectArtifactError(() => store.get("acme", d), "invalid_digest", `get(${shown})`);
        await expectArtifactError(() => store.stat("acme", d), "invalid_digest", `stat(${shown})`);
        await expectArtifactError(() => store.delete("acme", d), "invalid_digest", `delete(${shown})`);
        await expectArtifactError(
          () => store.put("acme", "x", { digest: d }),
          "invalid_digest",
          `put(…, { digest: ${shown} })`,
        );
      }
      expect(await collect(store.list())).toHaveLength(1);
    });

    group.test("a body of the wrong type is invalid_argument", async () => {
      const store = await group.open();
      for (const [what, body] of [
        ["a number", 42],
        ["null", null],
        ["a plain object", { text: "x" }],
        [
          "an iterable yielding a number",
          (async function* () {
            yield 7;
          })(),
        ],
      ] as const) {
        await expectArtifactError(
          () => store.put("acme", body as never),
          "invalid_argument",
          `put of ${what}`,
        );
      }
      expect(await collect(store.list())).toEqual([]);
    });
  });
}
