import { randomBytes } from 'node:crypto';
import { publicAddressProblem } from '../address-guard/index.ts';
import { parseJson } from '../wire/index.ts';

/** Where the proxy takes the callbacks it relays: this, then the token of one submission's address. */
export const CALLBACK_PATH = '/_proxy/callbacks/';

/** How the proxy relays task callbacks (`--relay-callbacks`). */
export interface RelayOptions {
  /** The proxy's address as the service reaches it (default: the address it listens on). */
  publicUrl?: string;
  /**
   * The accounts' signing secret (`whsec_…`), to check each callback's signature. Without it, each account's own
   * secrets are read through the control API when the proxy has one (`admin`); else no signature is checked.
   */
  webhookSecret?: string;
  /** Callback addresses remembered at once (default 20000); the oldest is forgotten first, its callbacks then 404. */
  addresses?: number;
  /**
   * Deployment ms a relayed task's callback has to come through the proxy once a read showed the task terminal
   * (default 60000: the first attempt's window); later, `callbacks.arrival.deadline` is reported, at the latest when
   * the proxy stops.
   */
  callbackDeadlineMs?: number;
  /** Real ms after the read that showed a task terminal before its callback may be overdue (default 1000). */
  callbackGraceMs?: number;
}

/** The signing secrets a callback received at a deployment time (ms) is checked with; none: not checked. */
export type SigningSecrets = (atMs: number) => Promise<readonly string[]>;

/** A submission's own callback address, the account (its key's hash) that submitted it, and its secrets if known. */
export interface RelayTarget {
  original: string;
  account: string;
  secrets?: SigningSecrets;
}

export interface Relay {
  /**
   * A task submission's body with its `webhook_url` replaced by an address of the proxy's own under `base`, or
   * null when it is sent as it is: no address, or one the service refuses anyway (it then refuses it as sent).
   */
  rewrite(body: Buffer, from: Omit<RelayTarget, 'original'>, base: string): Buffer | null;
  /** The original address behind a token, while remembered. */
  target(token: string): RelayTarget | undefined;
}

/** Tokens are capabilities: unguessable, and in a URL path as they are. */
const token = (): string => randomBytes(18).toString('base64url');

/**
 * The callback relay: each submission with a `webhook_url` is sent with an address of the proxy's own instead, and
 * the original is remembered under that address's token, so the callback comes through the proxy, which passes it
 * on unchanged. Nothing else of the body changes: the address's JSON string is replaced where it stands, and the
 * body is written anew only when that cannot be done unambiguously.
 * @see reference "POST /v1/tasks" (webhook_url), "Events" Task callbacks
 */
export function createRelay(options: RelayOptions): Relay {
  const targets = new Map<string, RelayTarget>();
  const cap = options.addresses ?? 20_000;
  return {
    rewrite(body, from, base) {
      const text = body.toString('utf8');
      const sent = parseJson(text);
      if (typeof sent !== 'object' || sent === null || Array.isArray(sent)) return null;
      const original = (sent as Record<string, unknown>)['webhook_url'];
      if (typeof original !== 'string' || !/^https?:$/.test(urlOf(original)?.protocol ?? '')) return null;
      // An https address of the proxy's passes the service's address policy where the original might not: a
      // service that would refuse the original must still refuse it.
      if (base.startsWith('https:') && publicAddressProblem(original, false)) return null;
      const id = token();
      targets.set(id, { original, ...from });
      if (targets.size > cap) targets.delete(targets.keys().next().value as string);
      return Buffer.from(replaced(text, sent as Record<string, unknown>, `${base.replace(/\/+$/, '')}${CALLBACK_PATH}${id}`), 'utf8');
    },
    target: (id) => targets.get(id),
  };
}

function urlOf(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/** `text` with its one `webhook_url` string changed to `address`; re-serialized when the text has no single one. */
function replaced(text: string, sent: Record<string, unknown>, address: string): string {
  const expected = JSON.stringify({ ...sent, webhook_url: address });
  const found = [...text.matchAll(/"webhook_url"\s*:\s*("(?:[^"\\]|\\.)*")/g)];
  const [match] = found;
  if (found.length === 1 && match?.[1] !== undefined) {
    const at = match.index + match[0].length - match[1].length;
    const candidate = `${text.slice(0, at)}${JSON.stringify(address)}${text.slice(at + match[1].length)}`;
    // The same key nested in metadata, say, and not the top-level one: written anew instead.
    if (JSON.stringify(parseJson(candidate)) === expected) return candidate;
  }
  return expected;
}
