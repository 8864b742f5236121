import { expect, it } from 'vitest';
import { ALL_CHECKS, BEHAVIOUR_CHECKS, COVERAGE, coverageLine, coverageOf, junitXml } from '../../src/conformance/index.ts';
import type { CheckResult, CoverageRow, SuiteReport } from '../../src/conformance/index.ts';
import { CHECK_META } from '../../src/conformance/coverage-table/checks.ts';
import { FILE_URL } from '../../src/conformance/coverage-table/endpoints.ts';
import { RULE_META } from '../../src/conformance/coverage-table/rules.ts';
import { loadDocument } from '../../src/contract/index.ts';

// The coverage table: one row for every check and every rule of behaviour, each naming what it exercises as the
// document names it, and the score a run reports from it.

const sorted = (ids: Iterable<string>): string[] => [...ids].sort();

it('has exactly one row for every check and every rule, in the order they run, and describes no id that is neither', () => {
  const ids = [...ALL_CHECKS.map((c) => c.id), ...BEHAVIOUR_CHECKS.map((r) => r.id)];
  expect(COVERAGE.map((row) => row.id)).toEqual(ids);
  expect(new Set(ids).size, 'no check and rule share an id').toBe(ids.length);
  // Metadata of an id that is gone is stale; an id without any would be a row with nothing said.
  expect(sorted(Object.keys(CHECK_META))).toEqual(sorted(ALL_CHECKS.map((c) => c.id)));
  expect(sorted(Object.keys(RULE_META))).toEqual(sorted(BEHAVIOUR_CHECKS.map((r) => r.id)));
  for (const row of COVERAGE) {
    expect(row.endpoints.length, `${row.id} names what it exercises`).toBeGreaterThan(0);
    expect(new Set(row.endpoints).size, `${row.id} names each endpoint once`).toBe(row.endpoints.length);
    expect(row.behaviour, `${row.id} says the behaviour`).toMatch(/\S/);
  }
  // The rule in the project's words: the check's title, the rule's holds, not a second copy.
  expect(COVERAGE.filter((r) => r.kind === 'check').map((r) => r.rule)).toEqual(ALL_CHECKS.map((c) => c.title));
  expect(COVERAGE.filter((r) => r.kind === 'rule').map((r) => r.rule)).toEqual(BEHAVIOUR_CHECKS.map((r) => r.holds));
});

it('names every endpoint as openapi/service.yaml has it: an operation of its paths, a callback of its webhooks, or a file address', () => {
  const doc = loadDocument('service');
  const paths = doc.paths ?? {};
  const webhooks = doc.webhooks ?? {};
  const unknown: string[] = [];
  for (const row of COVERAGE) {
    for (const endpoint of row.endpoints) {
      if (endpoint === FILE_URL) continue;
      const callback = /^callback (\S+)$/.exec(endpoint);
      if (callback) {
        if (webhooks[callback[1] ?? ''] === undefined) unknown.push(`${row.id}: ${endpoint}`);
        continue;
      }
      const [method = '', path = ''] = endpoint.split(' ');
      const item = paths[path] as Record<string, unknown> | undefined;
      if (item?.[method.toLowerCase()] === undefined) unknown.push(`${row.id}: ${endpoint}`);
    }
  }
  expect(unknown).toEqual([]);
});

it("needs the control API exactly where a check's own needs say so, and names a callback exactly where it needs a receiver", () => {
  const checks = new Map(ALL_CHECKS.map((c) => [c.id, c]));
  for (const row of COVERAGE.filter((r) => r.kind === 'check')) {
    const needs = checks.get(row.id)?.needs ?? [];
    expect(row.control, row.id).toBe(needs.includes('admin'));
    expect(row.endpoints.some((e) => e.startsWith('callback ')), row.id).toBe(needs.includes('webhook'));
  }
  // The check metadata says nothing of the control API: it would be a second, drifting copy of `needs`.
  expect(Object.entries(CHECK_META).filter(([, meta]) => 'control' in meta)).toEqual([]);
  // The rules the suite feeds only through the control API: the account's balance, a 429 of a limited key, a
  // failed callback delivery and a stream cut by an error.
  expect(COVERAGE.filter((r) => r.kind === 'rule' && r.control).map((r) => r.id).sort()).toEqual([
    'billing.balance.moves',
    'billing.refusal.changes-nothing',
    'callbacks.retry.schedule',
    'text.stream.error-event',
    'wire.retry-after.rate-limited',
  ]);
});

