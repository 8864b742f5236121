import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEmulator } from 'svc-emulator';
import type { Emulator } from 'svc-emulator';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createOrderService } from './order-service.ts';

// How an integrator tests their own code against the emulator, in-process: no network, no waiting, no points
// spent. (In your project, `svc-emulator` is the installed package.)

let emulator: Emulator;
let admin: (path: string, body?: unknown) => Promise<Record<string, unknown>>;
let receiver: ReturnType<typeof createServer>;
let service: ReturnType<typeof createOrderService>;

beforeEach(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: 'example', allowInsecureWebhooks: true, log: () => undefined });
  const base = await emulator.listen(0);
  admin = async (path, body) => {
    const res = await fetch(`${base}/_emulator${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { Authorization: 'Bearer example', 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await res.json()) as Record<string, unknown>;
  };
  const account = await admin('/accounts', { points: '5000.000' });
  const { key } = (await admin(`/accounts/${String(account['id'])}/keys`, {})) as { key: string };
  // The integrator's callback endpoint, handing raw bodies to their handler.
  receiver = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => res.writeHead(service.handleCallback(raw, req.headers as Record<string, string>)).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  service = createOrderService({
    baseUrl: base,
    apiKey: key,
    webhookSecret: String(account['webhook_secret']),
    callbackUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/callbacks`,
  });
});
afterEach(async () => {
  await emulator.close();
  receiver.close();
});

it('delivers the order when the video succeeds', async () => {
  const order = await service.order('A-1', 'a cat on a skateboard');
  await emulator.clock.advance(10 * 60_000); // ten virtual minutes, at once
  expect(order.state).toBe('delivered');
  expect(order.videoUrl).toMatch(/\/files\/[A-Za-z0-9]{32}\.mp4$/);
});

it('refunds the order when the video times out, and the points come back', async () => {
  await admin('/scenarios', { scenarios: [{ name: 'stuck', match: { models: ['video-gen-2.0-fast'] }, queue_seconds: 5, outcome: 'timeout' }] });
  const order = await service.order('A-2', 'a dog surfing');
  await emulator.clock.advance(61 * 60_000);
  expect(order.state).toBe('refunded');
  const task = emulator.internals.db.tasks.get(order.taskId)?.task;
  expect(task?.error?.code).toBe('timeout');
  expect(task?.points).toEqual({ frozen: '1188.000', charged: '0.000', refunded: '1188.000' });
});

it('orders once even when the order is retried (Idempotency-Key)', async () => {
  const first = await service.order('A-3', 'a bird');
  const again = await service.order('A-3', 'a bird');
  expect(again.taskId).toBe(first.taskId);
});
