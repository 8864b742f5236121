import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaultRules } from '../../src/faults/index.ts';
import type { RuleInput } from '../../src/faults/index.ts';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { createRecorder } from '../../src/recording/index.ts';
import { runCommand, spawnCommand } from '../support/command.ts';
import { closedAfterEach, startProxy } from '../support/proxy.ts';
import { rawEvents } from '../support/raw-events.ts';

// `proxy --faults`: faults injected in front of a deployment (here an emulator), seen through the official SDKs.

const ADMIN = 'proxy-faults-admin';
const TEXT = 'svc-text-lite';
const NOTES = { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/faults', agree: true } };

let emulator: Emulator;
let direct: string;
let key: string;

beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined });
  direct = await emulator.listen(0);
  const account = (await control('POST', '/_emulator/accounts', { points: '100000.000' })) as { id: string };
  key = ((await control('POST', `/_emulator/accounts/${account.id}/keys`, {})) as { key: string }).key;
});
afterAll(() => emulator.close());

const running = closedAfterEach();

async function control(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${direct}${path}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(res.ok, `${path} answered ${res.status}`).toBe(true);
  return res.json();
}

/** The emulator's call records of one path for the test's key: what reached the deployment. */
async function reached(path: string): Promise<number> {
  const list = (await control('GET', `/_emulator/records?key=${encodeURIComponent(key)}&path=${encodeURIComponent(path)}&limit=100`)) as { data: unknown[] };
  return list.data.length;
}

async function proxyWith(rules: RuleInput[], seed?: string, extra: Parameters<typeof startProxy>[3] = {}) {
  const faults = createFaultRules(() => 'unseeded');
  faults.add(rules, seed);
  return startProxy(direct, running, [], { faults, ...extra });
}

