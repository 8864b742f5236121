import type { IncomingHttpHeaders } from 'node:http';
import { controlRequest } from '../conformance/index.ts';
import type { Admin } from '../conformance/index.ts';
import { accountOf, keyOf } from './account.ts';
import type { SigningSecrets } from './relay.ts';

/** Real ms an account's secrets, once read, are used for its key's callbacks before they are read again. */
const FRESH_MS = 10_000;
/**
 * Deployment ms likewise: a clock moved on by hand may have let a replaced secret expire (24 clock hours after a
 * rotation) in a moment of real time.
 */
const FRESH_CLOCK_MS = 60_000;
/** Keys whose account's secrets are kept at once; the oldest read is forgotten first. */
const KEYS_KEPT = 256;

interface Signing {
  current: string;
  previous: { secret: string; expiresMs: number }[];
}

interface Kept {
  wallMs: number;
  atMs: number;
  signing: Promise<Signing | null>;
}

/**
 * Where the secrets each callback is checked with come from: the one `--webhook-secret`, or with the control API
 * the secrets of the account whose key submitted the task (GET /_emulator/keys/{key}, then its account), or none.
 * Neither a key nor a secret is ever logged or reported: a problem names the key by its short hash only.
 * @see reference "Events" Task callbacks: Signature, "Control API" keys and accounts
 */
export function signingSecrets(options: { webhookSecret?: string | undefined; admin: Admin | null; timeoutMs: number; wallNow: () => number; log: (line: string) => void }): (headers: IncomingHttpHeaders) => SigningSecrets | undefined {
  const { webhookSecret, admin } = options;
  if (webhookSecret !== undefined) {
    const given: readonly string[] = [webhookSecret];
    return () => () => Promise.resolve(given);
  }
  if (admin === null) return () => undefined;
  const kept = new Map<string, Kept>();
  const warned = new Set<string>();

  const read = async (key: string, account: string): Promise<Signing | null> => {
    const problem = (what: string): null => {
      if (!warned.has(account)) {
        warned.add(account);
        options.log(`proxy: the control API did not give the signing secrets of the account of key ${account} (${what}): the signatures of its callbacks are not checked`);
      }
      return null;
    };
    try {
      const found = await controlRequest(admin, 'GET', `/_emulator/keys/${encodeURIComponent(key)}`, undefined, options.timeoutMs);
      const accountId = (found.json as { account_id?: unknown } | undefined)?.account_id;
      if (found.status !== 200 || typeof accountId !== 'string') return problem(`GET /_emulator/keys/{key} answered ${found.status}`);
      const got = await controlRequest(admin, 'GET', `/_emulator/accounts/${encodeURIComponent(accountId)}`, undefined, options.timeoutMs);
      const body = got.json as { webhook_secret?: unknown; previous_webhook_secrets?: unknown } | undefined;
      if (got.status !== 200 || typeof body?.webhook_secret !== 'string') return problem(`GET /_emulator/accounts/${accountId} answered ${got.status}`);
      const previous = Array.isArray(body.previous_webhook_secrets) ? (body.previous_webhook_secrets as { secret?: unknown; expires_at?: unknown }[]) : [];
      return {
        current: body.webhook_secret,
        previous: previous.flatMap((p) => (typeof p.secret === 'string' ? [{ secret: p.secret, expiresMs: typeof p.expires_at === 'string' ? Date.parse(p.expires_at) : NaN }] : [])),
      };
    } catch (err) {
      return problem((err as Error).message);
    }
  };

  const secretsOf = async (key: string, account: string, atMs: number): Promise<readonly string[]> => {
    const wallMs = options.wallNow();
    let entry = kept.get(account);
    if (!entry || wallMs - entry.wallMs > FRESH_MS || Math.abs(atMs - entry.atMs) > FRESH_CLOCK_MS) {
      entry = { wallMs, atMs, signing: read(key, account) };
      kept.delete(account);
      kept.set(account, entry);
      if (kept.size > KEYS_KEPT) kept.delete(kept.keys().next().value as string);
    }
    const signing = await entry.signing;
    // A replaced secret signs until it expires (an expiry that cannot be read is taken as not yet come).
    return signing ? [signing.current, ...signing.previous.filter((p) => !(p.expiresMs <= atMs)).map((p) => p.secret)] : [];
  };

  return (headers) => {
    const key = keyOf(headers);
    const account = accountOf(headers);
    return key === null || account === null ? undefined : (atMs) => secretsOf(key, account, atMs);
  };
}
