import { afterAll, beforeAll, inject } from 'vitest';

/** An answer as a test reads it: a wrong shape fails the expectation that reads it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** A session of one test file: its key, its own admin token, and its own clock. */
export interface Session {
  id: string;
  key: string;
  accountId: string;
  url: string;
  /** A /v1 call with the session's key. */
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: Json }>;
  /** A control call with the session's own admin token: it reaches only this session. */
  control(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }>;
  advance(seconds: number): Promise<string>;
}

async function call(url: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

/** Makes the file's session before its tests, and ends it after them. */
export function useSession(name: string): Session {
  const { url, adminToken } = inject('emulator');
  const session = { url } as Session;
  beforeAll(async () => {
    const made = await call(url, adminToken, 'POST', '/_emulator/sessions', { name, clock: { mode: 'manual' } });
    if (made.status !== 201) throw new Error(`no session: ${JSON.stringify(made.body)}`);
    const token = made.body.admin_token as string;
    Object.assign(session, {
      id: made.body.id,
      key: made.body.key,
      accountId: made.body.account.id,
      api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => call(url, made.body.key, method, path, body, headers),
      control: (method: string, path: string, body?: unknown) => call(url, token, method, path, body),
      advance: async (seconds: number) => (await call(url, token, 'POST', '/_emulator/clock/advance', { seconds })).body.now,
    });
  });
  afterAll(() => session.control('DELETE', `/_emulator/sessions/${session.id}`));
  return session;
}
