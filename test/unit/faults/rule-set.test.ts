import { describe, expect, it } from 'vitest';
import { createFaultRules, pathMatches } from '../../../src/faults/index.ts';
import type { RequestFacts } from '../../../src/faults/index.ts';

const submit: RequestFacts = { method: 'POST', path: '/v1/tasks', model: 'social-notes-data', key: 'sk-a', account: 'acct_1' };
const chat: RequestFacts = { method: 'POST', path: '/v1/chat/completions', model: 'text-1', key: 'sk-b', account: 'acct_2' };
const noSeed = () => 'unseeded';

describe('fault rules', () => {
  it('takes only the requests its match names, each field an exact match or a path prefix', () => {
    expect(pathMatches('/v1/tasks*', '/v1/tasks/task_1/cancel')).toBe(true);
    expect(pathMatches('/v1/tasks', '/v1/tasks/task_1')).toBe(false);
    const rules = createFaultRules(noSeed);
    rules.add([{ match: { method: 'post', path: '/v1/tasks*', key: 'sk-a' }, fault: { kind: 'reset' } }]);
    expect(rules.forRequest(chat)).toBeNull();
    expect(rules.forRequest({ ...submit, key: 'sk-other' })).toBeNull();
    expect(rules.forRequest({ ...submit, method: 'GET' })).toBeNull();
    expect(rules.forRequest(submit)?.fault).toEqual({ kind: 'reset' });
  });

  it('injects into the first N matching requests only and counts matches and hits', () => {
    const rules = createFaultRules(noSeed);
    const [added] = rules.add([{ match: { path: '/v1/tasks' }, fault: { kind: 'error', code: 'rate_limited', retry_after: 2 }, times: 2 }]);
    expect(added?.id).toBe('fault_1');
    const answers = [submit, chat, submit, submit].map((f) => rules.forRequest(f)?.fault.kind ?? null);
    expect(answers).toEqual(['error', null, 'error', null]);
    expect(rules.list()).toMatchObject([{ id: 'fault_1', matched: 2, hits: 2 }]);
  });

  it('draws probabilities from the seed: the same seed and requests inject exactly the same faults', () => {
    const run = (seed: string) => {
      const rules = createFaultRules(noSeed);
      rules.add([{ fault: { kind: 'latency', ms: 5 }, probability: 0.3 }], seed);
      return Array.from({ length: 200 }, () => (rules.forRequest(chat) ? 1 : 0)).join('');
    };
    expect(run('s1')).toBe(run('s1'));
    expect(run('s1')).not.toBe(run('s2'));
    const injected = [...run('s1')].filter((c) => c === '1').length;
    expect(injected).toBeGreaterThan(30);
    expect(injected).toBeLessThan(90);
  });

  it('keeps request and callback rules apart, and lets the first rule that fires win', () => {
    const rules = createFaultRules(noSeed);
    rules.add([
      { match: { event: 'task.succeeded' }, fault: { kind: 'duplicate' } },
      { fault: { kind: 'latency', ms: 1 }, probability: 0 },
      { fault: { kind: 'reset' } },
    ]);
    expect(rules.forRequest(submit)?.fault.kind).toBe('reset');
    expect(rules.forCallback({ event: 'task.failed' })).toBeNull();
    expect(rules.forCallback({ event: 'task.succeeded', account: 'acct_1' })?.fault.kind).toBe('duplicate');
    expect(rules.list().map((r) => [r.id, r.matched, r.hits])).toEqual([
      ['fault_1', 1, 1],
      ['fault_2', 1, 0],
      ['fault_3', 1, 1],
    ]);
  });

  it('removes one rule or all, and numbers afresh after clearing', () => {
    const rules = createFaultRules(noSeed);
    expect(rules.empty).toBe(true);
    rules.add([{ fault: { kind: 'reset' } }, { fault: { kind: 'cut', after_chunks: 2 } }]);
    expect(rules.empty).toBe(false);
    expect(rules.remove('fault_1')).toBe(true);
    expect(rules.remove('fault_1')).toBe(false);
    expect(rules.list().map((r) => r.id)).toEqual(['fault_2']);
    rules.clear();
    expect(rules.empty).toBe(true);
    expect(rules.add([{ fault: { kind: 'reset' } }])[0]?.id).toBe('fault_1');
  });

  it('hands out copies: a listed rule does not change with later counts', () => {
    const rules = createFaultRules(noSeed);
    rules.add([{ fault: { kind: 'reset' } }]);
    const [before] = rules.list();
    rules.forRequest(submit);
    expect(before?.hits).toBe(0);
    expect(rules.list()[0]?.hits).toBe(1);
  });
});
