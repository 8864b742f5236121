import ipaddr from 'ipaddr.js';

/**
 * The one address policy of the emulator, for callback addresses and for file parameters alike: an address must be
 * HTTPS and not on an internal network, as written and as its name resolves. `--allow-insecure-webhooks` lifts it.
 * A folder of its own (it was src/webhooks/address-guard.ts) because the client side applies it too (the conformance
 * suite's callback checks, the proxy's callback relay) and must not load src/webhooks, which brings the store along.
 *
 * "Internal" is decided by the maintained range tables of `ipaddr.js`: an IP address is public only when its range
 * is `unicast`. An IPv6 address that carries an IPv4 address (IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64
 * 64:ff9b::/96, 6to4 2002::/16, Teredo 2001::/32) is public only when every IPv4 address it carries is, since that
 * is where the traffic ends up. Site-local fec0::/10 (deprecated, still routed by some networks) is internal.
 * @see reference "POST /v1/tasks": webhook_url — HTTPS only, not an internal-network address; rule 3 — file
 * parameters take a publicly reachable HTTPS address; "Events" → Task callbacks 2
 */

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

const ipv4FromParts = (high: number, low: number): IPv4 =>
  new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/** fec0::/10, refused whatever the range tables call it. */
const SITE_LOCAL = ipaddr.IPv6.parseCIDR('fec0::/10');

/** The IPv4 addresses an IPv6 address carries, or null when it is not one of the forms that carry one. */
function embeddedIPv4(address: IPv6): IPv4[] | null {
  const p = address.parts as [number, number, number, number, number, number, number, number];
  const last = (): IPv4 => ipv4FromParts(p[6], p[7]);
  const zeros = (from: number, to: number): boolean => p.slice(from, to).every((part) => part === 0);
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated, RFC 6145)
  if (zeros(0, 5) && p[5] === 0xffff) return [last()];
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return [last()];
  // ::a.b.c.d (compatible, deprecated); :: and ::1 are what their ranges say, the rest carry an IPv4 address
  if (zeros(0, 6) && !(p[6] === 0 && p[7] <= 1)) return [last()];
  // 64:ff9b::a.b.c.d (NAT64, RFC 6052 well-known prefix)
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return [last()];
  // 2002:aabb:ccdd::/48 (6to4)
  if (p[0] === 0x2002) return [ipv4FromParts(p[1], p[2])];
  // 2001:0:server:flags:port:~client (Teredo): the server and the client, stored inverted
  if (p[0] === 0x2001 && p[1] === 0) return [ipv4FromParts(p[2], p[3]), ipv4FromParts(p[6] ^ 0xffff, p[7] ^ 0xffff)];
  return null;
}

function isInternalIp(address: IPv4 | IPv6): boolean {
  if (address.kind() === 'ipv4') return address.range() !== 'unicast';
  const v6 = address as IPv6;
  if (v6.match(SITE_LOCAL)) return true;
  const carried = embeddedIPv4(v6);
  if (carried) return carried.some(isInternalIp);
  return v6.range() !== 'unicast';
}

/**
 * Whether a host, as written in an address (`[::1]`, `localhost`) or as a name resolves (`10.0.0.1`,
 * `fe80::1%eth0`), is on an internal network. A name other than `localhost` is not: resolve it and check the
 * addresses.
 */
export function isInternalAddress(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (!ipaddr.isValid(bare)) return false;
  return isInternalIp(ipaddr.parse(bare));
}

/** Whether a host is written as an IP address (so there is no name to resolve). */
export function isIpLiteral(host: string): boolean {
  return ipaddr.isValid(host.replace(/^\[|\]$/g, ''));
}

export interface AddressProblem {
  /** `url`: not an absolute URL; `scheme`: not https; `internal`: on an internal network, or resolves there. */
  kind: 'url' | 'scheme' | 'internal';
  message: string;
}

/** Why an address is refused as written, or null when it is acceptable (or the policy is lifted). */
export function publicAddressProblem(url: string, allowInsecure: boolean): AddressProblem | null {
  if (allowInsecure) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { kind: 'url', message: 'must be an absolute URL' };
  }
  if (parsed.protocol !== 'https:') return { kind: 'scheme', message: 'must be an https address' };
  if (isInternalAddress(parsed.hostname)) return { kind: 'internal', message: 'must not be an internal-network address' };
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
 * The submission-time check of an address: as written, then the addresses its name resolves to. A name that does
 * not resolve now is accepted (the callback sender checks again when it connects).
 */
export async function publicAddressProblemResolved(
  url: string,
  allowInsecure: boolean,
  resolve: ResolveHost,
): Promise<AddressProblem | null> {
  const literal = publicAddressProblem(url, allowInsecure);
  if (literal || allowInsecure) return literal;
  const host = new URL(url).hostname;
  if (isIpLiteral(host)) return null;
  const internal = (await resolve(host)).find(isInternalAddress);
  return internal
    ? { kind: 'internal', message: `must not resolve to an internal-network address (${host} is ${internal})` }
    : null;
}

/** The submission-time checks of several addresses at once (each distinct address resolved once). */
export async function publicAddressProblems(
  urls: Iterable<string>,
  allowInsecure: boolean,
  resolve: ResolveHost,
): Promise<Map<string, AddressProblem | null>> {
  const distinct = [...new Set(urls)];
  const problems = await Promise.all(distinct.map((url) => publicAddressProblemResolved(url, allowInsecure, resolve)));
  return new Map(distinct.map((url, i) => [url, problems[i] ?? null]));
}

/** Why a callback address is refused as written, or null. */
export function webhookAddressProblem(url: string, allowInsecure: boolean): string | null {
  return publicAddressProblem(url, allowInsecure)?.message ?? null;
}

/** Why a callback address is refused, as written or as its name resolves, or null. */
export async function webhookAddressProblemResolved(
  url: string,
  allowInsecure: boolean,
  resolve: ResolveHost,
): Promise<string | null> {
  return (await publicAddressProblemResolved(url, allowInsecure, resolve))?.message ?? null;
}
