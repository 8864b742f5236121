import type { Contract } from '../contract/index.ts';
import { readFaultFile } from '../faults/index.ts';
import { fileBytes, LONG_FILE_BYTES, sizeText } from '../log/index.ts';
import type { Step } from '../log/index.ts';
import { journalStoreBytes, readJournalStore, readStateFile, setJournalStoreAside } from '../state/index.ts';
import type { StateDocument } from '../state/index.ts';
import { storeFileKind, StoreOpenError } from '../store/index.ts';

// The files a start reads before its store opens, each read and checked whole: a refused one stops the start with
// one line (StoreOpenError; exit 2 from the CLI) and leaves the store untouched.

/** The fault file of `--faults`, read and checked before the store opens (a refused one is a one-line StoreOpenError). */
export function readFaultFileOrStop(path: string, contract: Contract): ReturnType<typeof readFaultFile> {
  try {
    return readFaultFile(path, contract);
  } catch (err) {
    throw new StoreOpenError((err as Error).message);
  }
}

/** The state document of `--import`, read and checked (a refused one is a one-line StoreOpenError). */
export async function readStateDocument(path: string, contract: Contract, step: Step): Promise<{ path: string; bytes: number; state: StateDocument }> {
  const bytes = fileBytes(path);
  const state = await step(`reading the state document ${path}`, `${sizeText(bytes)}, checked before the store opens`, bytes >= LONG_FILE_BYTES, () => readStateFile(path, contract));
  return { path, bytes, state };
}

/**
 * The journal store to import before the store opens, if any: `db` itself when it is one (its files are set
 * aside first), else `journalStore` when `db` does not exist yet.
 */
export async function journalToImport(
  db: string,
  journalStore: string | undefined,
  step: Step,
): Promise<{ state: StateDocument; from: string; aside: string | null; long: boolean } | null> {
  const kind = storeFileKind(db);
  const from = kind === 'journal' ? db : kind === 'missing' && journalStore && storeFileKind(journalStore) === 'journal' ? journalStore : null;
  if (!from) return null;
  const bytes = journalStoreBytes(from);
  const long = bytes >= LONG_FILE_BYTES;
  let state: StateDocument;
  try {
    state = await step(`reading the journal store ${from}`, `${sizeText(bytes)}, imported once`, long, () => readJournalStore(from));
  } catch (err) {
    throw new StoreOpenError(`${from}: the journal store cannot be imported: ${(err as Error).message}`);
  }
  return { state, from, aside: from === db ? setJournalStoreAside(db) : null, long };
}
