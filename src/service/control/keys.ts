import { createKey, findAccount } from '../../accounts/index.ts';
import { ApiError } from '../../errors/index.ts';
import { applySettings, keyView } from '../../keys/index.ts';
import type { SettingsPatch } from '../../keys/index.ts';
import type { ControlDeps } from './deps.ts';

/** API keys with their settings. @see reference "Authentication" 3 */
export function keysControl({ db, clock, random }: Pick<ControlDeps, 'clock' | 'db' | 'random'>) {
  const keyOf = (key: string) => {
    const stored = db.keys.get(key);
    if (!stored) throw new ApiError('not_found', `No key '${key}'.`);
    return stored;
  };
  return {
    /** A new key of the account; its signing secret (when it signs) is shown this once. */
    create(accountId: string, settings: SettingsPatch = {}): ReturnType<typeof keyView> {
      const { key, secret } = db.store.transaction(() => {
        const account = findAccount(db, accountId);
        const created = createKey(db, random, clock.now(), account.id);
        const signing = applySettings(created, settings, random);
        db.keys.put(created);
        return { key: created, secret: signing };
      });
      return keyView(key, clock.now(), secret);
    },
    get: (key: string): ReturnType<typeof keyView> => keyView(keyOf(key), clock.now()),
    update(key: string, settings: SettingsPatch): ReturnType<typeof keyView> {
      const changed = db.store.transaction(() => {
        const stored = keyOf(key);
        const signing = applySettings(stored, settings, random);
        db.keys.put(stored);
        return { key: stored, secret: signing };
      });
      return keyView(changed.key, clock.now(), changed.secret);
    },
  };
}
