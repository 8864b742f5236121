import { escapeXml } from '../junit/index.ts';
import { PROXY_CHECKS } from './checks.ts';
import type { Deviation } from './checks.ts';

/** What a proxy run found, as its report shows it. */
export interface ProxyResults {
  /** The upstream the exchanges went to. */
  upstream: string;
  /** Exchanges checked (Proxy.exchanges()). */
  exchanges: number;
  /** Every deviation found (Proxy.deviations()). */
  deviations: Deviation[];
  /** How long the proxy ran, in ms (the suite's time); 0 when not given. */
  durationMs?: number;
}

/** A deviation's lines in a failure: what was asked, what was wrong, and the curl line that asks it again. */
const deviationText = (d: Deviation): string =>
  `${d.method} ${d.path} answered ${d.status} (request id ${d.request_id ?? 'none'}): ${d.message}\n  repro: ${d.curl}`;

/**
 * JUnit XML as CI systems read it: one testsuite `proxy`, one testcase per check the proxy runs, passing when the
 * check found nothing in any exchange, else failing with one failure that lists each of its deviations. How many
 * exchanges were checked is a property of the suite (a check that passed on none passed on nothing).
 */
export function proxyJunitXml(results: ProxyResults): string {
  const byCheck = new Map<string, Deviation[]>(PROXY_CHECKS.map((id) => [id, []]));
  // A deviation of a check not in the list still gets its case: a report never drops one.
  for (const d of results.deviations) {
    const found = byCheck.get(d.check) ?? [];
    found.push(d);
    byCheck.set(d.check, found);
  }
  const cases = [...byCheck].map(([id, found]) => {
    const name = `classname="proxy" name="${escapeXml(id)}"`;
    if (found.length === 0) return `    <testcase ${name}/>`;
    const message = `${found.length} deviation${found.length === 1 ? '' : 's'}; first: ${found[0]?.message ?? ''}`;
    return `    <testcase ${name}><failure message="${escapeXml(message)}" type="${escapeXml(id)}">${escapeXml(found.map(deviationText).join('\n'))}</failure></testcase>`;
  });
  const failures = [...byCheck.values()].filter((found) => found.length > 0).length;
  const time = ((results.durationMs ?? 0) / 1000).toFixed(3);
  const counts = `tests="${byCheck.size}" failures="${failures}" errors="0" skipped="0" time="${time}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="svc-emulator proxy" ${counts}>`,
    `  <testsuite name="proxy" ${counts}>`,
    '    <properties>',
    `      <property name="upstream" value="${escapeXml(results.upstream)}"/>`,
    `      <property name="exchanges" value="${results.exchanges}"/>`,
    `      <property name="deviations" value="${results.deviations.length}"/>`,
    '    </properties>',
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
