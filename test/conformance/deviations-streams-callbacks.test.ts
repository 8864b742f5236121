import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { Forwarded } from './deviating.ts';
import { ADMIN, current, deviate, editJson, eventOf, expectAltered, expectFailedExactly, expectFailure, is, isJson, runAgainst, sseBlocks, sseText } from './deviating.ts';
import { useDeviations } from './deviating.ts';

// Streams, stop reasons and callbacks (issue 39): each deviation below passed the suite as it was, which never
// walked these paths; now the checks that walk them fail, and only they (the harness: ./deviating.ts). A callback
// goes from the emulator straight to the suite's receiver, so the deviating deployment's callbacks are the
// emulator's altered on their way by a forwarder of this file's own: the proxy gives the emulator the forwarder's
// address in place of each submission's webhook_url, and the forwarder passes each callback on, altered, to it.

useDeviations();

const isStream = (answer: { headers: Record<string, string> }): boolean => (answer.headers['content-type'] ?? '').startsWith('text/event-stream');

// ---------------------------------------------------------------------------------------------------------------
// The callback forwarder

interface Delivery {
  headers: Record<string, string>;
  body: string;
}

/** What the forwarder does with one callback: alter it (undefined: as it came), or answer the emulator itself. */
type AlterCallback = (delivery: Delivery, n: number) => Promise<Delivery | { answer: number } | undefined> | Delivery | { answer: number } | undefined;

const forwarders: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const f of forwarders.splice(0)) await f.close();
});

/** A forwarder of callbacks to the address in its path; `n` counts the deliveries of each webhook-id, from 1. */
async function startForwarder(alter: AlterCallback): Promise<{ url: string; altered: number }> {
  const counts = new Map<string, number>();
  const state = { url: '', altered: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const headers = plainHeaders(req.headers);
        const id = headers['webhook-id'] ?? '';
        const n = (counts.get(id) ?? 0) + 1;
        counts.set(id, n);
        const sent = { headers, body: Buffer.concat(chunks).toString('utf8') };
        const changed = await alter(structuredClone(sent), n);
        if (changed !== undefined) state.altered += 1;
        if (changed !== undefined && 'answer' in changed) return void res.writeHead(changed.answer).end('dropped by the forwarder');
        const out = changed ?? sent;
        const target = decodeURIComponent((req.url ?? '/').replace(/^\/relay\//, ''));
        const answered = await fetch(target, { method: 'POST', headers: out.headers, body: out.body });
        res.writeHead(answered.status).end(await answered.text());
      })().catch((err: unknown) => res.writeHead(502).end(String(err)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  forwarders.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return state;
}

const HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);
function plainHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).flatMap(([k, v]) => (typeof v === 'string' && !HOP.has(k) ? [[k, v]] : [])));
}

/** The proxy's request deviation that routes every submission's callbacks through the forwarder. */
const viaForwarder =
  (forwarder: { url: string }) =>
  (req: Forwarded): Forwarded | undefined => {
    if (!is(req, 'POST', /^\/v1\/tasks$/)) return undefined;
    const sent = JSON.parse(req.body) as { webhook_url?: unknown };
    if (typeof sent.webhook_url !== 'string') return undefined;
    return { ...req, body: JSON.stringify({ ...sent, webhook_url: `${forwarder.url}/relay/${encodeURIComponent(sent.webhook_url)}` }) };
  };

/** The signing secret of the account a delivery belongs to, from the emulator's control API. */
async function secretOf(webhookId: string): Promise<string> {
  const get = async (path: string): Promise<Record<string, unknown>> => (await (await fetch(`${current().base}${path}`, { headers: { Authorization: `Bearer ${ADMIN}` } })).json()) as Record<string, unknown>;
  const delivery = await get(`/_emulator/webhooks/deliveries/${webhookId}`);
  return String((await get(`/_emulator/accounts/${String(delivery['account_id'])}`))['webhook_secret']);
}

const CALLBACKS = ['callbacks.*'];

// ---------------------------------------------------------------------------------------------------------------

