import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { expect, it } from 'vitest';
import { closedAfterEach, listenLocal, startProxy } from '../support/proxy.ts';
import { failFirst, ioUntil, startReceiver } from '../support/receiver.ts';
import { beijing, taskOf } from './task-bodies.ts';

// `proxy --relay-callbacks` in front of a service of this file's own that gets the details of its callbacks and of
// its streams wrong, each in one way: a callback sent as text/plain, one with another User-Agent, one stamped in
// milliseconds, one whose data is not the task object, a retry 10 s after a failed delivery; a Messages stream cut
// by an error event in the Chat shape, and a Responses answer incomplete for an undocumented reason. The proxy
// passes everything on unchanged and reports each under the rule's check id (src/observed), and nothing else.

const KEY = 'sk-relay-details';
const REQUEST_ID = 'req_ffffffffffffffffffffffff';
const SECRET = `whsec_${Buffer.from('relay-details-account-secret!!').toString('base64')}`;
const closing = closedAfterEach();

/** How each submission's callback goes wrong (by its metadata.order), and the task id it gets. */
const ORDERS = ['plain', 'agent', 'millis', 'bare', 'early'] as const;
type Order = (typeof ORDERS)[number];
const idOf = (order: Order): string => `T261126100000${order.toUpperCase().padEnd(6, 'X').slice(0, 6)}`;

/** One delivery of `order`'s callback to `url`, as the service would send it but for what `order` gets wrong. */
function sendCallback(url: string, order: Order, t0: number): Promise<Response> {
  const data = taskOf(idOf(order), 'succeeded', order, t0);
  if (order === 'bare') delete data['metadata'];
  const body = JSON.stringify({ type: 'task.succeeded', timestamp: beijing(t0 + 2000), data });
  const id = `msg_${order}1`;
  const sentMs = Date.now();
  const stamp = order === 'millis' ? String(sentMs) : String(Math.floor(sentMs / 1000));
  const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
  // Signed over the stamp as sent, whatever its unit: only the detail under test is wrong.
  const signature = order === 'millis' ? `v1,${createHmac('sha256', key).update(`${id}.${stamp}.${body}`).digest('base64')}` : new Webhook(SECRET).sign(id, new Date(Number(stamp) * 1000), body);
  const headers = {
    'Content-Type': order === 'plain' ? 'text/plain' : 'application/json',
    'User-Agent': order === 'agent' ? 'svc-sender/2.3' : 'Svc-Webhook/1.0',
    'webhook-id': id,
    'webhook-timestamp': stamp,
    'webhook-signature': signature,
  };
  return fetch(url, { method: 'POST', headers, body });
}

