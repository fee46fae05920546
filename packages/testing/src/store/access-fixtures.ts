import { createHash, randomBytes } from "node:crypto";
import type {
  AccessStoreV1,
  AuditInput,
  AuditRecord,
  CreateTokenInput,
  RunStoreV1,
} from "@openrath/runtime-durable/store";
import { expect } from "vitest";

/** The store's access members; fails the test when the store claims the capability without them. */
export function accessOf(store: RunStoreV1): AccessStoreV1 {
  expect(store.capabilities.access, "capabilities.access").toBe(true);
  const access = store.access;
  if (!access) throw new Error("the store claims capabilities.access but has no `access` member");
  expect(access.specVersion).toBe("v1");
  return access;
}

/** A fresh secret's SHA-256 (lower-case hex), as a server stores it. */
export function secretHash(): string {
  return createHash("sha256").update(randomBytes(32)).digest("hex");
}

/** A token to create in `tenantId`; override what the test needs. */
export function tokenInput(
  tenantId = "tenant-a",
  overrides: Partial<CreateTokenInput> = {},
): CreateTokenInput {
  return { tenantId, name: "ci", grants: ["run.read", "run.create"], secretHash: secretHash(), ...overrides };
}

let requests = 0;

/** An `allowed` audit record of `action` on `resourceKind` by `ana` in `tenantId`. */
export function auditInput(
  action: string,
  resourceKind: string,
  tenantId = "tenant-a",
  overrides: Partial<AuditInput> = {},
): AuditInput {
  return {
    tenantId,
    actor: "token:ana",
    action,
    outcome: "allowed",
    resourceKind,
    requestId: `req-${++requests}`,
    ...overrides,
  };
}

/** Every audit record of the tenant, oldest first (all pages). */
export async function auditLog(access: AccessStoreV1, tenantId = "tenant-a"): Promise<AuditRecord[]> {
  const out: AuditRecord[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await access.listAudit({ tenantId, limit: 500, ...(cursor ? { cursor } : {}) });
    out.push(...page.items);
    if (page.nextCursor === null) return out;
    cursor = page.nextCursor;
  }
}
