import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

/**
 * Addresses a webhook may not reach unless the operator allows it: a tenant's URL must not turn a
 * worker into a way into its own network (loopback, private and link-local ranges, cloud
 * metadata endpoints, carrier-grade NAT, multicast, reserved and unspecified addresses).
 */
const INTERNAL = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  INTERNAL.addSubnet(network, prefix, "ipv4");
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const)
  INTERNAL.addSubnet(network, prefix, "ipv6");

/** Whether `address` (an IP literal) is internal; IPv4 written inside IPv6 counts as the IPv4. */
export function isInternalAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)?.[1];
  if (mapped) return INTERNAL.check(mapped, "ipv4");
  const family = isIP(bare);
  if (family === 0) return false;
  return INTERNAL.check(bare, family === 4 ? "ipv4" : "ipv6");
}

/**
 * Why a delivery to `url` is refused, or `undefined` when it may go: its host is, or resolves to,
 * an internal address (every address it resolves to is checked). `allowInternal` lifts the rule
 * for operators whose receivers live inside their network (and for tests on loopback).
 *
 * The check resolves the name once and the request resolves it again, so a name whose answer
 * changes between the two could still reach an internal address; a deployment that must rule
 * that out sends webhooks through an egress proxy.
 */
export async function webhookTargetRefusal(url: string, allowInternal: boolean): Promise<string | undefined> {
  if (allowInternal) return undefined;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return `${host} is this machine`;
  if (isIP(host) !== 0) return isInternalAddress(host) ? `${host} is an internal address` : undefined;
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    // Not refused: the request itself fails, and the delivery is tried again later.
    return undefined;
  }
  const internal = addresses.find((entry) => isInternalAddress(entry.address));
  return internal ? `${host} resolves to the internal address ${internal.address}` : undefined;
}
