import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

// Receivers for receiver-check to judge: a careful one written with the `standardwebhooks` library (verify the raw
// bytes, de-duplicate by webhook-id, act once per task, answer at once), and one deliberately broken receiver per
// mistake, each the careful one but for that one thing. Every receiver has the effects hook receiver-check's
// --effects-url reads: GET /effects?task_id=T... answers {"count": N}, how many times it acted on that task.

export interface TestReceiver {
  /** Where callbacks go. */
  url: string;
  /** The effects hook. */
  effectsUrl: string;
  /** Every request as it arrived. */
  received: { headers: IncomingHttpHeaders; raw: Buffer }[];
  close(): Promise<void>;
}

type Verdict = { ok: true; event: { type?: string; data?: { id?: string } } } | { ok: false; why: string };
/** How a receiver verifies a request: the library's way, or a broken one of its own. */
type Verify = (secret: string, raw: Buffer, headers: IncomingHttpHeaders) => Verdict;

interface Behaviour {
  verify: Verify;
  /** A webhook-id already handled is answered before it is verified (the accepts-forged receiver's mistake). */
  seenBeforeVerify?: boolean;
  /** The answer to a verified message whose webhook-id was handled already (default 200, and not acted on again). */
  seen?: 'acknowledge' | 'refuse' | 'act-again';
  /** Real ms before a verified message is answered (the work done before acknowledging). */
  answerAfterMs?: number;
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** The Standard Webhooks library, as the reference asks: the raw bytes, every v1 entry, the 5-minute window. */
export const libraryVerify: Verify = (secret, raw, headers) => {
  try {
    return { ok: true, event: (new Webhook(secret).verify(raw.toString('utf8'), headers as Record<string, string>) ?? {}) as { type?: string } };
  } catch (err) {
    return { ok: false, why: (err as Error).message };
  }
};

const hmac = (secret: string, content: string): string =>
  createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(content).digest('base64');
const same = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Hand-written verification over the raw bytes; `window` false leaves out the timestamp check, `single` takes the header as one entry. */
const handVerify =
  ({ window, single }: { window: boolean; single: boolean }): Verify =>
  (secret, raw, headers) => {
    const id = header(headers, 'webhook-id');
    const timestamp = header(headers, 'webhook-timestamp');
    const signature = header(headers, 'webhook-signature');
    if (!id || !timestamp || !signature) return { ok: false, why: 'missing headers' };
    if (window && Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return { ok: false, why: 'timestamp out of the window' };
    const expected = hmac(secret, `${id}.${timestamp}.${raw.toString('utf8')}`);
    // The single-signature mistake: the whole header after `v1,` taken as the one signature.
    const entries = single ? [signature] : signature.split(' ');
    const match = entries.some((entry) => entry.startsWith('v1,') && same(entry.slice(3), expected));
    if (!match) return { ok: false, why: 'no matching signature' };
    try {
      return { ok: true, event: JSON.parse(raw.toString('utf8')) as { type?: string } };
    } catch {
      return { ok: false, why: 'not JSON' };
    }
  };

/** The library again, but over the body parsed and serialized again instead of the bytes received. */
const reserializedVerify: Verify = (secret, raw, headers) => {
  let again: string;
  try {
    again = JSON.stringify(JSON.parse(raw.toString('utf8')));
  } catch {
    return { ok: false, why: 'not JSON' };
  }
  return libraryVerify(secret, Buffer.from(again), headers);
};

export const BEHAVIOURS = {
  /** The careful receiver, written with the standardwebhooks library: passes every check. */
  careful: { verify: libraryVerify },
  /** Answers a webhook-id it has handled before verifying it: a forged message under a known id is taken. */
  'accepts-forged': { verify: libraryVerify, seenBeforeVerify: true },
  /** Answers 409 to a webhook-id it has handled: a retry is refused. */
  'refuses-retries': { verify: libraryVerify, seen: 'refuse' },
  /** Verifies the signature by hand and never looks at webhook-timestamp. */
  'no-time-window': { verify: handVerify({ window: false, single: false }) },
  /** Verifies by hand, taking webhook-signature as one `v1,` entry: two entries (a rotation) never match. */
  'breaks-on-double-signature': { verify: handVerify({ window: true, single: true }) },
  /** Does the work before answering: a verified message is answered after 12 s; a refusal at once. */
  'answers-after-12-s': { verify: libraryVerify, answerAfterMs: 12_000 },
  /** Verifies the body as it serializes it again, not the bytes received. */
  'verifies-reserialized-json': { verify: reserializedVerify },
  /** Acknowledges a retry and acts on it again: acts twice on a task whose message came twice. */
  'acts-twice': { verify: libraryVerify, seen: 'act-again' },
} satisfies Record<string, Behaviour>;
export type BehaviourName = keyof typeof BEHAVIOURS;

/** Starts a receiver with the account's `secret` on a free local port. */
export async function startTestReceiver(secret: string, name: BehaviourName): Promise<TestReceiver> {
  const behaviour: Behaviour = BEHAVIOURS[name];
  const handled = new Set<string>();
  const acted = new Map<string, number>();
  const received: TestReceiver['received'] = [];
  const timers = new Set<NodeJS.Timeout>();
  const answer = (res: ServerResponse, status: number, text: string, afterMs = 0): void => {
    if (afterMs === 0) return void res.writeHead(status, { 'Content-Type': 'text/plain' }).end(text);
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!res.destroyed) res.writeHead(status).end(text);
    }, afterMs);
    timers.add(timer);
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://receiver');
    if (req.method === 'GET' && url.pathname === '/effects') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ count: acted.get(url.searchParams.get('task_id') ?? '') ?? 0 }));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      received.push({ headers: req.headers, raw });
      const id = header(req.headers, 'webhook-id') ?? '';
      if (behaviour.seenBeforeVerify && handled.has(id)) return answer(res, 200, 'already handled');
      const verdict = behaviour.verify(secret, raw, req.headers);
      if (!verdict.ok) return answer(res, 400, verdict.why);
      const again = handled.has(id);
      if (again && behaviour.seen === 'refuse') return answer(res, 409, 'already handled');
      handled.add(id);
      const task = verdict.event.data?.id;
      if (task && (!again || behaviour.seen === 'act-again')) acted.set(task, (acted.get(task) ?? 0) + 1);
      answer(res, 200, again ? 'duplicate' : 'accepted', behaviour.answerAfterMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    effectsUrl: `http://127.0.0.1:${port}/effects`,
    received,
    close: () =>
      new Promise((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
