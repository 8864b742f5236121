import type { JSONFile } from 'lowdb/node';
import { StoreOpenError } from '../store/index.ts';
import type { StateDocument } from './document.ts';
import { stateProblem } from './import.ts';

/** lowdb's JSON file adapter, loaded when a state file is first read or written, not at every start. */
async function jsonFile<T>(path: string): Promise<JSONFile<T>> {
  const { JSONFile } = await import('lowdb/node');
  return new JSONFile<T>(path);
}

/** Reads a state document from a file (lowdb's JSON file adapter); a missing or wrong one is a one-line error. */
export async function readStateFile(path: string): Promise<StateDocument> {
  let read: unknown;
  try {
    read = await (await jsonFile<unknown>(path)).read();
  } catch (err) {
    throw new StoreOpenError(`${path}: not a state document (${(err as Error).message})`);
  }
  if (read === null) throw new StoreOpenError(`${path}: no such state document`);
  const problem = stateProblem(read);
  if (problem) throw new StoreOpenError(`${path}: not a state document (${problem})`);
  return read as StateDocument;
}

/** Writes a state document readably (indented), replacing the file whole: a reader never sees half of one. */
export async function writeStateFile(path: string, state: StateDocument): Promise<void> {
  await (await jsonFile<StateDocument>(path)).write(state);
}
