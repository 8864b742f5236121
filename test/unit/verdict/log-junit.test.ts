import { describe, expect, it } from 'vitest';
import { bodyDigest, createClientLog, judge, verdictJunitXml } from '../../../src/verdict/index.ts';
import type { ClientRequest } from '../../../src/verdict/index.ts';
import { clientRequest } from './client-requests.ts';

const request = (n: number, over: Partial<ClientRequest> = {}): ClientRequest =>
  clientRequest(`req_${n}`, n, { method: 'GET', path: '/v1/models', bodyDigest: '', ...over });

describe('the client log', () => {
  it('keeps the newest entries up to its size and selects by key or account', () => {
    const log = createClientLog(3);
    for (let i = 1; i <= 5; i++) log.request(request(i, { key: i % 2 ? 'sk-a' : 'sk-b', account: i < 3 ? 'acct_1' : 'acct_2' }));
    log.callback({ webhookId: 'msg_1', account: 'acct_2', taskId: null, kind: 'message', atMs: 1, outcome: 200, elapsedMs: 1 });
    expect(log.select({}).requests.map((r) => r.requestId)).toEqual(['req_3', 'req_4', 'req_5']);
    expect(log.select({ key: 'sk-a' }).requests.map((r) => r.requestId)).toEqual(['req_3', 'req_5']);
    expect(log.select({ account: 'acct_1' })).toEqual({ requests: [], callbacks: [] });
    expect(log.select({ account: 'acct_2' }).callbacks).toHaveLength(1);
    log.clear();
    expect(log.select({})).toEqual({ requests: [], callbacks: [] });
  });

  it("judges a key with the callbacks of the accounts it authenticated as, and keeps the newest entries however many came", () => {
    const log = createClientLog(2);
    log.request(request(1, { key: 'sk-a', account: 'acct_1' }));
    log.request(request(2, { key: 'sk-b', account: 'acct_2' }));
    for (const [n, account] of [[1, 'acct_1'], [2, 'acct_2']] as const) {
      log.callback({ webhookId: `msg_${n}`, account, taskId: null, kind: 'message', atMs: n, outcome: 200, elapsedMs: 1 });
    }
    expect(log.select({ key: 'sk-a' }).callbacks.map((c) => c.webhookId)).toEqual(['msg_1']);
    expect(log.select({ key: 'sk-unknown' }).callbacks).toEqual([]);
    for (let i = 3; i <= 9; i++) log.request(request(i));
    expect(log.select({}).requests.map((r) => r.requestId)).toEqual(['req_8', 'req_9']);
  });

  it('digests a body over 64 KB as sent, without parsing it again', () => {
    const big = (order: 'ab' | 'ba') => JSON.stringify(order === 'ab' ? { a: 'x'.repeat(70_000), b: 1 } : { b: 1, a: 'x'.repeat(70_000) });
    expect(bodyDigest(big('ab'))).toBe(bodyDigest(Buffer.from(big('ab'))));
    expect(bodyDigest(big('ab'))).not.toBe(bodyDigest(big('ba')));
  });

  it('digests JSON bodies whatever the order of their keys, other bytes as they are', () => {
    expect(bodyDigest('{"a":1,"b":{"c":2,"d":3}}')).toBe(bodyDigest(Buffer.from('{"b":{"d":3,"c":2},"a":1}')));
    expect(bodyDigest('{"a":1}')).not.toBe(bodyDigest('{"a":2}'));
    expect(bodyDigest('')).toBe('');
    expect(bodyDigest('not json')).not.toBe(bodyDigest('not json!'));
  });
});

describe('the verdict as JUnit', () => {
  it('one test case per check: failures with reason and evidence, checks not exercised skipped', () => {
    const verdict = judge({ requests: [request(0, { outcome: 429, retryAfter: 2 }), request(100)], callbacks: [] });
    const xml = verdictJunitXml(verdict, 'key sk-a… & "friends"');
    expect(xml.match(/<testcase /g)).toHaveLength(10);
    expect(xml).toContain(`<testsuites name="svc-emulator verdict" tests="10" failures="${verdict.counts.fail}" errors="0" skipped="${verdict.counts.not_exercised}">`);
    expect(xml).toContain('verdict key sk-a… &amp; &quot;friends&quot;');
    expect(xml).toMatch(/<testcase classname="verdict\.client" name="client\.retry-after\.respected"><failure message="[^"]*Retry-After[^"]*" type="client\.retry-after\.respected">[^<]*evidence: req_0, req_100/);
    expect(xml).toMatch(/<testcase classname="verdict\.receiver" name="receiver\.acknowledges"><skipped message="no callback was delivered"\/><\/testcase>/);
  });
});
