import { escapeXml } from '../junit/index.ts';
import { PARITY_CHECKS } from './types.ts';
import type { CheckId, CheckOutcome, CheckTally, Difference, EndpointReport, ParityReport } from './types.ts';
import { plural } from '../log/index.ts';

/** One replayed exchange: which checks applied, what each found, and how to replay it by hand. */
export interface ExchangeResult {
  entry: number;
  endpoint: string;
  outcomes: CheckOutcome[];
  curl: string;
}

const CHECK_ORDER = Object.keys(PARITY_CHECKS) as CheckId[];

/** agreed / checks as a percentage rounded down to one decimal: 100 means every check agreed. */
const percent = (agreed: number, checks: number): number => (checks === 0 || agreed === checks ? 100 : Math.floor((agreed / checks) * 1000) / 10);

export function buildReport(input: { baseUrl: string; files: string[]; results: ExchangeResult[]; notes: string[]; durationMs: number }): ParityReport {
  const endpoints = new Map<string, EndpointReport>();
  const differences: Difference[] = [];
  let [checks, agreed] = [0, 0];
  for (const result of input.results) {
    const endpoint = endpoints.get(result.endpoint) ?? { endpoint: result.endpoint, exchanges: 0, checks: {} };
    endpoints.set(result.endpoint, endpoint);
    endpoint.exchanges++;
    for (const outcome of result.outcomes) {
      const tally: CheckTally = endpoint.checks[outcome.check] ?? { agreed: 0, differed: 0 };
      endpoint.checks[outcome.check] = tally;
      checks++;
      if (outcome.findings.length === 0) {
        tally.agreed++;
        agreed++;
      } else tally.differed++;
      for (const finding of outcome.findings) differences.push({ ...finding, entry: result.entry, endpoint: result.endpoint, curl: result.curl });
    }
  }
  for (const endpoint of endpoints.values()) {
    endpoint.checks = Object.fromEntries(CHECK_ORDER.filter((id) => endpoint.checks[id] !== undefined).map((id) => [id, endpoint.checks[id]]));
  }
  return {
    baseUrl: input.baseUrl,
    recording: input.files,
    exchanges: input.results.length,
    checks,
    agreed,
    differed: checks - agreed,
    parity: percent(agreed, checks),
    endpoints: [...endpoints.values()],
    differences,
    notes: input.notes,
    durationMs: input.durationMs,
  };
}

/** Checks whose two sides are values (shown as JSON); the others' are descriptions (a type, `missing`, a form). */
const VALUE_CHECKS = new Set<CheckId>(['parity.status', 'parity.body.values', 'parity.stream.values', 'parity.headers.idempotent-replayed', 'parity.headers.stream']);

const show = (check: CheckId, value: unknown): string => {
  if (value === undefined || value === null) return check.startsWith('parity.headers.') ? 'absent' : JSON.stringify(value ?? null);
  return VALUE_CHECKS.has(check) || typeof value !== 'string' ? JSON.stringify(value) : value;
};

/** A difference as a person reads it: where, the two values, and a curl line that replays the request. */
export function differenceText(d: Difference): string {
  const lines = [`DIFF ${d.check} ${d.endpoint} (entry ${d.entry}) ${d.path}`, `  recorded: ${show(d.check, d.recorded)}`, `  replayed: ${show(d.check, d.replayed)}`];
  if (d.detail !== undefined) lines.push(`  events:   ${d.detail}`);
  lines.push(`  repro:    ${d.curl}`);
  return lines.join('\n');
}

export const summaryLine = (report: ParityReport): string =>
  `parity ${report.parity} %: ${report.agreed} of ${plural(report.checks, 'check')} agreed, ${report.differed} differed (${plural(report.differences.length, 'difference')})`;

/** The whole report as text: per endpoint and check, the differences, the notes, and the parity line. */
export function reportText(report: ParityReport): string {
  const out = [`${plural(report.exchanges, 'exchange')} of ${report.recording.join(', ')} replayed against ${report.baseUrl}`, ''];
  const width = Math.max(...CHECK_ORDER.map((id) => id.length)) + 2;
  for (const endpoint of report.endpoints) {
    out.push(`${endpoint.endpoint}: ${plural(endpoint.exchanges, 'exchange')}`);
    for (const [id, tally] of Object.entries(endpoint.checks)) {
      out.push(`  ${id.padEnd(width)}${tally.agreed} agreed${tally.differed > 0 ? `, ${tally.differed} differed` : ''}`);
    }
  }
  if (report.differences.length > 0) out.push('', ...report.differences.map(differenceText));
  if (report.notes.length > 0) out.push('', 'notes:', ...report.notes.map((note) => `  - ${note}`));
  out.push('', summaryLine(report));
  return out.join('\n');
}

/** JUnit XML: one testsuite per endpoint, one testcase per check, failing with the differences it found. */
export function junitXml(report: ParityReport): string {
  const failing = (endpoint: EndpointReport): number => Object.values(endpoint.checks).filter((tally) => tally.differed > 0).length;
  const suites = report.endpoints.map((endpoint) => {
    const entries = Object.entries(endpoint.checks);
    const cases = entries.map(([id, tally]) => {
      const found = report.differences.filter((d) => d.endpoint === endpoint.endpoint && d.check === id);
      const failure =
        tally.differed > 0 ? `<failure message="${escapeXml(`${tally.differed} of ${tally.agreed + tally.differed} exchanges differed`)}">${escapeXml(found.map(differenceText).join('\n'))}</failure>` : '';
      return `    <testcase classname="${escapeXml(`parity.${endpoint.endpoint}`)}" name="${escapeXml(id)}" time="0.000">${failure}</testcase>`;
    });
    return `  <testsuite name="${escapeXml(`parity ${endpoint.endpoint}`)}" tests="${entries.length}" failures="${failing(endpoint)}" skipped="0">\n${cases.join('\n')}\n  </testsuite>`;
  });
  const tests = report.endpoints.reduce((n, e) => n + Object.keys(e.checks).length, 0);
  const failures = report.endpoints.reduce((n, e) => n + failing(e), 0);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="svc-emulator parity" tests="${tests}" failures="${failures}" time="${(report.durationMs / 1000).toFixed(3)}">\n${suites.join('\n')}\n</testsuites>\n`;
}
