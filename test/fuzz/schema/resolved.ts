import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { isObject } from './document.ts';

/**
 * The other half of `x-address-policy: public-https`: an address must not be internal *as resolved* either,
 * which depends on the machine's resolver (here `/etc/hosts` may map a short name to 127.0.0.1). A case whose
 * https addresses resolve to an internal address breaks that note, so it is not sent, like a case Ajv refuses.
 */
const verdicts = new Map<string, Promise<boolean>>();

export async function resolvesInternally(value: unknown): Promise<boolean> {
  const hosts = new Set<string>();
  collectHosts(value, hosts);
  const internal = await Promise.all([...hosts].map((host) => hostIsInternal(host)));
  return internal.some(Boolean);
}

function collectHosts(value: unknown, hosts: Set<string>): void {
  if (typeof value === 'string' && value.startsWith('https://')) {
    try {
      const host = new URL(value).hostname;
      if (!ipaddr.isValid(host.replace(/^\[|\]$/g, ''))) hosts.add(host);
    } catch {
      // Not a URL a client could call: nothing to resolve.
    }
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
      .then((addresses) => addresses.some(({ address }) => ipaddr.process(address).range() !== 'unicast'))
      .catch(() => false);
    verdicts.set(host, verdict);
  }
  return verdict;
}