const api = (base: string, method: string, path: string, body?: unknown): Promise<Response> =>
  fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('proxy --faults', () => {
  it('error: the SDK retries through two injected 503s and succeeds; neither reached the service', async () => {
    const { url, proxy } = await proxyWith([{ match: { method: 'POST', path: '/v1/chat/completions' }, fault: { kind: 'error', code: 'service_unavailable' }, times: 2 }]);
    const before = await reached('/v1/chat/completions');
    const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 2 });
    const { data, response } = await client.chat.completions.create({ model: TEXT, messages: [{ role: 'user', content: 'hello' }] }).withResponse();
    expect(response.status).toBe(200);
    expect(data.choices[0]?.message.content).toBeTruthy();
    expect(proxy.faults()).toMatchObject([{ id: 'fault_1', matched: 2, hits: 2 }]);
    expect(await reached('/v1/chat/completions')).toBe(before + 1);
  });

  it("error: the endpoint's shape and status, a request id, Retry-After, and no task created", async () => {
    const { url } = await proxyWith([{ match: { path: '/v1/tasks', method: 'POST' }, fault: { kind: 'error', code: 'rate_limited', retry_after: 3 }, times: 1 }]);
    const before = await reached('/v1/tasks');
    const res = await api(url, 'POST', '/v1/tasks', NOTES);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    const body = (await res.json()) as { error: { code: string; request_id: string } };
    expect(body.error).toMatchObject({ code: 'rate_limited', request_id: res.headers.get('x-request-id') });
    expect(body.error.request_id).toMatch(/^req_[a-z0-9]{24}$/);
    expect(await reached('/v1/tasks')).toBe(before);

    const messages = await proxyWith([{ match: { path: '/v1/messages' }, fault: { kind: 'error', code: 'capacity_shortage' } }]);
    const anthropic = new Anthropic({ apiKey: key, baseURL: messages.url, maxRetries: 0 });
    const failed = await anthropic.messages.create({ model: TEXT, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(Anthropic.APIError);
    expect((failed as InstanceType<typeof Anthropic.APIError>).status).toBe(503);
    expect((failed as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'capacity_shortage', code: 'capacity_shortage' } });
  });

  it('reset: the connection drops after the request was read; nothing reached the service', async () => {
    const { url, proxy } = await proxyWith([{ match: { path: '/v1/tasks' }, fault: { kind: 'reset' }, times: 1 }]);
    const before = await reached('/v1/tasks');
    await expect(api(url, 'POST', '/v1/tasks', NOTES)).rejects.toThrow();
    expect(proxy.faults()[0]?.hits).toBe(1);
    expect(await reached('/v1/tasks')).toBe(before);
    // The next one is not taken (times: 1) and goes through.
    expect((await api(url, 'POST', '/v1/tasks', NOTES)).status).toBe(200);
  });

  it('cut: a stream ends after N events without its error event, and the SDK sees a broken stream', async () => {
    const { url } = await proxyWith([{ match: { path: '/v1/messages' }, fault: { kind: 'cut', after_chunks: 2 } }]);
    const events = await rawEvents(url, key, '/v1/messages', { model: TEXT, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'tell me more' }] });
    expect(events.events).toHaveLength(2);
    expect(events.events.map((e) => /^event: (\S+)/.exec(e)?.[1])).toEqual(['message_start', 'content_block_start']);
    expect(events.ended).toBe('aborted');
    const anthropic = new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0 });
    const seen: string[] = [];
    const broken = await (async () => {
      const stream = await anthropic.messages.create({ model: TEXT, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'tell me more' }] });
      for await (const event of stream) seen.push(event.type);
    })().catch((e: unknown) => e);
    expect(broken).toBeInstanceOf(Error);
    expect(seen).not.toContain('message_stop');
  });

  it('latency: before the status line, and between the events of a stream', async () => {
    const before = await proxyWith([{ match: { path: '/v1/models' }, fault: { kind: 'latency', ms: 300 } }]);
    let started = performance.now();
    expect((await api(before.url, 'GET', '/v1/models')).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);

    const between = await proxyWith([{ match: { path: '/v1/chat/completions' }, fault: { kind: 'latency', ms: 60, between_chunks: true } }]);
    started = performance.now();
    const events = await rawEvents(between.url, key, '/v1/chat/completions', { model: TEXT, stream: true, messages: [{ role: 'user', content: 'a few words' }] });
    expect(events.ended).toBe('end');
    expect(events.events.at(-1)).toBe('data: [DONE]\n\n');
    expect(events.events.length).toBeGreaterThan(3);
    expect(performance.now() - started).toBeGreaterThanOrEqual((events.events.length - 1) * 60 - 10);
  });

  it('trickle: the answer arrives at the given rate, whole', async () => {
    const { url } = await proxyWith([{ match: { path: '/v1/models' }, fault: { kind: 'trickle', bytes_per_second: 4000 } }]);
    const plain = await (await api(direct, 'GET', '/v1/models')).text();
    const started = performance.now();
    const slow = await (await api(url, 'GET', '/v1/models')).text();
    expect(slow).toBe(plain);
    expect(performance.now() - started).toBeGreaterThanOrEqual((plain.length / 4000) * 1000 * 0.8);
  });

  it('probability: the same seed and the same requests inject exactly the same faults', async () => {
    const statuses = async (seed: string): Promise<string> => {
      const { url } = await proxyWith([{ match: { path: '/v1/models' }, fault: { kind: 'error', code: 'internal_error' }, probability: 0.5 }], seed);
      const out: number[] = [];
      for (let i = 0; i < 16; i++) out.push((await api(url, 'GET', '/v1/models')).status);
      return out.join(',');
    };
    const first = await statuses('qa-seed');
    expect(await statuses('qa-seed')).toBe(first);
    expect(first).toContain('500');
    expect(first).toContain('200');
  });

  it('recordings mark injected exchanges; answers the proxy made up are not recorded', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'proxy-faults-'));
    const recorder = createRecorder({ dir, keepContent: false, upstream: direct });
    const { url, proxy } = await proxyWith(
      [
        { match: { path: '/v1/models' }, fault: { kind: 'latency', ms: 1 } },
        { match: { path: '/v1/tasks' }, fault: { kind: 'error', code: 'service_unavailable' } },
      ],
      undefined,
      { onExchange: recorder.onExchange },
    );
    await (await api(url, 'GET', '/v1/models')).text();
    await (await api(url, 'POST', '/v1/tasks', NOTES)).text();
    await proxy.settled();
    await recorder.close();
    const file = readdirSync(dir).find((f) => f.endsWith('.har')) ?? '';
    const har = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { log: { entries: { request: { url: string }; _svcEmulator?: { injectedFault?: unknown } }[] } };
    expect(har.log.entries.map((e) => [new URL(e.request.url).pathname, e._svcEmulator?.injectedFault])).toEqual([['/v1/models', { rule: 'fault_1', kind: 'latency' }]]);
  });

  it('svc-emulator proxy --faults FILE injects from a file, and refuses a file that is not a rule set', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'proxy-faults-'));
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'rules:\n  - fault: { kind: error, code: no_such_code }\n');
    const refused = await runCommand(['proxy', '--upstream', direct, '--port', '0', '--faults', bad], 25_000);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`svc-emulator proxy: --faults: the fault file ${bad} is not a rule set: rules[0].fault.code: must be one of: rate_limited,`);

    const good = join(dir, 'faults.yaml');
    writeFileSync(good, 'seed: ci\nrules:\n  - match: { path: /v1/models }\n    fault: { kind: error, code: rate_limited }\n    times: 1\n');
    const child = spawnCommand(['proxy', '--upstream', direct, '--port', '0', '--faults', good]);
    running.push({ close: async () => void (child.exitCode === null && child.kill('SIGKILL')) });
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const found = /proxy listening on (http:\/\/\S+)/.exec(output);
        if (found && output.includes('injecting faults')) resolve(found[1] ?? '');
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
    });
    expect(output).toContain(`injecting faults: 1 rule(s) from ${good}`);
    const limited = await api(url, 'GET', '/v1/models');
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '1']);
    expect((await api(url, 'GET', '/v1/models')).status).toBe(200);
    const listed = (await (await fetch(`${url}/_emulator/proxy/faults`)).json()) as { data: { id: string; hits: number }[] };
    expect(listed.data).toMatchObject([{ id: 'fault_1', hits: 1 }]);
  }, 40_000);
});
