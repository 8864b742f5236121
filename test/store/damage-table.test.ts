import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { checkStoreFile, openStore, StoreOpenError } from '../../src/store/index.ts';
import { killAll, runCli, startCli } from '../support/cli.ts';
import { flipByte, setLogVersion, sqliteAlone, storeLeft, walFrames } from '../support/damage.ts';
import type { LeftBy } from '../support/damage.ts';

/**
 * Damage to a store's files from outside, one case a row: a byte of the write-ahead log's header (each field), of a
 * frame's header (each field), of a frame's page, the log cut short or gone, its index damaged or gone, another
 * store's log in its place, a byte of the SQLite file. Each row says what must follow:
 *
 * - `kept`: nothing acknowledged is lost (however the files look): the start keeps every acknowledged write, and
 *   `store check` says sound;
 * - `lost`: SQLite would drop acknowledged writes (shown here: SQLite alone, on a copy, loses some or finds the
 *   store damaged): the start is refused with one line naming the damage, `store check` names it, and neither
 *   changes a byte of the files;
 * - `damaged`: the SQLite file is damaged: `store check` says so (the start may serve what it reads, and the check
 *   after the start says so), and a start that meets it is refused with one line;
 * - `refused`: not a store file at all: the start and the check both refuse it with one line;
 * - `torn`: the log ends in the middle of its last frame and no index says more: what a write cut short by a kill
 *   leaves, and so the one loss no file can tell from that (a kill never acknowledges such a write; a power cut
 *   may lose it without --store-sync, as documented): the start keeps all but that transaction, check sound.
 *
 * In this process (the start is openStore, the check checkStoreFile): the files are small and the cases cheap.
 * The real CLI's exit codes and lines for a damaged log are in the last test.
 */

type Outcome = 'kept' | 'torn' | { lost: RegExp } | { damaged: RegExp } | { refused: RegExp };
type Damage = (path: string) => void;

const wal = (path: string): string => `${path}-wal`;
/** Frame n's byte at `at` (0 to 23 its header, 24 on its page), or the last frame's for n = -1. */
const inFrame =
  (n: number, at: number, xor = 0x10): Damage =>
  (path) => {
    const frames = walFrames(path);
    const frame = n === -1 ? frames[frames.length - 1] : frames[n - 1];
    if (!frame) throw new Error(`no frame ${n}`);
    flipByte(wal(path), frame.offset + at, xor);
  };
const inHeader =
  (at: number, xor = 0x10): Damage =>
  (path) =>
    flipByte(wal(path), at, xor);
const noIndex: Damage = (path) => rmSync(`${path}-shm`);
const and =
  (...damages: Damage[]): Damage =>
  (path) => {
    for (const damage of damages) damage(path);
  };
const cutInLastFrame =
  (bytes: number): Damage =>
  (path) => {
    const frames = walFrames(path);
    truncateSync(wal(path), (frames[frames.length - 1]?.offset ?? 32) + bytes);
  };
const PAGE = 24 + 2000;
const logLost = (where: string): Outcome => ({ lost: new RegExp(`write-ahead log .*-wal is damaged \\(${where}`) });