it('in front of a service that gets callback and stream details wrong: each is reported under its rule, and all is passed on', async () => {
  const hook = await startReceiver();
  const failing = await startReceiver(failFirst(1));
  closing.push(hook, failing);
  const t0 = Date.now();
  let clockMs = t0;
  const hooks: Partial<Record<Order, string>> = {};
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const sent = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { webhook_url?: string; metadata?: { order: Order } };
      const headers = { 'X-Request-Id': REQUEST_ID };
      if (req.url === '/v1/tasks') {
        const order = sent.metadata?.order ?? 'plain';
        hooks[order] = sent.webhook_url ?? '';
        return void res.writeHead(200, { ...headers, 'Content-Type': 'application/json; charset=utf-8' }).end(JSON.stringify(taskOf(idOf(order), 'queued', order, t0)));
      }
      if (req.url === '/v1/messages') {
        const events = [
          ['message_start', { type: 'message_start', message: { id: 'svcmsg_details1', type: 'message', role: 'assistant', model: 'svc-text-lite', content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 0 } } }],
          ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
          ['ping', { type: 'ping' }],
          ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }],
          // The Chat style's error body, where the Messages style's has type "error" beside it.
          ['error', { error: { type: 'service_unavailable', message: 'The model became unavailable.', code: 'service_unavailable', request_id: REQUEST_ID } }],
        ] as const;
        res.writeHead(200, { ...headers, 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
        return void res.end(events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join(''));
      }
      // A Responses-style answer cut at its maximum, saying so in a word the Responses API does not use.
      const answer = { id: 'svcresp_details1', object: 'response', created_at: Math.floor(t0 / 1000), status: 'incomplete', incomplete_details: { reason: 'length' }, model: 'svc-text-lite', output: [], store: false, usage: { input_tokens: 5, output_tokens: 1, total_tokens: 6 } };
      res.writeHead(200, { ...headers, 'Content-Type': 'application/json; charset=utf-8' }).end(JSON.stringify(answer));
    });
  });
  const upstream = await listenLocal(server, closing);
  const { proxy, url } = await startProxy(upstream, closing, [], { relay: { webhookSecret: SECRET }, deploymentNow: () => clockMs });
  const post = (path: string, body: object): Promise<Response> =>
    fetch(`${url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  for (const order of ORDERS) {
    const res = await post('/v1/tasks', { model: 'social-notes-data', input: { mode: 'note', note: `https://notes.example.com/n/${order}`, agree: true }, webhook_url: order === 'early' ? failing.url : hook.url, metadata: { order } });
    expect(res.status).toBe(200);
  }
  for (const order of ORDERS) expect((await sendCallback(hooks[order] ?? '', order, t0)).status).toBe(order === 'early' ? 500 : 200);
  // The early one again, 10 s later on the deployment's clock: a retry that comes 50 s before its time.
  clockMs += 10_000;
  expect((await sendCallback(hooks.early ?? '', 'early', t0)).status).toBe(200);
  expect(await ioUntil(() => hook.received.length === 4 && failing.received.length === 2)).toBe(true);
  await (await post('/v1/messages', { model: 'svc-text-lite', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'Hello' }] })).text();
  await (await post('/v1/responses', { model: 'svc-text-lite', input: 'Hello', max_output_tokens: 1 })).text();
  await proxy.settled();

  // Passed on as they came: the receiver got the text/plain one as text/plain, the retry as a retry.
  expect(hook.received.find((r) => r.headers['webhook-id'] === 'msg_plain1')?.headers['content-type']).toBe('text/plain');
  expect(failing.received.map((r) => r.headers['webhook-id'])).toEqual(['msg_early1', 'msg_early1']);
  const found = proxy.deviations().map((d) => `${d.check}: ${d.message}`);
  expect(found).toHaveLength(8);
  expect(found).toEqual(
    expect.arrayContaining([
      'callbacks.request.json: callback msg_plain1: Content-Type "text/plain", not application/json',
      'callbacks.request.user-agent: callback msg_agent1: User-Agent "svc-sender/2.3", not Svc-Webhook/1.0',
      expect.stringMatching(/^callbacks\.timestamp\.fresh: callback msg_millis1: webhook-timestamp "\d{13}" is not within 5 minutes of receipt$/),
      expect.stringMatching(/^callbacks\.timestamp\.seconds: callback msg_millis1: webhook-timestamp "\d{13}" is not Unix seconds \(milliseconds\?\)$/),
      'callbacks.data.task-object: callback msg_bare1: task.succeeded: data has no metadata',
      'callbacks.retry.schedule: callback msg_early1: delivery 2 came 10 s after delivery 1 failed (answered 500), documented: 60 s',
      `text.stream.error-event: messages call ${REQUEST_ID}: the error event's type is missing, not "error"`,
      `text.stop-reason.documented: responses call ${REQUEST_ID}: incomplete for "length", documented: max_output_tokens, content_filter`,
    ]),
  );
  // A callback's deviation names the receiver's address; a text call's, its request.
  const plain = proxy.deviations().find((d) => d.check === 'callbacks.request.json');
  expect(plain).toMatchObject({ method: 'POST', path: hook.url, request_id: null });
  expect(proxy.deviations().find((d) => d.check === 'text.stream.error-event')).toMatchObject({ method: 'POST', path: '/v1/messages', request_id: REQUEST_ID });
}, 30_000);
