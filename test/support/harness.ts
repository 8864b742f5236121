import request from 'supertest';
import type { Response, Test } from 'supertest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator, EmulatorOptions } from '../../src/index.ts';
import { expectResponseMatchesSpec } from './spec-check.ts';

export const DEMO_KEY = 'sk-emulator-demo';
export const ADMIN_TOKEN = 'test-admin-token';
/** 2026-11-23 09:00:00 in Beijing. */
export const START = '2026-11-23T09:00:00+08:00';

export interface TestEmulator {
  emulator: Emulator;
  /** /v1 calls as the demo key, each answer checked against openapi/service.yaml. */
  api: ApiClient;
  /** /_emulator calls with the admin token, each answer checked against openapi/admin.yaml. */
  admin: ApiClient;
  /** A /v1 client for another key. */
  as(key: string): ApiClient;
  close(): Promise<void>;
}

export interface ApiClient {
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  post(path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  /** Any request built by hand, still checked against the document. */
  send(build: (agent: ReturnType<typeof request>) => Test): Promise<Response>;
}

/** An in-memory emulator on a manual clock, as tests want it. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<TestEmulator> {
  const emulator = await createEmulator({
    clock: 'manual',
    startTime: START,
    adminToken: ADMIN_TOKEN,
    log: () => undefined,
    ...options,
  });
  const as = (key: string): ApiClient => client(emulator, 'service', { Authorization: `Bearer ${key}` });
  return {
    emulator,
    api: as(DEMO_KEY),
    admin: client(emulator, 'admin', { Authorization: `Bearer ${ADMIN_TOKEN}` }),
    as,
    close: () => emulator.close(),
  };
}

function client(emulator: Emulator, document: 'service' | 'admin', auth: Record<string, string>): ApiClient {
  const checked = async (test: Test): Promise<Response> => {
    const res = await test;
    expectResponseMatchesSpec(res, document);
    return res;
  };
  return {
    get: (path, headers = {}) => checked(request(emulator.app).get(path).set({ ...auth, ...headers })),
    post: (path, body, headers = {}) => {
      const test = request(emulator.app).post(path).set({ ...auth, ...headers });
      return checked(body === undefined ? test : test.send(body as object));
    },
    send: (build) => checked(build(request(emulator.app))),
  };
}

/** A fresh account with its own key, through the control API. */
export async function newAccount(t: TestEmulator, points = '100000.000'): Promise<{ id: string; key: string }> {
  const account = await t.admin.post('/_emulator/accounts', { points });
  const key = await t.admin.post(`/_emulator/accounts/${account.body.id}/keys`, {});
  return { id: account.body.id as string, key: key.body.key as string };
}

export const socialNote = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'social-notes-data',
  input: { mode: 'note', note: 'https://notes.example.com/n/123', agree: true, ...extra },
});
