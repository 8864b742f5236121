import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import Database from 'libsql';
import { openStore } from '../../src/store/index.ts';
import { walChecksum } from '../../src/store/wal-format.ts';

/**
 * Damage done to a stopped store from outside, as a bad disk, an editor or another program would: the bytes of
 * one stored text replaced, read and written as bytes so that no SQLite text conversion stands in the way; a byte
 * of one of its files flipped; the files a kill leaves, to damage.
 */
type Raw = { raw(on: boolean): Raw; get(...params: unknown[]): unknown[] | undefined; all(...params: unknown[]): unknown[][]; run(...params: unknown[]): unknown };

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

/**
 * A store as a killed emulator leaves it, copied at the kill's instant (the SQLite file, its write-ahead log and
 * the log's index, `-shm`), written through a connection of its own whose log is never checkpointed but when
 * asked, so that where each transaction is (the log alone, or the file too) is decided, not raced:
 * - `log`: every acknowledged transaction in the log alone (the file as before them);
 * - `checkpointed`: in the file too (the checkpoint done, the log not yet begun again);
 * - `restarted`: the log begun again (new salts) over a longer earlier generation, whose frames follow;
 * - `cut`: as `log`, then a transaction the kill cut short (pages spilled into the log, no commit);
 * - `stopped`: as a clean stop leaves it, the file alone.
 * Each acknowledged transaction writes one `meta` row of a page or so; their names are returned.
 */
export type LeftBy = 'log' | 'checkpointed' | 'restarted' | 'cut' | 'stopped';

export async function storeLeft(path: string, how: LeftBy): Promise<string[]> {
  const made = `${path}.making`;
  await openStore({ path: made, check: false }).close();
  const db = new Database(made);
  const acked: string[] = [];
  const write = (count: number): void => {
    for (let i = 0; i < count; i += 1) {
      const name = `acked_${acked.length + 1}`;
      (db.prepare('INSERT INTO meta (name, value) VALUES (?, ?)') as unknown as Raw).run(name, JSON.stringify(`${name} `.repeat(300)));
      acked.push(name);
    }
  };
  try {
    db.exec('PRAGMA wal_autocheckpoint = 0');
    write(6);
    if (how === 'checkpointed' || how === 'restarted') db.exec('PRAGMA wal_checkpoint(PASSIVE)');
    if (how === 'restarted') write(2);
    if (how === 'cut') {
      db.exec('PRAGMA cache_size = 10; BEGIN');
      for (let i = 0; i < 40; i += 1) (db.prepare('INSERT INTO meta (name, value) VALUES (?, ?)') as unknown as Raw).run(`cut_${i}`, JSON.stringify('x'.repeat(3000)));
    }
    if (how === 'stopped') db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    for (const suffix of how === 'stopped' ? [''] : ['', '-wal', '-shm']) copyFileSync(`${made}${suffix}`, `${path}${suffix}`);
  } finally {
    db.close();
    for (const suffix of ['', '-wal', '-shm', '.lock', '.lock-journal']) rmSync(`${made}${suffix}`, { force: true });
  }
  return acked;
}

/** The write-ahead log's frames (4096-byte pages): each one's offset, page and commit mark. */
export function walFrames(path: string): { offset: number; page: number; commit: number }[] {
  const wal = readFileSync(`${path}-wal`);
  const frames = [];
  for (let offset = 32; offset + 24 + 4096 <= wal.length; offset += 24 + 4096) frames.push({ offset, page: wal.readUInt32BE(offset), commit: wal.readUInt32BE(offset + 4) });
  return frames;
}

/** One byte of a file changed (its bits flipped by `xor`), in place. */
export function flipByte(file: string, at: number, xor = 0x10): void {
  const bytes = readFileSync(file);
  if (at < 0 || at >= bytes.length) throw new Error(`${file} has no byte ${at}`);
  bytes[at] = (bytes[at] as number) ^ xor;
  writeFileSync(file, bytes);
}

/**
 * What SQLite alone makes of the store's files, as a start on them would (on a copy, which SQLite may change):
 * how many of `acked` it still holds, and whether its integrity check passes. A copy it cannot open holds none.
 */
export function sqliteAlone(path: string, acked: string[]): { kept: number; sound: boolean } {
  const copy = `${path}.alone`;
  for (const suffix of ['', '-wal', '-shm']) {
    rmSync(`${copy}${suffix}`, { force: true });
    if (existsSync(`${path}${suffix}`)) copyFileSync(`${path}${suffix}`, `${copy}${suffix}`);
  }
  try {
    const db = new Database(copy);
    try {
      const names = new Set((db.prepare("SELECT name FROM meta WHERE name LIKE 'acked_%'") as unknown as Raw).raw(true).all().map((row) => String(row[0])));
      const check = (db.prepare('PRAGMA integrity_check') as unknown as Raw).raw(true).all();
      return { kept: acked.filter((name) => names.has(name)).length, sound: check.length === 1 && check[0]?.[0] === 'ok' };
    } finally {
      db.close();
    }
  } catch {
    return { kept: 0, sound: false };
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${copy}${suffix}`, { force: true });
  }
}

/** The log header's version field set to `version`, its checksum made to match again (not what a damaged byte does). */
export function setLogVersion(path: string, version: number): void {
  const wal = readFileSync(`${path}-wal`);
  wal.writeUInt32BE(version, 4);
  const [s0, s1] = walChecksum(wal.subarray(0, 24), (wal.readUInt32BE(0) & 1) === 1);
  wal.writeUInt32BE(s0, 24);
  wal.writeUInt32BE(s1, 28);
  writeFileSync(`${path}-wal`, wal);
}
