import { ApiError } from '../errors/index.ts';

/**
 * What the store answers when the disk or the file fails it, as API errors so that every request meeting one gets
 * a documented answer with its request id instead of a crash: a full disk is temporary (503, retry), damage is
 * not (500, see `svc-emulator store check`).
 */

/** Seconds a client is asked to wait before retrying a request the full disk refused. */
export const FULL_RETRY_AFTER_SECONDS = 5;

/** The disk holding the store (or its files) is full: nothing of the request was kept. */
export class StoreFullError extends ApiError {
  constructor(what: string) {
    super('service_unavailable', `The emulator's disk is full (${what}); nothing of this request was kept. Retry when space is freed.`, undefined, {
      'Retry-After': String(FULL_RETRY_AFTER_SECONDS),
    });
  }
}

/** A stored record cannot be read: its bytes are not what the emulator wrote (not UTF-8, not JSON). */
export class StoreDamageError extends ApiError {
  constructor(readonly where: string) {
    super('internal_error', `The emulator's store is damaged: ${where}. Run svc-emulator store check.`);
  }
}

const codeOf = (err: unknown): string => String((err as { code?: unknown } | null)?.code ?? '');

/** Whether `err` is SQLite's or the file system's "no space left". */
export const diskFull = (err: unknown): boolean => err instanceof StoreFullError || codeOf(err).startsWith('SQLITE_FULL') || codeOf(err) === 'ENOSPC';

/** Whether `err` is SQLite finding the file damaged. */
export const fileDamaged = (err: unknown): boolean => /^SQLITE_(CORRUPT|NOTADB)/.test(codeOf(err));

/** The error a failed store call becomes: full disk and damage as API errors, anything else unchanged. */
export function storeFault(err: unknown, what: string): unknown {
  if (err instanceof ApiError) return err;
  if (diskFull(err)) return new StoreFullError(what);
  if (fileDamaged(err)) return new StoreDamageError(`${(err as Error).message} (${what})`);
  return err;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A stored text read as bytes, decoded strictly: invalid UTF-8 is damage, named by where it was read. */
export function storedText(bytes: Uint8Array, where: () => string): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new StoreDamageError(`a stored text of ${where()} is not valid UTF-8`);
  }
}

/** A stored JSON record parsed; text that is not JSON is damage. */
export function storedJson<T>(text: unknown, what = 'a stored record'): T {
  try {
    return JSON.parse(text as string) as T;
  } catch {
    throw new StoreDamageError(`${what} is not valid JSON`);
  }
}
