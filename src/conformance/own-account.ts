import type { Observer } from '../observed/index.ts';
import { controlRequest } from './setup.ts';
import type { Admin, KeySettings } from './setup.ts';

/**
 * The account the suite made for itself through the control API, for checks that hold answers to its balance:
 * what they read goes into the history the rules of behaviour (src/observed) judge, as their other reads do.
 */
export interface OwnAccount {
  id: string;
  /**
   * Runs `request` between two reads of the account's available points, and gives them to the rules as the balance
   * around the task answer it brought (nothing else of the account moves meanwhile: the suite runs one check at a
   * time). An answer of no task endpoint, or a balance that could not be read, gives nothing.
   */
  aroundBalance<T>(request: () => Promise<T>): Promise<T>;
  /** A further key of the account with `settings`: its answers are the account's, judged with the others. */
  key(settings: KeySettings): Promise<string>;
}

export function ownAccount(observer: Observer, admin: Admin, id: string, timeoutMs: number): OwnAccount {
  const path = `/_emulator/accounts/${encodeURIComponent(id)}`;
  const available = async (): Promise<string | null> => {
    const answer = await controlRequest(admin, 'GET', path, undefined, timeoutMs);
    const body = answer.json as { available?: unknown } | undefined;
    return answer.status === 200 && typeof body?.available === 'string' ? body.available : null;
  };
  return {
    id,
    async aroundBalance(request) {
      const before = await available();
      const seen = observer.history.tasks?.length ?? 0;
      const result = await request();
      const after = await available();
      const tasks = observer.history.tasks ?? [];
      // Exactly one task answer came: the balance reads are around it and nothing else.
      const obs = tasks.length === seen + 1 ? tasks[seen] : undefined;
      if (obs && before !== null && after !== null) obs.balance = { before, after };
      return result;
    },
    async key(settings) {
      const answer = await controlRequest(admin, 'POST', `${path}/keys`, settings, timeoutMs);
      const key = (answer.json as { key?: unknown } | undefined)?.key;
      if (answer.status !== 201 || typeof key !== 'string') throw new Error(`the control API: POST ${path}/keys answered ${answer.status}`);
      return key;
    },
  };
}
