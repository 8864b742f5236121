import { errorOf, unreachableReason } from '../wire/index.ts';

/** The suite cannot start: an address that does not answer, a key or token refused. Nothing was checked. */
export class ConformanceSetupError extends Error {}

/** What each account the suite makes for itself through the control API holds: far more than every check spends. */
export const FUNDED_POINTS = '100000.000';

export interface Admin {
  url: string;
  token: string;
}

export interface Setup {
  apiKey: string;
  secondKey: string | undefined;
  /** The account the suite made for itself through the control API; null when it runs as the given key. */
  account: { id: string; points: string; webhookSecret: string } | null;
}

/**
 * Before any check: each address answers (once, so a deployment that is down is one clear line, not a failure per
 * check), and the key is accepted. With the control API the suite runs as a fresh account it funds there, and
 * makes a second one for the isolation checks: on the emulator points are not real, so no budget applies.
 */
export async function prepare(options: {
  baseUrl: string;
  apiKey?: string;
  secondApiKey?: string;
  admin?: Admin;
  timeoutMs: number;
}): Promise<Setup> {
  const { baseUrl, admin, timeoutMs } = options;
  for (const [name, url] of [['baseUrl', baseUrl], ['admin.url', admin?.url]] as const) {
    if (url !== undefined && !/^https?:\/\/[^/]/.test(url)) throw new ConformanceSetupError(`${name} must start with http:// or https:// (got ${url})`);
  }
  let account: Setup['account'] = null;
  let apiKey = options.apiKey;
  let secondKey = options.secondApiKey;
  if (admin) {
    const health = await reach(admin.url, `${admin.url}/_emulator/health`, {}, timeoutMs);
    if (health.status === 404) throw new ConformanceSetupError(`${admin.url} has no control API (GET /_emulator/health answered 404); the admin address is the emulator's own`);
    const mine = await fundAccount(admin, timeoutMs);
    account = { id: mine.id, points: FUNDED_POINTS, webhookSecret: mine.webhookSecret };
    apiKey = mine.key;
    secondKey ??= (await fundAccount(admin, timeoutMs)).key;
  }
  if (!apiKey) throw new ConformanceSetupError('needs an API key, or the control API to make one');
  const probe = await reach(baseUrl, `${baseUrl}/v1/tasks?limit=1`, { Authorization: `Bearer ${apiKey}` }, timeoutMs);
  if (probe.status === 401) {
    const { code } = errorOf(probe);
    throw new ConformanceSetupError(`${baseUrl} refused the API key (GET /v1/tasks answered 401${code ? ` ${code}` : ''})`);
  }
  return { apiKey, secondKey, account };
}

/** A fresh account funded with FUNDED_POINTS, and a key of it. */
async function fundAccount(admin: Admin, timeoutMs: number): Promise<{ id: string; key: string; webhookSecret: string }> {
  const account = (await control(admin, '/_emulator/accounts', { points: FUNDED_POINTS }, timeoutMs)) as { id: string; webhook_secret: string };
  const key = (await control(admin, `/_emulator/accounts/${account.id}/keys`, {}, timeoutMs)) as { key: string };
  return { id: account.id, key: key.key, webhookSecret: account.webhook_secret };
}

/** A POST to the control API with its token; no answer at all is a setup error saying why. */
const controlPost = (admin: Admin, path: string, body: unknown, timeoutMs: number): Promise<ControlAnswer> => controlRequest(admin, 'POST', path, body, timeoutMs);

/**
 * One call to the control API (openapi/admin.yaml) with its token, for checks that set up what they exercise: a
 * key with limits, a task steered to an end. Its whole answer; no answer at all is a setup error saying why.
 */
export function controlRequest(admin: Admin, method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<ControlAnswer> {
  const headers: Record<string, string> = { Authorization: `Bearer ${admin.token}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return reach(admin.url, `${admin.url}${path}`, headers, timeoutMs, body === undefined ? undefined : JSON.stringify(body), method);
}

/** Settings of a key made through the control API (KeySettings in openapi/admin.yaml). */
export interface KeySettings {
  rpm?: number;
  concurrency?: number;
  quota?: { points: string; period: 'daily' | 'weekly' | 'monthly' };
  models?: string[];
}

/**
 * A fresh account funded with `points` and a key of it with `settings`: a check that exercises a limit gets a
 * key of its own, so the limit touches nothing else the suite does.
 */
export async function accountWithKey(admin: Admin, settings: KeySettings, points = '1000.000', timeoutMs = 30_000): Promise<{ accountId: string; key: string }> {
  const account = (await control(admin, '/_emulator/accounts', { points }, timeoutMs)) as { id: string };
  const key = (await control(admin, `/_emulator/accounts/${account.id}/keys`, settings, timeoutMs)) as { key: string };
  return { accountId: account.id, key: key.key };
}

async function control(admin: Admin, path: string, body: unknown, timeoutMs: number): Promise<unknown> {
  const res = await controlPost(admin, path, body, timeoutMs);
  if (res.status === 401) throw new ConformanceSetupError(`the control API at ${admin.url} refused the admin token (401)`);
  if (res.status !== 201) {
    const { code, message } = errorOf(res);
    throw new ConformanceSetupError(`the control API at ${admin.url}: POST ${path} answered ${res.status}${code ? ` ${code}` : ''}${message ? ` (${message})` : ''}`);
  }
  return res.json;
}

/** The suite's `wait` on the emulator: fast-forwards its clock through the control API. */
export async function advanceClock(admin: Admin, seconds: number, timeoutMs: number): Promise<void> {
  let res: ControlAnswer;
  try {
    res = await controlPost(admin, '/_emulator/clock/advance', { seconds }, timeoutMs);
  } catch (err) {
    throw new Error(`advancing the emulator's clock: ${(err as Error).message}`);
  }
  if (res.status < 200 || res.status > 299) throw new Error(`advancing the emulator's clock: POST /_emulator/clock/advance answered ${res.status}`);
}

export interface ControlAnswer {
  status: number;
  /** The parsed JSON body, or undefined. */
  json: unknown;
}

/** One request, its whole answer read; no answer at all is a setup error saying why, from the error's cause. */
async function reach(origin: string, url: string, headers: Record<string, string>, timeoutMs: number, body?: string, method = body === undefined ? 'GET' : 'POST'): Promise<ControlAnswer> {
  try {
    const res = await fetch(url, { method, headers, signal: AbortSignal.timeout(timeoutMs), ...(body === undefined ? {} : { body }) });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json };
  } catch (err) {
    throw new ConformanceSetupError(`cannot reach ${origin} (${unreachableReason(err, timeoutMs)})`);
  }
}
