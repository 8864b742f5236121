import Big from 'big.js';
import { Webhook } from 'standardwebhooks';
import { expect } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator, EmulatorOptions } from '../../src/index.ts';
import { expectAccountPoints, TERMINAL } from '../support/points.ts';
import { sendJson } from '../support/json-client.ts';
import type { Reply } from '../support/json-client.ts';
import { responseProblems } from '../support/spec-check.ts';
import type { Received } from '../support/receiver.ts';
import type { WireTask } from '../support/wire-task.ts';

/**
 * A whole emulator listening on a real local port, driven over HTTP with the platform's fetch (undici), and the
 * invariant checks the race suite runs after each load: the ledger of every account, the points of every task,
 * and the callbacks a real receiver got. Answers are checked against the OpenAPI documents as they arrive.
 */

export const ADMIN_TOKEN = 'race-admin-token';
/** 2026-11-23 09:00:00 in Beijing. */
export const START = '2026-11-23T09:00:00+08:00';
export { TERMINAL };

export type Task = WireTask;

export interface Account {
  id: string;
  available: string;
  frozen: string;
  charged: string;
  webhook_secret: string;
}

export interface LedgerEntry {
  id: number;
  account_id: string;
  kind: 'fund' | 'freeze' | 'charge' | 'refund';
  points: string;
  task_id: string | null;
  call_id?: string;
  at: string;
}

export interface Delivery {
  id: string;
  account_id: string;
  task_id: string | null;
  type: string;
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  next_attempt_at: string | null;
  attempts: { number: number; kind: 'automatic' | 'resend' | 'manual'; ok: boolean; status_code: number | null }[];
}

export type { Reply };

export interface Client {
  get(path: string): Promise<Reply>;
  post(path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  patch(path: string, body: unknown): Promise<Reply>;
}

export interface Live {
  emulator: Emulator;
  base: string;
  admin: Client;
  as(key: string): Client;
  /** What the emulator logged: a scheduled job that threw, an unexpected error. */
  logged: string[];
  close(): Promise<void>;
}

const SPEC_CHECKS_PER_KIND = 5;

/** A path with its ids (segments with digits, but the version) taken out: `/v1/tasks/{id}/cancel`. */
const shapeOf = (path: string): string =>
  (path.split('?')[0] as string)
    .split('/')
    .map((segment) => (/\d/.test(segment) && !/^v\d+$/.test(segment) ? '{id}' : segment))
    .join('/');

/** A fresh in-memory emulator on a manual clock, listening on a free port of 127.0.0.1. */
export async function startLive(options: EmulatorOptions = {}): Promise<Live> {
  const logged: string[] = [];
  const emulator = await createEmulator({
    clock: 'manual',
    startTime: START,
    adminToken: ADMIN_TOKEN,
    allowInsecureWebhooks: true,
    // Generous: a local receiver answers in milliseconds, even on a busy two-core machine.
    webhookTimeoutMs: 5_000,
    log: (message) => void logged.push(message),
    ...options,
  });
  const base = await emulator.listen(0, '127.0.0.1');
  const checked = new Map<string, number>();
  const client = (auth: string): Client => {
    const send = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> => {
      const reply = await sendJson(base, auth, method, path, body, headers);
      // Each kind of answer (method, path with ids taken out, status) is checked the first few times it comes:
      // checking thousands of alike answers would cost more than the races themselves.
      const kind = `${method} ${shapeOf(path)} ${reply.status}`;
      const seen = checked.get(kind) ?? 0;
      checked.set(kind, seen + 1);
      if (seen < SPEC_CHECKS_PER_KIND) {
        const problems = responseProblems(path.startsWith('/v1') ? 'service' : 'admin', method, path, {
          status: reply.status,
          headers: Object.fromEntries(reply.headers),
          body: reply.body,
        });
        expect(problems, `${method} ${path} → ${reply.status} does not match the document`).toEqual([]);
      }
      return reply;
    };
    return {
      get: (path) => send('GET', path),
      post: (path, body, headers) => send('POST', path, body, headers),
      patch: (path, body) => send('PATCH', path, body),
    };
  };
  return {
    emulator,
    base,
    admin: client(ADMIN_TOKEN),
    as: client,
    logged,
    close: () => emulator.close(),
  };
}

/** The body of a 200 answer, or a failure naming what came instead. */
export function ok<T>(reply: Reply): T {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body as T;
}

/** The error code of an error answer. */
export function codeOf(reply: Reply): string | undefined {
  const body = reply.body as { error?: { code?: string } };
  return body.error?.code;
}

export interface NewAccount {
  id: string;
  keys: string[];
  secret: string;
  /** The points it was opened with: its only funding. */
  opening: string;
}

/** An account with `keys` keys (each with its own settings), all through the control API. */
export async function newAccount(
  live: Live,
  options: { points?: string; webhookUrl?: string; keys?: Record<string, unknown>[]; concurrency?: number } = {},
): Promise<NewAccount> {
  const opening = options.points ?? '100000.000';
  const created = await live.admin.post('/_emulator/accounts', { points: opening, ...(options.webhookUrl ? { webhook_url: options.webhookUrl } : {}) });
  expect(created.status).toBe(201);
  const account = created.body as Account;
  if (options.concurrency !== undefined) ok(await live.admin.patch(`/_emulator/accounts/${account.id}`, { concurrency: options.concurrency }));
  const keys: string[] = [];
  for (const settings of options.keys ?? [{}]) {
    const key = await live.admin.post(`/_emulator/accounts/${account.id}/keys`, settings);
    expect(key.status).toBe(201);
    keys.push((key.body as { key: string }).key);
  }
  return { id: account.id, keys, secret: account.webhook_secret, opening: new Big(opening).toFixed(3) };
}

export const note = (extra: Record<string, unknown> = {}): { model: string; input: Record<string, unknown> } => ({
  model: 'social-notes-data',
  input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true, ...extra },
});

