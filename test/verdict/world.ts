import { Webhook } from 'standardwebhooks';
import type { Verdict } from '../../src/verdict/index.ts';
import { newAccount, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Answer, Received, Receiver } from '../support/receiver.ts';

// A started emulator (manual clock) that clients reach over a real socket, a callback receiver, and the verdict.
// The control API goes through the harness, each answer checked against openapi/admin.yaml.

export interface World {
  t: TestEmulator;
  /** Where the emulator listens: clients here send real HTTP, as an integrator's code does. */
  base: string;
  receiver: Receiver;
  account: { id: string; key: string; secret: string };
  close(): Promise<void>;
}

/** One emulator with one account whose callbacks go to a receiver answering with `answer`. */
export async function startWorld(answer?: (world: () => World) => Answer): Promise<World> {
  // The receiver's answers read the world it is part of, which exists only once the receiver does.
  const made: { world?: World } = {};
  const receiver = await startReceiver(answer ? answer(() => made.world as World) : undefined);
  const t = await startEmulator({ allowInsecureWebhooks: true, webhookTimeoutMs: 1000 });
  const base = await t.emulator.listen(0);
  const created = await newAccount(t);
  const set = await t.admin.post(`/_emulator/accounts/${created.id}/webhook`, { url: receiver.url });
  const world: World = {
    t,
    base,
    receiver,
    account: { ...created, secret: set.body.webhook_secret as string },
    close: async () => {
      await t.close();
      await receiver.close();
    },
  };
  made.world = world;
  return world;
}

export interface Answered {
  status: number | 'reset';
  requestId: string | null;
  retryAfter: string | null;
  body: Record<string, unknown>;
}

/** One /v1 request over the socket; a connection the emulator drops is `reset`, as a client sees it. */
export async function call(world: World, method: string, path: string, options: { key?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answered> {
  const headers: Record<string, string> = { Authorization: `Bearer ${options.key ?? world.account.key}`, ...options.headers };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  try {
    const res = await fetch(`${world.base}${path}`, { method, headers, ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}) });
    const text = await res.text();
    return { status: res.status, requestId: res.headers.get('x-request-id'), retryAfter: res.headers.get('retry-after'), body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  } catch {
    return { status: 'reset', requestId: null, retryAfter: null, body: {} };
  }
}

/** Adds fault rules through the control API. */
export async function addFaults(world: World, rules: unknown[]): Promise<void> {
  const added = await world.t.admin.post('/_emulator/faults', { rules });
  if (added.status !== 201) throw new Error(`faults not added: ${added.status} ${JSON.stringify(added.body)}`);
}

/** The verdict through the control API (its answer checked against the document). */
export async function verdictOf(world: World, filter: { key?: string; account?: string }): Promise<Verdict> {
  const query = new URLSearchParams(filter).toString();
  const res = await world.t.admin.get(`/_emulator/verdict${query ? `?${query}` : ''}`);
  if (res.status !== 200) throw new Error(`no verdict: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Verdict;
}

export const checkOf = (verdict: Verdict, id: string) => verdict.checks.find((c) => c.id === id);

/** No check failed (those not exercised may stay so). */
export const clean = (verdict: Verdict): string[] => verdict.checks.filter((c) => c.status === 'fail').map((c) => `${c.id}: ${c.reason}`);

export const advance = (world: World, seconds: number) => world.t.admin.post('/_emulator/clock/advance', { seconds });

/** Waits `ms` of real time: a client's own wait (Retry-After, backoff, polling) is real whatever the emulator's clock. */
export const realWait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const headersOf = (r: Received): Record<string, string> => Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));

/** Whether the Standard Webhooks library accepts a received callback under `secret` (signature and timestamp). */
export function verifies(secret: string, r: Received): boolean {
  try {
    new Webhook(secret).verify(r.raw.toString('utf8'), headersOf(r));
    return true;
  } catch {
    return false;
  }
}

/**
 * A careful receiver: verifies each delivery with the Standard Webhooks library (400 when it does not verify: a
 * forged signature, a stale timestamp), acknowledges a webhook-id it has seen already with a 200 and acts on it once.
 */
export const carefulReceiver =
  (world: () => World): Answer =>
  (n, res) => {
    const r = world().receiver.received[n] as Received;
    if (!verifies(world().account.secret, r)) return void res.writeHead(400).end('signature or timestamp does not verify');
    res.writeHead(200).end('ok');
  };

/** The webhook-ids and event types the receiver was sent, in order of arrival. */
export const arrivals = (world: World): { id: string; type: string; taskId: string | undefined }[] =>
  world.receiver.received.map((r) => {
    const body = JSON.parse(r.raw.toString('utf8')) as { type: string; data: { id?: string } };
    return { id: String(r.headers['webhook-id']), type: body.type, taskId: body.data.id };
  });
