import { BlockList, isIP } from 'node:net';

/**
 * Callback addresses must be HTTPS and not on an internal network. This checks the address as written
 * (literal IPs and `localhost`); names that resolve to internal ranges are checked when the callback is sent.
 * @see reference "POST /v1/tasks": webhook_url — HTTPS only, not an internal-network address
 */
const INTERNAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  INTERNAL.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  INTERNAL.addSubnet(net, prefix, 'ipv6');
}

export function isInternalAddress(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  const version = isIP(bare);
  if (version === 4) return INTERNAL.check(bare, 'ipv4');
  if (version === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
    return mapped?.[1] ? INTERNAL.check(mapped[1], 'ipv4') : INTERNAL.check(bare, 'ipv6');
  }
  return false;
}

/** Why a callback address is refused, or null when it is acceptable. */
export function webhookAddressProblem(url: string, allowInsecure: boolean): string | null {
  if (allowInsecure) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.protocol !== 'https:') return 'must be an https address';
  if (isInternalAddress(parsed.hostname)) return 'must not be an internal-network address';
  return null;
}

/** Every address a host name resolves to; a name that does not resolve gives none. */
export type ResolveHost = (hostname: string) => Promise<string[]>;

export const resolveWithDns: ResolveHost = async (hostname) => {
  const { lookup } = await import('node:dns/promises');
  try {
    return (await lookup(hostname, { all: true })).map((a) => a.address);
  } catch {
    return [];
  }
};

/**
 * The submission-time check of a callback address: as written, then the addresses its name resolves to. A
 * name that does not resolve now is accepted; the sender checks again when it connects.
 */
export async function webhookAddressProblemResolved(
  url: string,
  allowInsecure: boolean,
  resolve: ResolveHost,
): Promise<string | null> {
  const literal = webhookAddressProblem(url, allowInsecure);
  if (literal || allowInsecure) return literal;
  const host = new URL(url).hostname;
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) return null;
  const internal = (await resolve(host)).find(isInternalAddress);
  return internal ? `must not resolve to an internal-network address (${host} is ${internal})` : null;
}