export async function advance(live: Live, seconds: number): Promise<number> {
  return Date.parse(ok<{ now: string }>(await live.admin.post('/_emulator/clock/advance', { seconds })).now);
}

export async function clockNow(live: Live): Promise<number> {
  return Date.parse(ok<{ now: string }>(await live.admin.get('/_emulator/clock')).now);
}

export async function tasksOf(live: Live, accountId: string): Promise<Task[]> {
  const listed = ok<{ data: { task: Task }[] }>(await live.admin.get(`/_emulator/tasks?account=${accountId}&limit=1000`));
  return listed.data.map((entry) => entry.task);
}

export async function deliveriesOf(live: Live, accountId: string): Promise<Delivery[]> {
  return ok<{ data: Delivery[] }>(await live.admin.get(`/_emulator/webhooks/deliveries?account=${accountId}`)).data;
}

export async function ledgerOf(live: Live, accountId: string): Promise<LedgerEntry[]> {
  return ok<{ data: LedgerEntry[] }>(await live.admin.get(`/_emulator/accounts/${accountId}/ledger`)).data;
}

/**
 * The points invariants of one account (test/support/points.ts), plus what these races must never do: overdraw,
 * or settle a task more than once (failures, timeouts and cancels refund in full, once; a success is charged
 * once).
 * @see reference "What the service does" (points frozen, settled, refunded), "Task object" points
 */
export async function checkLedger(live: Live, account: NewAccount): Promise<{ tasks: Task[]; ledger: LedgerEntry[] }> {
  const [view, ledger, tasks] = await Promise.all([
    live.admin.get(`/_emulator/accounts/${account.id}`).then((r) => ok<Account>(r)),
    ledgerOf(live, account.id),
    tasksOf(live, account.id),
  ]);
  const { ofTask } = expectAccountPoints(account, view, ledger, tasks);
  expect(new Big(view.available).gte(0), `account ${account.id}: available ${view.available}`).toBe(true);
  for (const task of tasks) {
    const { charges, refunds } = ofTask(task.id);
    const label = `task ${task.id} (${task.status})`;
    expect(refunds.length, `${label}: refunded at most once`).toBeLessThanOrEqual(1);
    expect(charges.length, `${label}: charged at most once`).toBeLessThanOrEqual(1);
    if (!TERMINAL.has(task.status)) {
      expect([task.points.charged, task.points.refunded], `${label}: nothing settled`).toEqual(['0.000', '0.000']);
    } else if (task.status !== 'succeeded') {
      expect([charges.length, refunds.length], `${label}: one full refund`).toEqual([0, 1]);
    } else {
      expect(charges, `${label}: charged once`).toHaveLength(1);
    }
  }
  return { tasks, ledger };
}

