import { afterAll, beforeAll, expect, it } from 'vitest';
import { COVERAGE, junitXml, runConformance } from '../../src/conformance/index.ts';
import type { SuiteReport } from '../../src/conformance/index.ts';
import { FILE_URL } from '../../src/conformance/coverage-table/endpoints.ts';
import { loadDocument } from '../../src/contract/index.ts';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';

// The whole suite against a freshly started emulator, as CI and users run it: it must pass, checks skip only
// for what the options do not provide, and the reports carry the same facts.

/**
 * Names what `fetch` asked of the emulator while `run` ran, as the coverage table names it: `GET /v1/tasks/{id}`
 * (the document's template of the path), `GET {file url}` (a file's address); the control API is not the public one.
 */
async function endpointsAsked<T>(base: string, run: (asked: readonly string[]) => Promise<T>): Promise<T> {
  const templates = Object.keys(loadDocument('service').paths ?? {}).map((template) => ({ template, pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`) }));
  const asked: string[] = [];
  const original = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    if (url.origin === new URL(base).origin) {
      const found = templates.find((t) => t.pattern.test(url.pathname));
      if (found) asked.push(`${method} ${found.template}`);
      else if (url.pathname.startsWith('/files/')) asked.push(FILE_URL);
    }
    return original(input, init);
  };
  try {
    return await run(asked);
  } finally {
    globalThis.fetch = original;
  }
}

let emulator: Emulator;
let base: string;
beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: 'conformance-admin', allowInsecureWebhooks: true, log: () => undefined });
  base = await emulator.listen(0);
});
afterAll(() => emulator.close());

it('passes every check against the emulator, with the control API, a second account and a callback receiver; each check asks what its coverage row names', async () => {
  // What each check asked for: the requests between the result before it and its own.
  const byCheck = new Map<string, Set<string>>();
  let mark = 0;
  const report: SuiteReport = await endpointsAsked(base, (asked) =>
    runConformance({
      baseUrl: base,
      apiKey: 'sk-emulator-demo',
      admin: { url: base, token: 'conformance-admin' },
      budget: 100_000,
      onResult: (r) => {
        byCheck.set(r.id, new Set(asked.slice(mark)));
        mark = asked.length;
      },
    }),
  );
  expect(report.results.filter((r) => r.status !== 'passed').map((r) => [r.id, r.failure?.message ?? r.reason])).toEqual([]);
  // Every row's endpoints are what the check asked for (a callback is the receiver's to see, not a request).
  const unasked = COVERAGE.filter((row) => row.kind === 'check').flatMap((row) =>
    row.endpoints.filter((e) => !e.startsWith('callback ') && !byCheck.get(row.id)?.has(e)).map((e) => `${row.id}: ${e}, asked ${[...(byCheck.get(row.id) ?? [])].join(', ')}`),
  );
  expect(unasked).toEqual([]);
  expect(report.coverage).toEqual({
    public: { rules: COVERAGE.filter((r) => !r.control).length, exercised: COVERAGE.filter((r) => !r.control).length, passed: COVERAGE.filter((r) => !r.control).length },
    all: { rules: COVERAGE.length, exercised: COVERAGE.length, passed: COVERAGE.length },
  });
  expect(report.passed).toBeGreaterThan(40);
  const groups = new Set(report.results.map((r) => r.group));
  expect([...groups].sort()).toEqual(['billing', 'callbacks', 'files', 'lifecycle', 'limits', 'tasks', 'text', 'validation', 'wire']);
  const xml = junitXml(report);
  expect(xml.match(/<testcase /g)).toHaveLength(report.results.length);
});

it('skips, with the reason, what needs a second key, a receiver or more budget', async () => {
  const report = await runConformance({ baseUrl: base, apiKey: 'sk-emulator-demo', budget: 100 });
  const skipped = Object.fromEntries(report.results.filter((r) => r.status === 'skipped').map((r) => [r.id, r.reason]));
  expect(skipped['tasks.isolation.other-account']).toContain('second key');
  expect(skipped['callbacks.terminal.signed-once']).toContain('callback receiver');
  expect(skipped['billing.freeze.video-720p-5s']).toContain('budget');
  expect(report.failed).toBe(0);
  // Without the control API nothing the table says needs it is exercised: the score's two counts are the same.
  expect(report.coverage.public.exercised).toBeGreaterThan(0);
  expect(report.coverage.all.exercised).toBe(report.coverage.public.exercised);
}, 60_000);
