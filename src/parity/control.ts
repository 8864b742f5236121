import { unreachableReason } from '../wire/index.ts';
import { ParityUnreachable } from './replay.ts';
import type { Target } from './replay.ts';

/** The control API refused what the replay needs of it (a wrong admin token, a deployment that is no emulator). */
export class ParitySetupError extends Error {}

/** The emulator's control API (`/_emulator`, openapi/admin.yaml) at the deployment's address, as parity uses it. */
export interface Control {
  /** Moves the virtual clock forward (POST /_emulator/clock/advance), a year per call at most. */
  advance(ms: number): Promise<void>;
  /** The names of the scenarios in force (GET /_emulator/scenarios). */
  scenarioNames(): Promise<Set<string>>;
}

const YEAR_SECONDS = 31_536_000;

export async function openControl(target: Target, token: string): Promise<Control> {
  const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    let res: Response;
    try {
      res = await fetch(`${target.baseUrl}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        signal: AbortSignal.timeout(target.timeoutMs),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw new ParityUnreachable(`cannot reach ${target.baseUrl} (${unreachableReason(err, target.timeoutMs)})`);
    }
    const text = await res.text();
    if (res.status === 401) throw new ParitySetupError(`${target.baseUrl} refused --admin-token on ${method} ${path} (401): give the token the emulator was started with`);
    if (!res.ok) throw new ParitySetupError(`${method} ${target.baseUrl}${path} answered ${res.status}: is this an emulator with its control API? (${text.slice(0, 200)})`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ParitySetupError(`${method} ${target.baseUrl}${path} did not answer JSON: is this an emulator with its control API?`);
    }
  };
  // The clock answers who we are talking to before anything is replayed: an emulator, with this token.
  await call('GET', '/_emulator/clock');
  return {
    async advance(ms) {
      for (let left = ms / 1000; left > 0; left -= YEAR_SECONDS) await call('POST', '/_emulator/clock/advance', { seconds: Math.round(Math.min(left, YEAR_SECONDS) * 1000) / 1000 });
    },
    async scenarioNames() {
      const list = (await call('GET', '/_emulator/scenarios')) as { data?: { name?: unknown }[] };
      return new Set((list.data ?? []).map((s) => s.name).filter((name): name is string => typeof name === 'string'));
    },
  };
}