const ROWS: [string, LeftBy, Damage, Outcome][] = [
  ['nothing damaged', 'log', () => undefined, 'kept'],
  ['its index deleted', 'log', noIndex, 'kept'],
  ["a byte of its index's header", 'log', (path) => flipByte(`${path}-shm`, 20), 'kept'],
  ['its index overwritten with garbage', 'log', (path) => writeFileSync(`${path}-shm`, Buffer.alloc(32768, 0x5a)), 'kept'],
  ["the log header's magic number", 'log', inHeader(0), logLost('its header: magic number')],
  ["the log header's byte-order bit", 'log', inHeader(3, 1), logLost('its header: checksum')],
  ["the log header's version", 'log', inHeader(5), logLost('its header: checksum')],
  ["the log header's page size", 'log', inHeader(10), logLost('its header: page size')],
  ["the log header's page size, another valid one, the index deleted", 'log', and(inHeader(10, 0x30), noIndex), logLost('its header: page size')],
  ["the log header's checkpoint number", 'log', inHeader(13), logLost('its header: checksum')],
  ["the log header's first salt", 'log', inHeader(17), logLost('its header: checksum')],
  ["the log header's second salt", 'log', inHeader(22), logLost('its header: checksum')],
  ["the log header's first checksum", 'log', inHeader(25), logLost('its header: checksum')],
  ["the log header's second checksum", 'log', inHeader(30), logLost('its header: checksum')],
  ["a frame header's page number", 'log', inFrame(2, 2), logLost('frame 2 at byte 4152: checksum')],
  ["a frame header's page number, zeroed, the index deleted", 'log', and(inFrame(2, 3, 0x03), noIndex), logLost('frame 2 at byte 4152: page number')],
  ["a frame header's commit mark", 'log', inFrame(2, 6), logLost('frame 2 at byte 4152: checksum')],
  ["a frame header's first salt", 'log', inFrame(2, 9), logLost('frame 2 at byte 4152: salts')],
  ["a frame header's second salt", 'log', inFrame(2, 13), logLost('frame 2 at byte 4152: salts')],
  ["a frame header's first checksum", 'log', inFrame(2, 17), logLost('frame 2 at byte 4152: checksum')],
  ["a frame header's second checksum, the index deleted", 'log', and(inFrame(2, 22), noIndex), logLost('frame 2 at byte 4152: checksum')],
  ["a frame's page", 'log', inFrame(2, PAGE), logLost('frame 2 at byte 4152: checksum')],
  ["the last commit frame's page", 'log', inFrame(-1, PAGE), logLost('frame 23 at byte 90672: checksum')],
  ["the last commit frame's page, the index deleted", 'log', and(inFrame(-1, PAGE), noIndex), logLost('frame 23 at byte 90672: checksum')],
  ["the last commit frame's commit mark, the index deleted", 'log', and(inFrame(-1, 6), noIndex), logLost('frame 23 at byte 90672: checksum')],
  ['the log cut in its last frame', 'log', cutInLastFrame(2000), logLost('it ends at frame 22 of the 23 its index names')],
  ['the log cut in its last frame, the index deleted', 'log', and(cutInLastFrame(2000), noIndex), 'torn'],
  ['the log cut to its header', 'log', (path) => truncateSync(wal(path), 32), { lost: /write-ahead log .*-wal holds no frame, but the store's index names 23 frames/ }],
  ['the log deleted', 'log', (path) => rmSync(wal(path)), { lost: /write-ahead log .*-wal is missing, but the store's index names 23 frames/ }],
  ["another store's log in its place", 'log', (path) => copyFileSync(wal(join(path, '..', 'restarted.db')), wal(path)), { lost: /write-ahead log .*-wal is not this store's/ }],
  ['nothing damaged, after a transaction the kill cut short', 'cut', () => undefined, 'kept'],
  ['its index deleted, after a transaction the kill cut short', 'cut', noIndex, 'kept'],
  ["the cut transaction's last frame torn", 'cut', cutInLastFrame(100), 'kept'],
  ["the log header's magic number, everything checkpointed", 'checkpointed', inHeader(0), 'kept'],
  ["the log header's checksum, everything checkpointed, the index deleted", 'checkpointed', and(inHeader(25), noIndex), 'kept'],
  ["a frame's page, everything checkpointed", 'checkpointed', inFrame(2, PAGE), 'kept'],
  ["a frame's page, everything checkpointed, the index deleted", 'checkpointed', and(inFrame(2, PAGE), noIndex), 'kept'],
  ["a frame header's page number, everything checkpointed, the index deleted", 'checkpointed', and(inFrame(2, 3), noIndex), 'kept'],
  ["a frame header's checksum, everything checkpointed, the index deleted", 'checkpointed', and(inFrame(2, 18), noIndex), 'kept'],
  // SQLite would replay the first transaction alone, its pages older than the file's.
  ["a frame header's page number after the first transaction, everything checkpointed", 'checkpointed', inFrame(5, 3), logLost('frame 5 at byte 16512: checksum')],
  // SQLite would replay the frames before the damaged one, older pages over the file's newer ones.
  ["the last commit frame's page, everything checkpointed", 'checkpointed', inFrame(-1, PAGE), logLost('frame 23 at byte 90672: checksum')],
  ['the log deleted, everything checkpointed', 'checkpointed', (path) => rmSync(wal(path)), 'kept'],
  // SQLite refuses to open the store at all (an error that once reached the user as a stack trace).
  ['a log of another format version, everything checkpointed', 'checkpointed', (path) => setLogVersion(path, 3007001), { lost: /write-ahead log .*-wal is of format version 3007001, which SQLite does not read/ }],
  ['nothing damaged, the log begun again over a longer one', 'restarted', () => undefined, 'kept'],
  ['its index deleted, the log begun again over a longer one', 'restarted', noIndex, 'kept'],
  ["a frame's page of the log begun again", 'restarted', inFrame(1, PAGE), logLost('frame 1 at byte 32: checksum')],
  ["a frame's page of the earlier generation, after the current one", 'restarted', inFrame(-1, PAGE), 'kept'],
  ["the SQLite file's change counter", 'stopped', (path) => flipByte(path, 27), 'kept'],
  ["the SQLite file's header string", 'stopped', (path) => flipByte(path, 3), { refused: /not a store file/ }],
  ["the SQLite file's page size", 'stopped', (path) => flipByte(path, 16), { damaged: /^file is not a database$/ }],
  ["the SQLite file's size in pages", 'stopped', (path) => flipByte(path, 31), { damaged: /^database disk image is malformed$/ }],
  ["the type of a page of the SQLite file", 'stopped', (path) => flipByte(path, 4096 * 20), { damaged: /./ }],
  ['garbage over the last page of the SQLite file', 'stopped', (path) => writeFileSync(path, Buffer.concat([readFileSync(path).subarray(0, -4096), Buffer.alloc(4096, 0x5a)])), { damaged: /malformed/ }],
];

let dir: string;
const bases = new Map<LeftBy, string[]>();
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-damage-table-'));
  for (const how of ['log', 'cut', 'checkpointed', 'restarted', 'stopped'] as const) bases.set(how, await storeLeft(join(dir, `${how}.db`), how));
});
afterAll(async () => {
  killAll();
  await rm(dir, { recursive: true, force: true });
});

/** The SQLite file and its log, as digests (a refusal leaves them as they were). */
const files = (path: string): (string | null)[] =>
  ['', '-wal'].map((suffix) => (existsSync(`${path}${suffix}`) ? createHash('sha256').update(readFileSync(`${path}${suffix}`)).digest('hex') : null));

/** The start: the store opened as `start` opens it, and each acknowledged write read back; or its one line. */
async function start(path: string, acked: string[]): Promise<{ kept: number } | { refused: string }> {
  let store;
  try {
    store = openStore({ path, check: false });
  } catch (err) {
    if (!(err instanceof StoreOpenError)) throw err;
    return { refused: err.message };
  }
  try {
    return { kept: acked.filter((name) => store.meta.get(name) !== undefined).length };
  } finally {
    await store.close();
  }
}

const named = (outcome: Outcome): string => (typeof outcome === 'string' ? outcome : Object.keys(outcome)[0] ?? '');

it.each(ROWS.map(([name, how, damage, outcome]) => [name, how, named(outcome), damage, outcome] as const))('a store with %s (left: %s): %s', async (_name, how, _outcome, damage, outcome) => {
  const acked = bases.get(how) ?? [];
  const path = join(dir, `case-${Math.random().toString(36).slice(2)}.db`);
  for (const suffix of ['', '-wal', '-shm']) {
    const from = join(dir, `${how}.db${suffix}`);
    if (existsSync(from)) copyFileSync(from, `${path}${suffix}`);
  }
  damage(path);
  const alone = typeof outcome === 'object' && 'lost' in outcome ? sqliteAlone(path, acked) : null;
  const before = files(path);
  let check: string[] | { refused: string };
  try {
    check = checkStoreFile(path);
  } catch (err) {
    if (!(err instanceof StoreOpenError)) throw err;
    check = { refused: err.message };
  }
  const started = await start(path, acked);
  if (outcome === 'kept' || outcome === 'torn') {
    expect(check).toEqual([]);
    expect(started).toEqual({ kept: outcome === 'kept' ? acked.length : acked.length - 1 });
  } else if ('lost' in outcome) {
    // SQLite alone would lose acknowledged writes (or make the store damaged): never "sound", never a start.
    expect(alone?.kept === acked.length && alone.sound).toBe(false);
    expect(check).toEqual([expect.stringMatching(outcome.lost), expect.stringContaining('not run; the files are left as they were')]);
    expect(started).toEqual({ refused: expect.stringMatching(outcome.lost) });
    expect((started as { refused: string }).refused).toContain(`move ${path}-wal and ${path}-shm aside`);
    expect(files(path)).toEqual(before);
  } else if ('damaged' in outcome) {
    expect(check).toEqual(expect.arrayContaining([expect.stringMatching(outcome.damaged)]));
    if ('refused' in started) expect(started.refused).toMatch(/: the store is damaged \(.*\); see svc-emulator store check$/);
  } else {
    expect(started).toEqual({ refused: expect.stringMatching(outcome.refused) });
    expect(check).toEqual({ refused: expect.stringMatching(outcome.refused) });
  }
  for (const refusal of [started, check]) if ('refused' in refusal) expect(refusal.refused.split('\n')).toHaveLength(1);
});

it('says so from the CLI: a start and a backup refused with one line, exit 2; store check exit 1, the same twice; the log moved aside, the start serves', async () => {
  const path = join(dir, 'cli', 'store.db');
  const acked = await storeLeft(path, 'log');
  flipByte(wal(path), 17);
  const refused = await runCli(['start', '--port', '0', '--db', path]);
  expect(refused.code).toBe(2);
  expect(refused.output.trim().split('\n')).toEqual([expect.stringMatching(/store\.db: the store is damaged: the write-ahead log .*store\.db-wal is damaged \(its header: checksum\): committed transactions in frames 1 to 23 .*move .*store\.db-wal and .*store\.db-shm aside/)]);
  for (let i = 0; i < 2; i += 1) {
    const check = await runCli(['store', 'check', '--db', path]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('store.db-wal is damaged (its header: checksum)');
    expect(check.output).not.toMatch(/\n\s+at /);
  }
  const backup = await runCli(['store', 'backup', '--db', path, join(dir, 'cli', 'backup.db')]);
  expect(backup.code).toBe(2);
  expect(backup.output.trim().split('\n')).toEqual([expect.stringContaining('store.db-wal is damaged')]);
  // Moved aside as the line says (the transactions in the log with it): the store opens without them.
  renameSync(wal(path), join(dir, 'cli', 'aside-wal'));
  renameSync(`${path}-shm`, join(dir, 'cli', 'aside-shm'));
  const cli = await startCli(['--db', path, '--clock', 'manual']);
  expect((await fetch(`${cli.base}/_emulator/health`)).status).toBe(200);
  cli.child.kill('SIGTERM');
  expect(await cli.exited).toBe(0);
  expect(sqliteAlone(path, acked).kept).toBe(0);
});
