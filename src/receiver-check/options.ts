import { Webhook } from 'standardwebhooks';
import { START_DEFAULTS } from '../defaults/index.ts';
import { RECEIVER_RULES } from '../verdict/index.ts';

/** What `checkReceiver` takes; the CLI's flags are the same, spelled `--rotated-secret`, `--timeout-ms`, ... */
export interface CheckReceiverOptions {
  /** The receiver's address: callbacks go there and nowhere else. */
  url: string;
  /** The account's signing secret (`whsec_...`), as the receiver holds it. */
  secret: string;
  /** The other secret of a key rotation; without it, a fresh one stands in (the receiver need not know it). */
  rotatedSecret?: string;
  /** The receiver's test hook that answers how many times it acted on a task (`{task_id}` or `?task_id=`). */
  effectsUrl?: string;
  /** Run only these checks (ids, or globs with `*`). */
  only?: readonly string[];
  /** Real ms the receiver has to answer each delivery (default 10000, the reference's). */
  timeoutMs?: number;
  /** Real ms the slowly sent body takes to arrive (default 3000). */
  slowBodyMs?: number;
  /** Deliveries in flight at once, at most (default 8). */
  concurrency?: number;
  /** The machine's time in ms (default Date.now): webhook-timestamps and answer times are real time. */
  now?: () => number;
  /** Told once the run is planned, before anything is sent. */
  onStart?: (start: { deliveries: number; checks: number }) => void;
}

export interface ResolvedOptions {
  url: URL;
  secret: string;
  rotatedSecret: string | null;
  effectsUrl: string | null;
  checks: ReadonlySet<string>;
  timeoutMs: number;
  slowBodyMs: number;
  concurrency: number;
}

/** An option that cannot be used; `option` is its name in CheckReceiverOptions. */
export class ReceiverCheckOptionError extends Error {
  constructor(
    readonly option: keyof CheckReceiverOptions,
    message: string,
  ) {
    super(message);
  }
}

export const DEFAULT_SLOW_BODY_MS = 3_000;
const DEFAULT_CONCURRENCY = 8;
/** node's timers take at most 2^31 - 1 ms; ten minutes is more than any receiver should need. */
const MAX_TIMEOUT_MS = 600_000;

function address(option: 'url' | 'effectsUrl', value: string): URL {
  let url: URL;
  try {
    url = new URL(value.replaceAll('{task_id}', 'T'));
  } catch {
    throw new ReceiverCheckOptionError(option, `is not an address (got ${value})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ReceiverCheckOptionError(option, `must start with http:// or https:// (got ${url.protocol})`);
  return option === 'url' ? new URL(value) : url;
}

function signingSecret(option: 'secret' | 'rotatedSecret', value: string): string {
  // The value stays out of the message: it may sit in a terminal's scrollback or a CI log.
  if (!value.startsWith('whsec_')) throw new ReceiverCheckOptionError(option, "must start with whsec_ (the account's signing secret)");
  try {
    new Webhook(value);
  } catch {
    throw new ReceiverCheckOptionError(option, 'must be whsec_ followed by Base64');
  }
  return value;
}

function whole(option: keyof CheckReceiverOptions, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) throw new ReceiverCheckOptionError(option, `must be a whole number from ${min} to ${max} (got ${value})`);
  return value;
}

const glob = (pattern: string): RegExp => new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);

/** The checks chosen: every one, or those an id or glob of `only` names (each must name one). */
export function chosenChecks(only: readonly string[] | undefined): Set<string> {
  const ids = RECEIVER_RULES.map((r) => r.id);
  if (only === undefined || only.length === 0) return new Set(ids);
  const chosen = new Set<string>();
  for (const pattern of only.flatMap((o) => o.split(',')).map((o) => o.trim()).filter((o) => o !== '')) {
    const matched = ids.filter((id) => glob(pattern).test(id));
    if (matched.length === 0) throw new ReceiverCheckOptionError('only', `${pattern} names no check (the checks: ${ids.join(', ')})`);
    for (const id of matched) chosen.add(id);
  }
  if (chosen.size === 0) throw new ReceiverCheckOptionError('only', 'names no check');
  return chosen;
}

/** The options checked, with their defaults; a ReceiverCheckOptionError for the first that cannot be used. */
export function resolveOptions(options: CheckReceiverOptions): ResolvedOptions {
  const secret = signingSecret('secret', options.secret);
  const rotatedSecret = options.rotatedSecret === undefined ? null : signingSecret('rotatedSecret', options.rotatedSecret);
  if (rotatedSecret === secret) throw new ReceiverCheckOptionError('rotatedSecret', 'is the same as the secret: give the other secret of the rotation');
  return {
    url: address('url', options.url),
    secret,
    rotatedSecret,
    effectsUrl: options.effectsUrl === undefined ? null : (address('effectsUrl', options.effectsUrl), options.effectsUrl),
    checks: chosenChecks(options.only),
    timeoutMs: whole('timeoutMs', options.timeoutMs, START_DEFAULTS.webhookTimeoutMs, 1, MAX_TIMEOUT_MS),
    slowBodyMs: whole('slowBodyMs', options.slowBodyMs, DEFAULT_SLOW_BODY_MS, 0, MAX_TIMEOUT_MS),
    concurrency: whole('concurrency', options.concurrency, DEFAULT_CONCURRENCY, 1, 64),
  };
}
