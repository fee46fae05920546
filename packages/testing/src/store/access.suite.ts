import type { AuditInput, RunStoreV1 } from "@openrath/runtime-durable/store";
import { expect } from "vitest";
import { describeGroup } from "../internal/describe-group.js";
import { expectOpenRathError } from "../internal/expect-error.js";
import { accessOf, auditInput, auditLog, secretHash, tokenInput } from "./access-fixtures.js";
import { sleep } from "./fixtures.js";
import type { StoreSuiteContext } from "./suite-context.js";

/** API tokens by their secret's hash and the append-only audit log (`capabilities.access`). */
export function accessSuite(context: StoreSuiteContext): void {
  describeGroup<RunStoreV1>(context, "access", "store", (group) => {
    group.test(
      "a token is stored by its secret's hash with its tenant, project, grants and expiry, found by the hash, listed newest first per tenant",
      async () => {
        const store = group.track(await context.create());
        const access = accessOf(store);
        const before = await store.now();
        const expiresAt = before + 3_600_000;
        const first = await access.createToken(
          tokenInput("tenant-a", { projectId: "alpha", name: "studio", grants: ["*"], expiresAt }),
        );
        expect(first).toEqual({
          id: expect.any(String),
          tenantId: "tenant-a",
          projectId: "alpha",
          name: "studio",
          grants: ["*"],
          createdAt: expect.any(Number),
          expiresAt,
          revokedAt: null,
        });
        expect(Math.abs(first.createdAt - before)).toBeLessThan(5_000);
        await sleep(5);
        const hash = secretHash();
        const second = await access.createToken(tokenInput("tenant-a", { secretHash: hash }));
        expect(second).toMatchObject({
          projectId: null,
          expiresAt: null,
          grants: ["run.read", "run.create"],
        });
        await access.createToken(tokenInput("tenant-b"));

        expect(await access.findToken(hash)).toEqual(second);
        expect(await access.findToken(secretHash())).toBeUndefined();
        expect((await access.listTokens("tenant-a")).map((t) => t.id)).toEqual([second.id, first.id]);
        expect(await access.listTokens("tenant-c")).toEqual([]);
        // The hash is never given back.
        expect(JSON.stringify(await access.listTokens("tenant-a"))).not.toContain(hash);
      },
    );

    group.test(
      "a second token with a stored secret hash is idempotency_conflict, and neither it nor its audit record is stored",
      async () => {
        const store = group.track(await context.create());
        const access = accessOf(store);
        const hash = secretHash();
        await access.createToken(tokenInput("tenant-a", { secretHash: hash }));
        await expectOpenRathError(
          () =>
            access.createToken(
              tokenInput("tenant-b", {
                secretHash: hash,
                audit: auditInput("token.create", "token", "tenant-b"),
              }),
            ),
          "idempotency_conflict",
          "createToken(a stored hash)",
        );
        expect(await access.listTokens("tenant-b")).toEqual([]);
        expect(await auditLog(access, "tenant-b")).toEqual([]);
      },
    );

    group.test(
      "revoking is idempotent (the first time is kept), writes its audit record once, and another tenant's token is undefined",
      async () => {
        const store = group.track(await context.create());
        const access = accessOf(store);
        const hash = secretHash();
        const token = await access.createToken(
          tokenInput("tenant-a", { secretHash: hash, audit: auditInput("token.create", "token") }),
        );
        const created = await auditLog(access);
        expect(created).toMatchObject([
          { action: "token.create", resourceKind: "token", resourceId: token.id },
        ]);

        expect(
          await access.revokeToken("tenant-b", token.id, auditInput("token.revoke", "token", "tenant-b")),
        ).toBe(undefined);
        expect(await access.revokeToken("tenant-a", "no-such-token")).toBeUndefined();
        expect((await access.listTokens("tenant-a"))[0]!.revokedAt).toBeNull();

        const revoked = await access.revokeToken("tenant-a", token.id, auditInput("token.revoke", "token"));
        expect(revoked).toMatchObject({ id: token.id, revokedAt: expect.any(Number) });
        await sleep(5);
        const again = await access.revokeToken("tenant-a", token.id, auditInput("token.revoke", "token"));
        expect(again).toEqual(revoked);
        // Revoked and expired tokens are still found, so a caller can say why they are refused.
        expect(await access.findToken(hash)).toEqual(revoked);
        expect((await access.listTokens("tenant-a"))[0]).toEqual(revoked);
        const log = await auditLog(access);
        expect(log.map((r) => [r.action, r.resourceId])).toEqual([
          ["token.create", token.id],
          ["token.revoke", token.id],
        ]);
        expect(await auditLog(access, "tenant-b")).toEqual([]);
      },
    );

    group.test(
      "audit records are appended as given, with the database time and increasing ids, and listed oldest first per tenant",
      async () => {
        const store = group.track(await context.create());
        const access = accessOf(store);
        const before = await store.now();
        await access.appendAudit([
          auditInput("run.create", "run", "tenant-a", {
            outcome: "denied",
            reason: "missing_grant",
            resourceId: null,
            attributes: { grant: "run.create", nested: { n: 1 } },
          }),
          auditInput("auth", "token", "-", {
            actor: "anonymous",
            outcome: "failed",
            reason: "token_expired",
          }),
        ]);
        await access.appendAudit([]);
        await access.appendAudit([auditInput("run.read", "run", "tenant-a", { resourceId: "r-1" })]);
        const log = await auditLog(access);
        expect(log).toEqual([
          {
            id: expect.any(Number),
            at: expect.any(Number),
            tenantId: "tenant-a",
            actor: "token:ana",
            action: "run.create",
            outcome: "denied",
            resourceKind: "run",
            resourceId: null,
            reason: "missing_grant",
            requestId: expect.any(String),
            attributes: { grant: "run.create", nested: { n: 1 } },
          },
          expect.objectContaining({ action: "run.read", resourceId: "r-1", reason: null, attributes: {} }),
        ]);
        expect(log[1]!.id).toBeGreaterThan(log[0]!.id);
        expect(Math.abs(log[0]!.at - before)).toBeLessThan(5_000);
        expect(await auditLog(access, "-")).toMatchObject([{ actor: "anonymous", outcome: "failed" }]);
      },
    );

    group.test(
      "the audit log is keyset-paged (limit 1..500, default 100) and filtered by action and outcome",
      async () => {
        const store = group.track(await context.create());
        const access = accessOf(store);
        const records: AuditInput[] = Array.from({ length: 105 }, (_, i) =>
          auditInput(i % 3 === 0 ? "run.cancel" : "run.read", "run", "tenant-a", {
            outcome: i % 5 === 0 ? "denied" : "allowed",
            resourceId: `r-${i}`,
          }),
        );
        await access.appendAudit(records);
        await access.appendAudit([auditInput("run.read", "run", "tenant-b")]);

        const first = await access.listAudit({ tenantId: "tenant-a" });
        expect(first.items).toHaveLength(100);
        expect(first.nextCursor).not.toBeNull();
        const rest = await access.listAudit({ tenantId: "tenant-a", cursor: first.nextCursor! });
        expect(rest).toMatchObject({ nextCursor: null });
        expect([...first.items, ...rest.items].map((r) => r.resourceId)).toEqual(
          records.map((r) => r.resourceId),
        );

        const pages: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await access.listAudit({
            tenantId: "tenant-a",
            action: "run.cancel",
            limit: 10,
            ...(cursor ? { cursor } : {}),
          });
          pages.push(...page.items.map((r) => r.resourceId!));
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        expect(pages).toEqual(records.filter((r) => r.action === "run.cancel").map((r) => r.resourceId));
        const denied = await access.listAudit({ tenantId: "tenant-a", outcome: "denied", limit: 500 });
        expect(denied.items.map((r) => r.resourceId)).toEqual(
          records.filter((r) => r.outcome === "denied").map((r) => r.resourceId),
        );
        for (const limit of [0, 501, 1.5])
          await expectOpenRathError(
            () => access.listAudit({ tenantId: "tenant-a", limit }),
            "invalid_argument",
            `listAudit(limit ${limit})`,
          );
        await expectOpenRathError(
          () => access.listAudit({ tenantId: "tenant-a", cursor: "not a cursor" }),
          "invalid_argument",
          "listAudit(a forged cursor)",
        );
        await expectOpenRathError(
          () => access.listAudit({ tenantId: "tenant-a", outcome: "maybe" as never }),
          "invalid_argument",
          "listAudit(an unknown outcome)",
        );
      },
    );

    group.test(
      "malformed audit records and tokens are invalid_argument, and nothing of the call is written",
      async () => {
        const store = group.track(await context.create());
        const access = accessOf(store);
        const good = auditInput("run.read", "run");
        const bad: [string, AuditInput][] = [
          ["an empty actor", { ...good, actor: "" }],
          ["an unknown outcome", { ...good, outcome: "maybe" as never }],
          ["a long action", { ...good, action: "a".repeat(1000) }],
          ["attributes that are an array", { ...good, attributes: [] as never }],
          ["attributes over 16 KiB", { ...good, attributes: { text: "x".repeat(17 * 1024) } }],
          ["no tenant", { ...good, tenantId: undefined as never }],
        ];
        for (const [what, record] of bad) {
          await expectOpenRathError(() => access.appendAudit([good, record]), "invalid_argument", what);
          await expectOpenRathError(
            () => access.createToken(tokenInput("tenant-a", { audit: record })),
            "invalid_argument",
            `createToken with ${what}`,
          );
        }
        for (const [what, token] of [
          ["a hash that is not SHA-256 hex", tokenInput("tenant-a", { secretHash: "secret" })],
          ["no name", tokenInput("tenant-a", { name: "" })],
          ["grants that are not strings", tokenInput("tenant-a", { grants: [1] as never })],
        ] as const) {
          await expectOpenRathError(
            () => access.createToken(token),
            "invalid_argument",
            `createToken with ${what}`,
          );
        }
        expect(await auditLog(access)).toEqual([]);
        expect(await access.listTokens("tenant-a")).toEqual([]);
      },
    );
  });
}
