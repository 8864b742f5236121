import { escapeXml } from '../junit/index.ts';
import { coverageLine as lineOf } from './coverage-table/index.ts';
import type { SuiteReport } from './suite.ts';
import type { CheckResult } from './types.ts';

const show = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** The lines a person reads: one per failure with the request, expected against actual, and a curl line. */
export function failureText(result: CheckResult): string {
  const f = result.failure;
  if (!f) return '';
  const lines = [`FAIL ${result.id}: ${f.message}`];
  if (f.request) lines.push(`  request:  ${f.request.method} ${f.request.path} (request id ${f.request.requestId ?? 'none'})`);
  if (f.expected !== undefined) lines.push(`  expected: ${show(f.expected)}`);
  if (f.actual !== undefined) lines.push(`  actual:   ${show(f.actual)}`);
  if (f.curl) lines.push(`  repro:    ${f.curl}`);
  return lines.join('\n');
}

export const summaryLine = (report: SuiteReport): string => `${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped`;

/** The run's score, the line before the summary: rules reachable through the public API exercised, and all. */
export const coverageLine = (report: SuiteReport): string => lineOf(report.coverage);

/**
 * The score as JUnit properties of the whole run (`coverage.public.exercised`, ...), on the testsuites element:
 * parsers that know no properties there pass over them, and the per-group suites keep only their own counts.
 */
function coverageProperties(report: SuiteReport): string {
  const properties = (['public', 'all'] as const).flatMap((scope) =>
    (['rules', 'exercised', 'passed'] as const).map((count) => `    <property name="coverage.${scope}.${count}" value="${report.coverage[scope][count]}"/>`),
  );
  return ['  <properties>', ...properties, '  </properties>'].join('\n');
}

/** JUnit XML as CI systems read it: the run's coverage as properties, one testsuite per group, one testcase per check. */
export function junitXml(report: SuiteReport): string {
  const groups = new Map<string, CheckResult[]>();
  for (const r of report.results) groups.set(r.group, [...(groups.get(r.group) ?? []), r]);
  const suites = [...groups].map(([group, results]) => {
    const cases = results.map((r) => {
      const inner =
        r.status === 'failed'
          ? `<failure message="${escapeXml(r.failure?.message ?? '')}">${escapeXml(failureText(r))}</failure>`
          : r.status === 'skipped'
            ? `<skipped message="${escapeXml(r.reason ?? '')}"/>`
            : '';
      return `    <testcase classname="conformance.${group}" name="${escapeXml(r.id)}" time="${(r.durationMs / 1000).toFixed(3)}">${inner}</testcase>`;
    });
    const failures = results.filter((r) => r.status === 'failed').length;
    const skipped = results.filter((r) => r.status === 'skipped').length;
    const time = results.reduce((t, r) => t + r.durationMs, 0) / 1000;
    return `  <testsuite name="conformance.${group}" tests="${results.length}" failures="${failures}" skipped="${skipped}" time="${time.toFixed(3)}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="svc-emulator conformance" tests="${report.results.length}" failures="${report.failed}" skipped="${report.skipped}" time="${(report.durationMs / 1000).toFixed(3)}">\n${coverageProperties(report)}\n${suites.join('\n')}\n</testsuites>\n`;
}
