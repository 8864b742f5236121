import type { JSONFile } from 'lowdb/node';
import type { Contract } from '../contract/index.ts';
import { ApiError } from '../errors/index.ts';
import { StoreOpenError } from '../store/index.ts';
import { checkStateDocument, refusalLine } from './check.ts';
import type { StateDocument } from './document.ts';

/** lowdb's JSON file adapter, loaded when a state file is first read or written, not at every start. */
async function jsonFile<T>(path: string): Promise<JSONFile<T>> {
  const { JSONFile } = await import('lowdb/node');
  return new JSONFile<T>(path);
}

/**
 * Reads a state document from a file (lowdb's JSON file adapter) and checks it whole, as the control API's import
 * does (checkStateDocument); a missing, unreadable or refused one is a one-line error naming the file and the field.
 */
export async function readStateFile(path: string, contract: Pick<Contract, 'body'>): Promise<StateDocument> {
  let read: unknown;
  try {
    read = await (await jsonFile<unknown>(path)).read();
  } catch (err) {
    throw new StoreOpenError(`${path}: not a state document (${oneLine((err as Error).message)})`);
  }
  if (read === null) throw new StoreOpenError(`${path}: no such state document`);
  try {
    return checkStateDocument(contract, read);
  } catch (err) {
    if (err instanceof ApiError) throw new StoreOpenError(`${path}: not a state document: ${oneLine(refusalLine(err))}`);
    throw err;
  }
}

/** A message on one line, whatever it quotes. */
const oneLine = (message: string): string => message.replace(/\s*\n\s*/g, ' ');

/** Writes a state document readably (indented), replacing the file whole: a reader never sees half of one. */
export async function writeStateFile(path: string, state: StateDocument): Promise<void> {
  await (await jsonFile<StateDocument>(path)).write(state);
}
