const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` is a UUID (ids of another shape name no run). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
