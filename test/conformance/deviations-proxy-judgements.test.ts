import { describe, expect, it } from 'vitest';
import { deviate, expectAltered, expectFailedExactly, is, runAgainst, useDeviations } from './deviating.ts';

// Rules of the shared checker that the checking proxy gained (it saw these answers and did not judge them), judged
// by the suite too over what its keys saw: the suite's own check and the rule both fail on the same deviation.

useDeviations();

describe('what the proxy sees, the suite judges too', () => {
  it('fails tasks.isolation.observed, beside tasks.isolation.other-account, when the second account’s key reads the suite’s task', async () => {
    const answered = new Map<string, string>();
    const p = await deviate({
      answer(answer, req) {
        if (is(req, 'POST', /^\/v1\/tasks$/) && answer.status === 200) answered.set(String((JSON.parse(answer.body) as { id: string }).id), answer.body);
        const id = /^\/v1\/tasks\/(\w+)$/.exec(req.path)?.[1];
        const task = id === undefined ? undefined : answered.get(id);
        if (req.method !== 'GET' || answer.status !== 404 || task === undefined) return undefined;
        return { ...answer, status: 200, body: task };
      },
    });
    const only = ['tasks.isolation.*'];
    const report = await runAgainst(p, only);
    expectAltered(p, 'GET', /^\/v1\/tasks\/T\w+$/);
    expectFailedExactly(report, only, ['tasks.isolation.other-account', 'tasks.isolation.observed']);
    const rule = report.results.find((r) => r.id === 'tasks.isolation.observed');
    expect(rule?.failure?.message).toMatch(/^task T\w+ was created through this account’s key \(req_\w+\) and read 200 through another account’s key “second” \(req_\w+\)/);
  });

  it('fails text.stream.no-buffering, beside the stream’s own check, when a Messages stream comes without X-Accel-Buffering: no', async () => {
    const p = await deviate({
      answer(answer, req) {
        if (!is(req, 'POST', /^\/v1\/messages$/) || !(answer.headers['content-type'] ?? '').startsWith('text/event-stream')) return undefined;
        delete answer.headers['x-accel-buffering'];
        return answer;
      },
    });
    const only = ['text.messages.stream.order', 'text.stream.no-buffering'];
    const report = await runAgainst(p, only);
    expectAltered(p, 'POST', /^\/v1\/messages$/);
    expectFailedExactly(report, only, ['text.messages.stream.order', 'text.stream.no-buffering']);
    expect(report.results.find((r) => r.id === 'text.stream.no-buffering')?.failure?.message).toMatch(/^POST \/v1\/messages answered 200 \(req_\w+\): X-Accel-Buffering is null, not no/);
  });
});
