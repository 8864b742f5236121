import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Store } from '../store/index.ts';
import type { SessionRecord } from './types.ts';

/** `ses_` + 24 lowercase letters or digits: the one shape a stored id may have before it names a folder. */
export const SESSION_ID = /^ses_[a-z0-9]{24}$/;
const META = 'sessions';

/** Where a session's store and files are kept: beside the default store, each in its own folder (null: memory). */
export function sessionPaths(defaultStore: string | null, id: string): { dir: string; store: string; files: string } | null {
  if (!SESSION_ID.test(id)) throw new Error(`not a session id: ${JSON.stringify(id)}`);
  if (defaultStore === null) return null;
  const dir = join(dirname(defaultStore), 'sessions', id);
  return { dir, store: join(dir, 'store.db'), files: join(dir, 'files') };
}

/** Deletes the session folders beside a file store that `listed` does not name (only names of a session id's shape). */
export function removeUnlisted(defaultStore: string | null, listed: ReadonlySet<string>): void {
  if (defaultStore === null) return;
  const root = join(dirname(defaultStore), 'sessions');
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) if (SESSION_ID.test(name) && !listed.has(name)) rmSync(join(root, name), { recursive: true, force: true });
}

/**
 * The sessions the default store lists, each checked field by field: a stored row is input too. One that does not
 * pass is left out and named in `problems` (its folder is not touched: it may be looked at, or removed by hand).
 */
export function storedSessions(store: Store): { records: SessionRecord[]; problems: string[] } {
  const stored = store.meta.get<unknown>(META);
  if (stored === undefined) return { records: [], problems: [] };
  if (!Array.isArray(stored)) return { records: [], problems: ['the list of sessions is not a list'] };
  const records: SessionRecord[] = [];
  const problems: string[] = [];
  stored.forEach((row: unknown, index) => {
    const problem = recordProblem(row);
    if (problem) problems.push(`session ${index + 1}: ${problem}`);
    else records.push(row as SessionRecord);
  });
  return { records, problems };
}

/** Replaces the stored list (inside the caller's transaction, or as one). */
export function saveSessions(store: Store, records: readonly SessionRecord[]): void {
  store.transaction(() => store.meta.set(META, records));
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function recordProblem(row: unknown): string | null {
  if (!isObject(row)) return 'not an object';
  if (typeof row['id'] !== 'string' || !SESSION_ID.test(row['id'])) return 'its id is not a session id';
  if (typeof row['name'] !== 'string' || row['name'].length > 100) return 'its name is not a short text';
  if (typeof row['admin_token'] !== 'string' || !/^adm_[A-Za-z0-9]{32}$/.test(row['admin_token'])) return 'its admin token is malformed';
  if (!Number.isSafeInteger(row['created_ms'])) return 'its creation time is not a time';
  const ttl = row['ttl_seconds'];
  if (ttl !== null && !(Number.isSafeInteger(ttl) && (ttl as number) > 0)) return 'its time-to-live is not a whole number of seconds';
  const clock = row['clock'];
  if (!isObject(clock) || (clock['mode'] !== 'real' && clock['mode'] !== 'manual') || typeof clock['speed'] !== 'number' || !(clock['speed'] > 0)) return 'its clock is malformed';
  if (row['seed'] !== null && typeof row['seed'] !== 'string') return 'its seed is not a text';
  const accounts = row['accounts'];
  if (accounts !== null && !(Array.isArray(accounts) && accounts.every(isSeededAccount))) return 'its accounts are malformed';
  if (row['faults'] !== null && !isObject(row['faults'])) return 'its faults are malformed';
  return null;
}

const isSeededAccount = (a: unknown): boolean =>
  isObject(a) &&
  typeof a['id'] === 'string' &&
  /^acct_[a-z0-9]{1,64}$/.test(a['id']) &&
  typeof a['points'] === 'string' &&
  /^[0-9]{1,15}(\.[0-9]{1,3})?$/.test(a['points']) &&
  (a['webhook_url'] === null || typeof a['webhook_url'] === 'string') &&
  typeof a['webhook_secret'] === 'string' &&
  /^whsec_[A-Za-z0-9+/=]{1,200}$/.test(a['webhook_secret']) &&
  Array.isArray(a['keys']) &&
  a['keys'].every((k: unknown) => typeof k === 'string' && /^sk-[A-Za-z0-9-]{1,200}$/.test(k));
