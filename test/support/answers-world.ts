import { createEmulator } from '../../src/index.ts';
import type { Emulator, EmulatorOptions } from '../../src/index.ts';

/**
 * An in-process emulator on a real port for the tests that drive text calls with the official clients: a manual
 * clock, an account (1000 points unless told) with a key, every log line kept, and the control API calls those
 * tests make (`load` takes scenarios without their `outcome`, which a text scenario does not use).
 */
export interface AnswersWorld {
  emulator: Emulator;
  base: string;
  key: string;
  logged: string[];
  admin<T>(path: string, body: object): Promise<T>;
  load(scenarios: object[]): Promise<unknown>;
}

const ADMIN_TOKEN = 'x';

export async function startAnswersWorld(options: Partial<EmulatorOptions> = {}, points = '1000.000'): Promise<AnswersWorld> {
  const logged: string[] = [];
  const emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN_TOKEN, log: (line) => logged.push(line), ...options });
  const base = await emulator.listen(0);
  const admin = async <T>(path: string, body: object): Promise<T> => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 201 && res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const load = (scenarios: object[]): Promise<unknown> =>
    admin('/_emulator/scenarios', { scenarios: scenarios.map((s) => ({ outcome: 'succeeded', ...s })) });
  const account = (await admin<{ id: string }>('/_emulator/accounts', { points })).id;
  const { key } = await admin<{ key: string }>(`/_emulator/accounts/${account}/keys`, {});
  return { emulator, base, key, logged, admin, load };
}