describe('streams and stop reasons', () => {
  const ONLY = ['text.*'];

  it('a chat stream that carries a usage chunk although include_usage was not asked for fails text.chat.stream.without-usage', async () => {
    const p = await deviate({
      // The deployment always sends usage: as if every stream had asked for it.
      request(req) {
        if (!is(req, 'POST', /^\/v1\/chat\/completions$/) || req.headers['x-emulator-scenario'] !== undefined) return undefined;
        const sent = JSON.parse(req.body) as Record<string, unknown>;
        if (sent['stream'] !== true || sent['stream_options'] !== undefined) return undefined;
        return { ...req, body: JSON.stringify({ ...sent, stream_options: { include_usage: true } }) };
      },
    });
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'POST', /^\/v1\/chat\/completions$/);
    expectFailedExactly(report, ONLY, ['text.chat.stream.without-usage']);
    expectFailure(p, report, 'text.chat.stream.without-usage', { message: 'no usage chunk without stream_options.include_usage', method: 'POST', path: '/v1/chat/completions', expected: 'no usage chunk' });
  });

  it('Messages answers that end by themselves with stop_reason "stop" fail the Messages stop reasons and the rule of documented endings', async () => {
    // The suite as it was asked only for answers cut at their maximum (max_tokens 16), and never met this.
    const p = await deviate({
      answer(answer, req) {
        if (!is(req, 'POST', /^\/v1\/messages$/) || answer.status !== 200) return undefined;
        if (isJson(answer)) return editJson(answer, (body) => void (body['stop_reason'] === 'end_turn' && (body['stop_reason'] = 'stop')));
        return { ...answer, body: answer.body.replace('"stop_reason":"end_turn"', '"stop_reason":"stop"') };
      },
    });
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'POST', /^\/v1\/messages$/);
    expectFailedExactly(report, ONLY, ['text.messages.stop-reasons', 'text.stop-reason.documented']);
    // The whole answer meets the document's enum first; the rule names the value.
    expectFailure(p, report, 'text.messages.stop-reasons', { message: /^answer does not match the document: body: \/stop_reason must be equal to one of the allowed values/, method: 'POST', path: '/v1/messages' });
    expect(report.results.find((r) => r.id === 'text.stop-reason.documented')?.failure?.message).toMatch(/^messages call req_[a-z0-9]{24}: ends "stop", documented: end_turn, max_tokens/);
  });

  it('Responses answers cut at their maximum saying incomplete_details.reason "length" fail the Responses stop reasons and the rule', async () => {
    const p = await deviate({
      answer(answer, req) {
        if (!is(req, 'POST', /^\/v1\/responses$/) || answer.status !== 200) return undefined;
        return { ...answer, body: answer.body.replaceAll('"reason":"max_output_tokens"', '"reason":"length"') };
      },
    });
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'POST', /^\/v1\/responses$/);
    expectFailedExactly(report, ONLY, ['text.responses.stop-reasons', 'text.stop-reason.documented']);
    expectFailure(p, report, 'text.responses.stop-reasons', {
      message: 'a whole responses answer cut at its maximum of 1 token says why: incomplete_details.reason max_output_tokens',
      method: 'POST',
      path: '/v1/responses',
      expected: 'max_output_tokens',
      actual: { reason: 'length' },
    });
    const rule = report.results.find((r) => r.id === 'text.stop-reason.documented');
    expect(rule?.failure?.message).toMatch(/^responses call req_[a-z0-9]{24}: incomplete for "length", documented: max_output_tokens, content_filter/);
  });

  it('a Messages error event in the Chat shape (no type "error") fails the Messages error-event check and the rule', async () => {
    const p = await deviate({
      answer(answer, req) {
        if (!is(req, 'POST', /^\/v1\/messages$/) || !isStream(answer)) return undefined;
        const blocks = sseBlocks(answer.body).map((block) => {
          if (eventOf(block) !== 'error') return block;
          const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? '{}') as { error: Record<string, unknown> };
          return `event: error\ndata: ${JSON.stringify({ error: { ...data.error, param: null } })}`;
        });
        return { ...answer, body: sseText(blocks) };
      },
    });
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'POST', /^\/v1\/messages$/);
    expectFailedExactly(report, ONLY, ['text.messages.stream.error-event', 'text.stream.error-event']);
    expectFailure(p, report, 'text.messages.stream.error-event', {
      message: 'the error event has the messages error body: the error event\'s type is missing, not "error"',
      method: 'POST',
      path: '/v1/messages',
      expected: "an error event with {type: 'error', error: {type, message, code, request_id}}",
    });
  });

  it('a chat error chunk not followed by data: [DONE] fails text.chat.stream.error-event', async () => {
    const p = await deviate({
      answer(answer, req) {
        if (!is(req, 'POST', /^\/v1\/chat\/completions$/) || !isStream(answer) || !answer.body.includes('data: {"error"')) return undefined;
        return { ...answer, body: sseText(sseBlocks(answer.body).filter((b) => b !== 'data: [DONE]')) };
      },
    });
    const report = await runAgainst(p, ONLY);
    expectAltered(p, 'POST', /^\/v1\/chat\/completions$/);
    expectFailedExactly(report, ONLY, ['text.chat.stream.error-event']);
    const failure = expectFailure(p, report, 'text.chat.stream.error-event', { message: 'ends with data: [DONE]', method: 'POST', path: '/v1/chat/completions', expected: '[DONE]' });
    expect(String(failure.actual)).toMatch(/^\{"error":\{"message":/);
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('callbacks', () => {
  it('callbacks sent as text/plain fail the rule of JSON callbacks and every check that holds a callback to its details', async () => {
    const forwarder = await startForwarder((d) => ({ ...d, headers: { ...d.headers, 'content-type': 'text/plain' } }));
    const p = await deviate({ request: viaForwarder(forwarder) });
    const report = await runAgainst(p, CALLBACKS);
    expect(forwarder.altered).toBeGreaterThan(5);
    expectFailedExactly(report, CALLBACKS, ['callbacks.canceled.sent', 'callbacks.failed.sent', 'callbacks.retries.every-gap', 'callbacks.rotation.two-signatures', 'callbacks.request.json']);
    expectFailure(p, report, 'callbacks.canceled.sent', { message: 'the canceled callback: Content-Type application/json', method: 'POST', path: '/v1/tasks', expected: 'application/json', actual: 'text/plain' });
    expect(report.results.find((r) => r.id === 'callbacks.request.json')?.failure?.message).toMatch(/^callback msg_\w+: Content-Type "text\/plain", not application\/json/);
  });

  it('a canceled task called back as task.failed (signed anew) fails callbacks.canceled.sent and the rule of terminal types', async () => {
    const forwarder = await startForwarder(async (d) => {
      const envelope = JSON.parse(d.body) as { type: string };
      if (envelope.type !== 'task.canceled') return undefined;
      const body = JSON.stringify({ ...envelope, type: 'task.failed' });
      const id = d.headers['webhook-id'] ?? '';
      const signature = new Webhook(await secretOf(id)).sign(id, new Date(Number(d.headers['webhook-timestamp']) * 1000), body);
      return { headers: { ...d.headers, 'webhook-signature': signature }, body };
    });
    const p = await deviate({ request: viaForwarder(forwarder) });
    const report = await runAgainst(p, CALLBACKS);
    expect(forwarder.altered).toBe(1);
    expectFailedExactly(report, CALLBACKS, ['callbacks.canceled.sent', 'callbacks.terminal.only']);
    expectFailure(p, report, 'callbacks.canceled.sent', { message: 'the canceled callback: type follows the terminal status', method: 'POST', path: '/v1/tasks', expected: 'task.canceled', actual: 'task.failed' });
  });

  it('a message whose 5-minute retry never reaches the receiver fails callbacks.retries.every-gap and the rule of the retry schedule', async () => {
    // The forwarder answers the third delivery of each message (its second retry) 500 itself: the receiver never sees it.
    const forwarder = await startForwarder((_d, n) => (n === 3 ? { answer: 500 } : undefined));
    const p = await deviate({ request: viaForwarder(forwarder) });
    const report = await runAgainst(p, CALLBACKS);
    expect(forwarder.altered).toBe(1);
    expectFailedExactly(report, CALLBACKS, ['callbacks.retries.every-gap', 'callbacks.retry.schedule']);
    expectFailure(p, report, 'callbacks.retries.every-gap', { message: 'retried 300 s after failed delivery 2', method: 'POST', path: '/v1/tasks', expected: 3, actual: 2 });
    // The next came later in the run (the rotation check moves the clock on a day): 300 + 1800 s after the failure,
    // as the receiver stamped it (a delivery is stamped when it comes, within the clock step that made it due).
    const rule = report.results.find((r) => r.id === 'callbacks.retry.schedule')?.failure?.message ?? '';
    expect(rule).toMatch(/^callback msg_\w+: delivery 3 came (\d+)(\.\d)? s after delivery 2 failed \(answered 500\), documented: 300 s/);
    expect(Math.abs(Number(/came ([\d.]+) s/.exec(rule)?.[1]) - 2100)).toBeLessThanOrEqual(3);
  });

  it('a callback during a key rotation signed by the new secret only fails callbacks.rotation.two-signatures', async () => {
    const forwarder = await startForwarder((d) => {
      const entries = (d.headers['webhook-signature'] ?? '').split(' ');
      return entries.length > 1 ? { ...d, headers: { ...d.headers, 'webhook-signature': entries[0] ?? '' } } : undefined;
    });
    const p = await deviate({ request: viaForwarder(forwarder) });
    const report = await runAgainst(p, CALLBACKS);
    expect(forwarder.altered).toBe(1);
    expectFailedExactly(report, CALLBACKS, ['callbacks.rotation.two-signatures']);
    const failure = report.results.find((r) => r.id === 'callbacks.rotation.two-signatures')?.failure;
    expect(failure).toMatchObject({ message: 'during the overlap: two webhook-signature entries', expected: 2, request: { method: 'POST', path: '/v1/tasks' } });
    expect(String(failure?.actual)).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
  });
});
