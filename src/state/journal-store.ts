import { createReadStream, readdirSync, renameSync, mkdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseTime } from '../clock/index.ts';
import type { StoredDelivery } from '../webhooks/index.ts';
import { STATE_FORMAT, STATE_VERSION } from './document.ts';
import type { StateDocument } from './document.ts';

/**
 * Stores of the journal engine this emulator had before SQLite: a snapshot file (a header line, then
 * `[section, key, value]` lines; or, older still, one JSON document) and journals `PATH.N.journal` of operation
 * lines replayed after it. Read once, at the first start on such a store, into a state document.
 */
type Data = Record<string, unknown> & { ledger: unknown[] };
const KEYED = ['accounts', 'keys', 'tasks', 'idempotency', 'files', 'file_names', 'deliveries', 'calls'];
const RESET = '!reset';

const empty = (): Data => ({ ...Object.fromEntries(KEYED.map((k) => [k, {}])), ledger: [], scenarios: [] });

function apply(data: Data, operation: unknown[]): void {
  const [section, key, value] = operation as [string, string, unknown];
  if (section === RESET) {
    for (const name of Object.keys(data)) delete data[name];
    Object.assign(data, empty(), value);
    return;
  }
  const target = (section === '' ? data : data[section]) as Record<string, unknown> | unknown[] | undefined;
  if (!target || typeof target !== 'object') return;
  if (operation.length === 3) {
    if (Array.isArray(target)) target[Number(key)] = value;
    else Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else if (!Array.isArray(target)) {
    delete target[key];
  }
}

async function eachLine(path: string, onLine: (line: string, last: boolean) => void): Promise<void> {
  let rest = '';
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
    const text = rest + (chunk as string);
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      if (end > start) onLine(text.slice(start, end), false);
      start = end + 1;
    }
    rest = text.slice(start);
  }
  if (rest.trim() !== '') onLine(rest, true);
}

function journalsOf(path: string): { generation: number; path: string }[] {
  const prefix = `${basename(path)}.`;
  return readdirSync(dirname(path))
    .filter((name) => name.startsWith(prefix) && name.endsWith('.journal'))
    .map((name) => ({ generation: Number(name.slice(prefix.length, -'.journal'.length)), path: join(dirname(path), name) }))
    .filter((j) => Number.isInteger(j.generation))
    .sort((a, b) => a.generation - b.generation);
}

/** Reads a journal store into a state document; a damaged line (but a torn last one) is an error naming it. */
export async function readJournalStore(path: string): Promise<StateDocument> {
  const data = empty();
  let generation = 0;
  let first = true;
  await eachLine(path, (line) => {
    const parsed = JSON.parse(line) as unknown;
    if (first) {
      first = false;
      const header = parsed as Record<string, unknown>;
      if (header['format'] === 'svc-emulator-store') {
        generation = Number(header['generation']) || 0;
        return;
      }
      Object.assign(data, header);
      return;
    }
    apply(data, parsed as unknown[]);
  });
  for (const journal of journalsOf(path).filter((j) => j.generation >= generation)) {
    await eachLine(journal.path, (line, last) => {
      let operations: unknown[][];
      try {
        operations = JSON.parse(line) as unknown[][];
      } catch (err) {
        // Only the last line can be torn: a crash stopped its append.
        if (last) return;
        throw new Error(`${journal.path}: a damaged journal line (${(err as Error).message})`);
      }
      for (const operation of operations) apply(data, operation);
    });
  }
  const values = <T>(section: string): T[] => Object.values((data[section] ?? {}) as Record<string, T>);
  const idempotency = Object.entries((data['idempotency'] ?? {}) as Record<string, { task_id: string; model: string; input: string }>).map(([slot, record]) => {
    const space = slot.indexOf(' ');
    return { account_id: slot.slice(0, space), key: slot.slice(space + 1), ...record };
  });
  return {
    format: STATE_FORMAT,
    version: STATE_VERSION,
    exported_at: null,
    clock_ms: typeof data['clock_ms'] === 'number' ? data['clock_ms'] : null,
    accounts: values('accounts'),
    keys: values('keys'),
    tasks: values<StateDocument['tasks'][number]>('tasks').sort((a, b) => a.seq - b.seq),
    idempotency,
    ledger: data.ledger.filter((e) => e !== null && e !== undefined) as StateDocument['ledger'],
    files: values('files'),
    deliveries: values<StoredDelivery>('deliveries').map((d) => ({ ...d, created_ms: d.created_ms ?? parseTime(d.created_at) })),
    calls: values('calls'),
    scenarios: (data['scenarios'] ?? []) as StateDocument['scenarios'],
  };
}

/** The bytes of a journal store: its snapshot and its journals (what an import reads). */
export function journalStoreBytes(path: string): number {
  return [path, ...journalsOf(path).map((j) => j.path)].reduce((sum, file) => sum + statSync(file).size, 0);
}

/** Moves a journal store's files into `PATH.journal-store/`, out of the way of the SQLite file taking its place. */
export function setJournalStoreAside(path: string): string {
  const aside = `${path}.journal-store`;
  mkdirSync(aside, { recursive: true });
  for (const journal of journalsOf(path)) renameSync(journal.path, join(aside, basename(journal.path)));
  renameSync(path, join(aside, basename(path)));
  return aside;
}
