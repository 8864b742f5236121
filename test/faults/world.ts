import request from 'supertest';
import { expect } from 'vitest';
import type { CallRecord } from '../../src/calls/index.ts';
import { createEmulator } from '../../src/index.ts';
import type { Emulator, EmulatorOptions } from '../../src/index.ts';
import { expectResponseMatchesSpec } from '../support/spec-check.ts';

// One listening emulator on a manual clock for a file of fault tests, and what they read back through the control
// API: call records (checked against openapi/admin.yaml), an account's balances, ledger and tasks.

export const ADMIN = 'faults-admin';
export const TEXT = 'svc-text-lite';
export const REQUEST_ID = /^req_[a-z0-9]{24}$/;
export const NOTES = { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/faults', agree: true } };

export interface World {
  emulator: Emulator;
  base: string;
  admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
  /** A fresh funded account and its key: each test its own, so records and ledgers do not mix. */
  newAccount(points?: string): Promise<{ id: string; key: string }>;
  /** Rules in force from now (those of earlier tests removed); none for `[]`. */
  faults(rules: unknown[], seed?: string): Promise<void>;
  /** One call record, as the control API answers it (and checked against the document). */
  record(requestId: string | null | undefined): Promise<CallRecord>;
  /** The call records of a key, oldest first. */
  records(key: string, path?: string): Promise<CallRecord[]>;
  ledger(accountId: string): Promise<{ kind: string; points: string; call_id?: string; task_id: string | null }[]>;
  balances(accountId: string): Promise<{ available: string; frozen: string; charged: string }>;
  tasks(accountId: string): Promise<unknown[]>;
  /** A /v1 request by fetch, as `key`. */
  api(key: string, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
}

export async function openWorld(options: EmulatorOptions = {}): Promise<World> {
  const emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined, ...options });
  const base = await emulator.listen(0);
  const admin: World['admin'] = async <T>(method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(res.ok, `${method} ${path} answered ${res.status}`).toBe(true);
    return (await res.json()) as T;
  };
  return {
    emulator,
    base,
    admin,
    async newAccount(points = '100000.000') {
      const account = await admin<{ id: string }>('POST', '/_emulator/accounts', { points });
      const key = await admin<{ key: string }>('POST', `/_emulator/accounts/${account.id}/keys`, {});
      return { id: account.id, key: key.key };
    },
    async faults(rules, seed) {
      await admin('DELETE', '/_emulator/faults');
      if (rules.length > 0) await admin('POST', '/_emulator/faults', { rules, ...(seed === undefined ? {} : { seed }) });
    },
    async record(requestId) {
      expect(requestId).toMatch(REQUEST_ID);
      const res = await request(emulator.app).get(`/_emulator/records/${requestId}`).set('Authorization', `Bearer ${ADMIN}`);
      expectResponseMatchesSpec(res, 'admin');
      return res.body as CallRecord;
    },
    async records(key, path) {
      const query = new URLSearchParams({ key, limit: '100', ...(path ? { path } : {}) });
      const res = await request(emulator.app).get(`/_emulator/records?${query}`).set('Authorization', `Bearer ${ADMIN}`);
      expectResponseMatchesSpec(res, 'admin');
      return (res.body as { data: CallRecord[] }).data.reverse();
    },
    ledger: async (accountId) => (await admin<{ data: Awaited<ReturnType<World['ledger']>> }>('GET', `/_emulator/accounts/${accountId}/ledger`)).data,
    balances: async (accountId) => {
      const { available, frozen, charged } = await admin<Awaited<ReturnType<World['balances']>>>('GET', `/_emulator/accounts/${accountId}`);
      return { available, frozen, charged };
    },
    tasks: async (accountId) => (await admin<{ data: unknown[] }>('GET', `/_emulator/tasks?account=${accountId}`)).data,
    api: (key, method, path, body, headers = {}) =>
      fetch(`${base}${path}`, {
        method,
        headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
  };
}