/**
 * Callbacks as the receiver got them, against the emulator's delivery records: every finished task of the
 * account got exactly one message id, and the receiver saw it exactly once per recorded attempt (so only a
 * retry or a resend repeats it), always with the same bytes, signed for the account's secret, carrying the
 * task as it ended. Returns each task's message.
 * @see reference "Events": one callback per task; webhook-id unchanged across retries and resends
 */
export async function checkCallbacks(
  live: Live,
  account: NewAccount,
  received: Received[],
  tasks: Task[],
): Promise<Map<string, Delivery>> {
  const deliveries = (await deliveriesOf(live, account.id)).filter((d) => d.task_id !== null);
  const copies = new Map<string, Received[]>();
  for (const r of received) {
    const id = String(r.headers['webhook-id']);
    copies.set(id, [...(copies.get(id) ?? []), r]);
  }
  const byTask = new Map<string, Delivery>();
  for (const delivery of deliveries) {
    expect(byTask.has(delivery.task_id as string), `task ${delivery.task_id}: a second message ${delivery.id}`).toBe(false);
    byTask.set(delivery.task_id as string, delivery);
  }
  const hook = new Webhook(account.secret);
  for (const task of tasks) {
    const delivery = byTask.get(task.id);
    if (!TERMINAL.has(task.status)) {
      expect(delivery, `unfinished task ${task.id} has a callback`).toBeUndefined();
      continue;
    }
    expect(delivery, `finished task ${task.id} has no callback`).toBeDefined();
    if (!delivery) continue;
    expect(delivery.type).toBe(`task.${task.status}`);
    expect(delivery.status, `message ${delivery.id}`).toBe('delivered');
    expect(delivery.next_attempt_at, `delivered message ${delivery.id} still has an attempt due`).toBeNull();
    expect(delivery.attempts.some((a) => a.ok), `message ${delivery.id} delivered by no attempt`).toBe(true);
    const got = copies.get(delivery.id) ?? [];
    // Each recorded attempt reached the receiver once; nothing else did.
    expect(got.length, `message ${delivery.id} of task ${task.id}: copies vs attempts`).toBe(delivery.attempts.length);
    // Automatic attempts stop at the first that was answered 2xx.
    const automatic = delivery.attempts.filter((a) => a.kind === 'automatic');
    expect(automatic.filter((a) => a.ok).length, `message ${delivery.id}: automatic successes`).toBeLessThanOrEqual(1);
    for (const copy of got) {
      expect(copy.raw.toString('utf8'), `message ${delivery.id}: every copy carries the same bytes`).toBe(delivery.body);
      const headers = Object.fromEntries(Object.entries(copy.headers).map(([k, v]) => [k, String(v)]));
      const envelope = hook.verify(copy.raw.toString('utf8'), headers) as { type: string; data: Task };
      expect(envelope.type).toBe(`task.${task.status}`);
      expect(envelope.data).toEqual(task);
    }
  }
  for (const delivery of deliveries) {
    expect(tasks.some((task) => task.id === delivery.task_id), `message ${delivery.id} for a task of another account`).toBe(true);
  }
  return byTask;
}

/** Message ids the receiver got for more than one payload: must be none, whatever the account. */
export function idsWithTwoPayloads(received: Received[]): string[] {
  const bodies = new Map<string, Set<string>>();
  for (const r of received) {
    const id = String(r.headers['webhook-id']);
    bodies.set(id, (bodies.get(id) ?? new Set()).add(r.raw.toString('utf8')));
  }
  return [...bodies].filter(([, set]) => set.size > 1).map(([id]) => id);
}

/** Mulberry32: a tiny seeded generator, for load mixes that are the same on every run. */
export function seeded(seed: number): { int(below: number): number; pick<T>(items: readonly T[]): T; shuffle<T>(items: T[]): T[] } {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (below: number): number => Math.floor(next() * below);
  return {
    int,
    pick: (items) => items[int(items.length)] as (typeof items)[number],
    shuffle(items) {
      for (let i = items.length - 1; i > 0; i--) {
        const j = int(i + 1);
        [items[i], items[j]] = [items[j] as (typeof items)[number], items[i] as (typeof items)[number]];
      }
      return items;
    },
  };
}
