import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { expectResponseMatchesSpec } from '../support/spec-check.ts';

// The dashboard's sign-in kept by the emulator (issue 41, item 9): a link opened in a new tab is signed in without
// the token being stored by the page, and what keeps it is out of reach of anything but the page itself.

const PATH = '/_emulator/ui/sign-in';
const PAGE = { 'X-Emulator-Client': 'dashboard', 'Sec-Fetch-Site': 'same-origin' };

let t: TestEmulator;
let base: string;
beforeEach(async () => {
  t = await startEmulator();
  base = await t.emulator.listen(0);
});
afterEach(() => t.close());

const checked = async (test: request.Test): Promise<request.Response> => {
  const res = await test;
  expectResponseMatchesSpec(res, 'admin');
  return res;
};

/** The cookie a keep answer set, as a browser would send it back (name=value). */
async function signIn(token = ADMIN_TOKEN): Promise<{ cookie: string; attributes: string }> {
  const res = await checked(request(base).post(PATH).set({ ...PAGE, Authorization: `Bearer ${token}` }));
  expect(res.status, JSON.stringify(res.body)).toBe(204);
  const [set] = res.headers['set-cookie'] as unknown as string[];
  const [cookie, ...attributes] = set!.split(';').map((part) => part.trim());
  return { cookie: cookie!, attributes: attributes.join('; ') };
}

describe('the dashboard sign-in', () => {
  it('keeps a checked token behind an HttpOnly, SameSite=Strict cookie of its own path, holding no token', async () => {
    const { cookie, attributes } = await signIn();
    const port = new URL(base).port;
    expect(cookie).toMatch(new RegExp(`^svc_emulator_dashboard_${port}=[A-Za-z0-9_-]{43}$`));
    expect(cookie).not.toContain(ADMIN_TOKEN);
    expect(attributes).toContain('HttpOnly');
    expect(attributes).toContain('SameSite=Strict');
    expect(attributes).toContain(`Path=${PATH}`);

    const res = await checked(request(base).get(PATH).set({ ...PAGE, Cookie: cookie }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ token: ADMIN_TOKEN });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('refuses a wrong token (401, nothing kept) and answers a null token to a browser that holds no sign-in', async () => {
    const wrong = await checked(request(base).post(PATH).set({ ...PAGE, Authorization: 'Bearer nope' }));
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('unauthorized');
    expect(wrong.headers['set-cookie']).toBeUndefined();
    expect(wrong.headers['x-request-id']).toMatch(/^req_[a-z0-9]{24}$/);

    for (const cookie of [undefined, `svc_emulator_dashboard_${new URL(base).port}=made-up`]) {
      const res = await checked(request(base).get(PATH).set({ ...PAGE, ...(cookie ? { Cookie: cookie } : {}) }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ token: null });
    }
  });

  it('gives the token back only to the page itself: not without its header, not to another origin or a served file', async () => {
    const { cookie } = await signIn();
    // A page of another port of this host is same-site (the cookie would go), not same-origin; a served file is
    // shown in an opaque origin, whose requests are cross-site.
    for (const headers of [{ 'Sec-Fetch-Site': 'same-origin' }, { ...PAGE, 'Sec-Fetch-Site': 'same-site' }, { ...PAGE, 'Sec-Fetch-Site': 'cross-site' }]) {
      const res = await request(base).get(PATH).set({ ...headers, Cookie: cookie });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(JSON.stringify(res.body)).not.toContain(ADMIN_TOKEN);
    }
    const cross = await request(base).post(PATH).set({ 'X-Emulator-Client': 'dashboard', 'Sec-Fetch-Site': 'same-site', Authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(cross.status).toBe(401);
    expect(cross.headers['set-cookie']).toBeUndefined();
  });

  it('forgets a sign-out, and a restart forgets every sign-in', async () => {
    const { cookie } = await signIn();
    const out = await checked(request(base).delete(PATH).set({ ...PAGE, Cookie: cookie }));
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect((await request(base).get(PATH).set({ ...PAGE, Cookie: cookie })).body).toEqual({ token: null });

    const again = await signIn();
    await t.close();
    t = await startEmulator();
    base = await t.emulator.listen(Number(new URL(base).port));
    expect((await request(base).get(PATH).set({ ...PAGE, Cookie: again.cookie })).body).toEqual({ token: null });
  });

  it("keeps a session's own admin token, which the page then reads back with no token at all", async () => {
    const made = await t.admin.post('/_emulator/sessions', { name: 'tab' });
    expect(made.status).toBe(201);
    const { cookie } = await signIn(made.body.admin_token);
    const res = await checked(request(base).get(PATH).set({ ...PAGE, Cookie: cookie }));
    expect(res.body).toEqual({ token: made.body.admin_token });
  });

  it('answers another method on the path with 405 and Allow', async () => {
    const res = await checked(request(base).put(PATH).set(PAGE));
    expect(res.status).toBe(405);
    expect(res.headers['allow']).toBe('GET, POST, DELETE');
  });
});
