import { randomUUID } from "node:crypto";

/** Time-ordered UUID (v7 layout) so run ids sort by creation and keyset pages are stable. */
export function newRunId(now = Date.now()): string {
  const hex = now.toString(16).padStart(12, "0");
  const rest = randomUUID().replaceAll("-", "");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${rest.slice(13, 16)}-${((Number.parseInt(rest[16]!, 16) & 0x3) | 0x8).toString(16)}${rest.slice(17, 20)}-${rest.slice(20, 32)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` is a UUID (ids of another shape name no run). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
