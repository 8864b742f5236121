import { escapeXml } from '../junit/index.ts';
import { VERDICT_CHECKS } from './judge.ts';
import type { Verdict } from './judge.ts';

/**
 * A verdict as JUnit XML: one testcase per check, failing with its reason and evidence, skipped when it was not
 * exercised (a client that was never put to the test has not passed it).
 */
export function verdictJunitXml(verdict: Verdict, scope: string): string {
  const holds = new Map(VERDICT_CHECKS.map((c) => [c.id, c.holds]));
  const cases = verdict.checks.map((c) => {
    const name = `classname="verdict.${escapeXml(c.id.split('.')[0] ?? 'client')}" name="${escapeXml(c.id)}"`;
    if (c.status === 'pass') return `    <testcase ${name}/>`;
    if (c.status === 'not_exercised') return `    <testcase ${name}><skipped message="${escapeXml(c.reason ?? '')}"/></testcase>`;
    const text = `${c.reason ?? ''}\nevidence: ${c.evidence.join(', ')}\nwhat a resilient client does: ${holds.get(c.id) ?? ''}`;
    return `    <testcase ${name}><failure message="${escapeXml(c.reason ?? '')}" type="${escapeXml(c.id)}">${escapeXml(text)}</failure></testcase>`;
  });
  const counts = `tests="${verdict.checks.length}" failures="${verdict.counts.fail}" errors="0" skipped="${verdict.counts.not_exercised}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="svc-emulator verdict" ${counts}>`,
    `  <testsuite name="verdict ${escapeXml(scope)}" ${counts}>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
