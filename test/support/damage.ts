import Database from 'libsql';

/**
 * Damage done to a stopped store from outside, as a bad disk, an editor or another program would: the bytes of
 * one stored text replaced, read and written as bytes so that no SQLite text conversion stands in the way.
 */
type Raw = { raw(on: boolean): Raw; get(...params: unknown[]): unknown[] | undefined; run(...params: unknown[]): unknown };

export function damageText(path: string, table: string, column: string, rowid: number, change: (bytes: Buffer) => Buffer): void {
  const db = new Database(path);
  try {
    const read = (db.prepare(`SELECT CAST(${column} AS BLOB) FROM ${table} WHERE rowid = ?`) as unknown as Raw).raw(true);
    const row = read.get(rowid);
    if (!row) throw new Error(`${table} has no row ${rowid}`);
    const changed = change(Buffer.from(row[0] as Uint8Array));
    (db.prepare(`UPDATE ${table} SET ${column} = CAST(? AS TEXT) WHERE rowid = ?`) as unknown as Raw).run(changed, rowid);
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** One byte that is never valid UTF-8 (0xFF) put in place of the first byte of `within`. */
export const invalidUtf8 =
  (within: string) =>
  (bytes: Buffer): Buffer => {
    const at = bytes.indexOf(within);
    if (at < 0) throw new Error(`no ${within} in the stored text`);
    const copy = Buffer.from(bytes);
    copy[at] = 0xff;
    return copy;
  };

/** The stored JSON cut in half: text that is valid UTF-8 but not JSON. */
export const truncatedJson = (bytes: Buffer): Buffer => bytes.subarray(0, Math.floor(bytes.length / 2));

/** The rowid of a task by its id. */
export function taskRow(path: string, id: string): number {
  const db = new Database(path, { readonly: true });
  try {
    const row = (db.prepare('SELECT seq FROM tasks WHERE id = ?') as unknown as Raw).raw(true).get(id);
    if (!row) throw new Error(`no task ${id}`);
    return Number(row[0]);
  } finally {
    db.close();
  }
}