const result = (row: CoverageRow, status: CheckResult['status']): Pick<CheckResult, 'id' | 'status'> => ({ id: row.id, status });
const pick = (kind: CoverageRow['kind'], control: boolean, nth = 0): CoverageRow => {
  const found = COVERAGE.filter((r) => r.kind === kind && r.control === control)[nth];
  if (!found) throw new Error(`no ${kind} with control ${control}`);
  return found;
};

it('scores a run: rules exercised (passed or failed, not skipped) and passed, of those reachable through the public API and of all', () => {
  const open = COVERAGE.filter((r) => !r.control).length;
  expect(open).toBeLessThan(COVERAGE.length);
  const results = [
    result(pick('check', false), 'passed'),
    result(pick('check', false, 1), 'skipped'),
    result(pick('rule', false), 'failed'),
    result(pick('rule', false, 1), 'passed'),
    result(pick('check', true), 'passed'),
    result(pick('check', true, 1), 'failed'),
    result(pick('rule', true), 'skipped'),
    // A result the table does not know (a check of someone's own) scores nothing.
    { id: 'not.in.the-table', status: 'passed' as const },
  ];
  expect(coverageOf(results)).toEqual({
    public: { rules: open, exercised: 3, passed: 2 },
    all: { rules: COVERAGE.length, exercised: 5, passed: 3 },
  });
  // Nothing run, nothing exercised; every row passed, full marks.
  expect(coverageOf([])).toEqual({ public: { rules: open, exercised: 0, passed: 0 }, all: { rules: COVERAGE.length, exercised: 0, passed: 0 } });
  expect(coverageOf(COVERAGE.map((r) => result(r, 'passed')))).toEqual({
    public: { rules: open, exercised: open, passed: open },
    all: { rules: COVERAGE.length, exercised: COVERAGE.length, passed: COVERAGE.length },
  });
});

it('prints the score on one line, and gives it to JUnit as properties of the run', () => {
  const coverage = { public: { rules: 119, exercised: 118, passed: 117 }, all: { rules: 144, exercised: 130, passed: 129 } };
  expect(coverageLine({ coverage } as SuiteReport)).toBe('coverage: 118 of 119 rules reachable through the public API exercised (117 passed); 130 of 144 with the control API (129 passed)');
  const report: SuiteReport = { baseUrl: 'http://127.0.0.1:1', startedAt: '2025-01-01T00:00:00.000Z', durationMs: 5, passed: 1, failed: 0, skipped: 0, coverage, account: null, budget: 200, results: [{ id: 'wire.auth.missing-key', group: 'wire', title: 't', status: 'passed', durationMs: 5 }] };
  const xml = junitXml(report);
  const properties = /^<testsuites [^>]*>\n {2}<properties>\n([\s\S]*?)\n {2}<\/properties>\n {2}<testsuite /m.exec(xml);
  expect(properties?.[1]?.split('\n')).toEqual([
    '    <property name="coverage.public.rules" value="119"/>',
    '    <property name="coverage.public.exercised" value="118"/>',
    '    <property name="coverage.public.passed" value="117"/>',
    '    <property name="coverage.all.rules" value="144"/>',
    '    <property name="coverage.all.exercised" value="130"/>',
    '    <property name="coverage.all.passed" value="129"/>',
  ]);
});
