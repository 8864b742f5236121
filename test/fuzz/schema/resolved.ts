import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { isObject } from './document.ts';

/**
 * The `x-address-policy: public-https` note, followed the way the generator follows `x-file`: an address must not
 * be internal as written (`publicAsWritten`, a filter on drawn values) nor as resolved, which depends on the
 * machine's resolver (here `/etc/hosts` may map a short name to 127.0.0.1): a case whose https addresses resolve
 * to an internal address is not sent, like a case Ajv refuses (`resolvesInternally`). Judged with ipaddr.js, not
 * with the emulator's own guard, so that a bug in the guard is not copied into the test data.
 */
const verdicts = new Map<string, Promise<boolean>>();

export async function resolvesInternally(value: unknown): Promise<boolean> {
  const hosts = new Set<string>();
  collectHosts(value, hosts);
  const internal = await Promise.all([...hosts].map((host) => hostIsInternal(host)));
  return internal.some(Boolean);
}

/** The host of an address (brackets off an IPv6 one), or null when it is not a URL. */
export function hostOf(value: string): string | null {
  try {
    return new URL(value).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return null;
  }
}

/** Whether an IP address is internal: anything ipaddr.js's range tables do not call `unicast` (IPv4 in IPv6 unwrapped). */
export const isInternalIp = (address: string): boolean => ipaddr.process(address).range() !== 'unicast';

/**
 * The `public-https` policy as written: no internal IP literal and no `localhost` name (other names are judged
 * as they resolve, by `resolvesInternally`).
 */
export function publicAsWritten(value: unknown): boolean {
  const host = typeof value === 'string' ? hostOf(value) : null;
  if (host === null) return true;
  if (host === 'localhost' || host.endsWith('.localhost')) return false;
  return !ipaddr.isValid(host) || !isInternalIp(host);
}

function collectHosts(value: unknown, hosts: Set<string>): void {
  if (typeof value === 'string' && value.startsWith('https://')) {
    const host = hostOf(value);
    if (host !== null && !ipaddr.isValid(host)) hosts.add(host);
  } else if (Array.isArray(value)) {
    for (const item of value) collectHosts(item, hosts);
  } else if (isObject(value)) {
    for (const item of Object.values(value)) collectHosts(item, hosts);
  }
}

function hostIsInternal(host: string): Promise<boolean> {
  let verdict = verdicts.get(host);
  if (!verdict) {
    verdict = lookup(host, { all: true })
      .then((addresses) => addresses.some(({ address }) => isInternalIp(address)))
      .catch(() => false);
    verdicts.set(host, verdict);
  }
  return verdict;
}
