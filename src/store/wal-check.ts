import type { Bytes, Frame, Sums } from './wal-format.ts';
import { checksumFrom, fileBytes, FRAME_HEADER, frameAt, readIndex, sameBytes, sameSums, u32, validPageSize, WAL_HEADER, WAL_MAGIC, WAL_VERSION, walChecksum } from './wal-format.ts';

/**
 * Whether SQLite, opening a store, would replay every transaction its write-ahead log holds. SQLite rebuilds the
 * log's index (`-shm`) from the log when it opens a store nobody has open, and stops at the first frame whose salts
 * or checksum do not match, silently: a transaction committed after a damaged frame (or every one, when the log's
 * header is damaged) is dropped, and the next checkpoint makes that final. So the log is read here, before SQLite
 * opens the store, and what SQLite would show is compared with what was committed, page by page:
 *
 * - committed: the log's current generation (frames with its salts, or that chain from one that has them) up to
 *   its last intact commit frame, and up to the last frame the index a killed writer left names (its `mxFrame`,
 *   when that index is whole and describes this log);
 * - shown: the frames SQLite would replay, over the database file.
 *
 * Where they differ, acknowledged writes would be lost: that is damage. Where they agree nothing is lost, however
 * the log looks: frames of an earlier generation after a restart (normal), a transaction a kill cut short (never
 * acknowledged), a damaged frame whose page the database file already holds or a later frame writes again, a
 * damaged index. Where it cannot be told, the answer is that data is lost: never silence.
 */

/**
 * What would be lost if SQLite opened the store now: one line naming the damage, or null when every committed
 * transaction would be replayed (or there is no log). `db`, `wal` and `shm` are the store's three files.
 */
export function logLoss(files: { db: Bytes; wal: Bytes | null; shm: Bytes | null }, walName = 'the write-ahead log'): string | null {
  const { db, wal } = files;
  // The index a killed writer left names the frames it committed, and how many of them the file already holds.
  const index = readIndex(files.shm);
  const unfiled = index ? index.mxFrame - index.nBackfill : 0;
  const noFrames = (what: string): string | null =>
    unfiled > 0 ? `${walName} ${what}, but the store's index names ${unfiled} frames of committed transactions not yet in the database file: they are lost` : null;
  if (!wal) return noFrames('is missing');
  if (wal.size <= WAL_HEADER) return noFrames('holds no frame');
  const header = wal.read(0, WAL_HEADER);
  const dbHead = db.read(0, 100);
  const dbPageSize = dbHead.byteLength >= 18 ? ((dbHead[16] as number) << 8) | (dbHead[17] as number) : 0;
  const logPageSize = u32(header, 8);
  // The file's page size decides (the log's must be the same; a damaged one would misplace every frame).
  const filePageSize = dbPageSize === 1 ? 65536 : dbPageSize;
  const pageSize = validPageSize(filePageSize) ? filePageSize : validPageSize(logPageSize) ? logPageSize : 4096;
  const count = Math.floor((wal.size - WAL_HEADER) / (FRAME_HEADER + pageSize));
  if (count === 0) return noFrames('holds no whole frame');

  const frames: Frame[] = [];
  const frame = (n: number): Frame => (frames[n - 1] ??= frameAt(wal, n, pageSize));
  const head = (f: Frame): Uint8Array => wal.read(f.offset, 8);
  const content = (f: Frame): Uint8Array => wal.read(f.offset + FRAME_HEADER, pageSize);
  const headerStored: Sums = [u32(header, 24), u32(header, 28)];

  // The byte order of the checksums: the magic number's; where that is damaged, the one the first frame matches.
  const magic = u32(header, 0);
  const magicOk = (magic & 0xfffffffe) === WAL_MAGIC;
  const sumOf = (n: number, big: boolean, seed: Sums, page?: Uint8Array, top?: Uint8Array): [number, number] =>
    walChecksum(page ?? content(frame(n)), big, walChecksum(top ?? head(frame(n)), big, seed));
  /**
   * Where frame n's checksum starts: the checksum stored before it (the header's for the first frame), or, where
   * that one is damaged, the one its own bytes give.
   */
  function* starts(n: number, big: boolean): Generator<Sums> {
    const headerSeeds = (): Sums[] => [headerStored, walChecksum(header.subarray(0, 24), big)];
    if (n === 1) return yield* headerSeeds();
    yield frame(n - 1).stored;
    for (const seed of n === 2 ? headerSeeds() : [frame(n - 2).stored]) yield sumOf(n - 1, big, seed);
  }
  const matches = (n: number, big: boolean, page?: Uint8Array, top?: Uint8Array): boolean => {
    for (const seed of starts(n, big)) if (sameSums(sumOf(n, big, seed, page, top), frame(n).stored)) return true;
    return false;
  };
  const big = magicOk ? (magic & 1) === 1 : !matches(1, false) && matches(1, true);
  const memo = new Map<number, boolean>();
  /** Whether frame n's checksum matches, over its own header and page. */
  const checks = (n: number): boolean => {
    let ok = memo.get(n);
    if (ok === undefined) memo.set(n, (ok = matches(n, big)));
    return ok;
  };
  const headerProblem = !magicOk
    ? 'magic number'
    : !validPageSize(logPageSize) || logPageSize !== pageSize
      ? 'page size'
      : !sameSums(walChecksum(header.subarray(0, 24), big), headerStored)
        ? 'checksum'
        : u32(header, 4) !== WAL_VERSION
          ? 'version'
          : null;
  // A whole header of another version (its checksum matches): SQLite refuses to open the store at all.
  if (headerProblem === 'version') return `${walName} is of format version ${u32(header, 4)}, which SQLite does not read (${WAL_VERSION}): it cannot open the store with it`;
  const salts: Sums = [u32(header, 16), u32(header, 20)];

  // What SQLite replays: from the first frame while each has the header's salts and its checksum chains, up to the
  // last commit frame among them; nothing at all when the header is damaged.
  let shown = 0;
  let stopped = headerProblem ? `its header: ${headerProblem}` : null;
  for (let n = 1; !headerProblem && n <= count; n += 1) {
    const f = frame(n);
    const problem = !sameSums(f.salts, salts) ? 'salts' : f.page === 0 ? 'page number' : !checks(n) ? 'checksum' : null;
    if (problem) {
      stopped = `frame ${n} at byte ${f.offset}: ${problem}`;
      break;
    }
    if (f.commit !== 0) shown = n;
  }

  // The current generation: the first frame's salts where the header's are damaged (a restart writes the header
  // and the first frame together). A frame belongs if it has them, or chains from the frame before, which does.
  const generation = !headerProblem || !checks(1) ? salts : frame(1).salts;
  let committed = shown;
  let current = true;
  for (let n = 1; n <= count; n += 1) {
    const f = frame(n);
    const chains: boolean = (current || sameSums(f.salts, generation)) && checks(n);
    current = sameSums(f.salts, generation) || (current && chains);
    if (current && chains && f.commit !== 0 && f.page !== 0) committed = Math.max(committed, n);
  }
  // A last frame of the generation that fails its checksum where the file ends with it is no write cut short:
  // SQLite writes a frame's header, then its page, so a kill between them leaves the file ending mid-frame (or,
  // over a longer earlier generation, that one's frames after it). Its transaction counts as committed.
  const exact = wal.size === WAL_HEADER + count * (FRAME_HEADER + pageSize);
  if (exact && count > committed && sameSums(frame(count).salts, generation) && !checks(count)) committed = count;

  // The index says how far the killed writer committed, when it describes this log (the same salts). An index
  // whose log this is not, naming committed frames, means the log beside the store was replaced.
  const indexed = index && (sameSums(index.salts, salts) || sameSums(index.salts, generation)) ? index : null;
  if (index && !indexed && index.mxFrame > 0) {
    const whose = `${walName} is not this store's (its salts are not those of the store's index)`;
    if (shown > 0) return `${whose}: SQLite would copy ${shown} of its frames into the store`;
    if (unfiled > 0) return `${whose}: the ${unfiled} frames of committed transactions the index names, not yet in the database file, are lost`;
  }
  if (indexed) committed = Math.max(committed, indexed.mxFrame);
  if (committed <= shown) return null;

  const lost = `${walName} is damaged (${stopped ?? `it ends at frame ${count} of the ${committed} its index names`}): committed transactions in frames ${shown + 1} to ${committed} are not in the database file, and SQLite would drop them`;
  const dbPage = (page: number): Uint8Array => db.read((page - 1) * pageSize, pageSize);
  const replayed = new Map<number, Frame>();
  for (let n = 1; n <= shown; n += 1) replayed.set(frame(n).page, frame(n));
  /** What SQLite would show of a page: the last replayed frame's, else the database file's. */
  const shownPage = (page: number): Uint8Array => {
    const f = replayed.get(page);
    return f ? content(f) : dbPage(page);
  };
  // Where the index says the file holds every committed frame, nothing is lost if the replay leaves the file as it is.
  const excused = (): boolean => indexed !== null && indexed.nBackfill >= committed && [...replayed].every(([page, f]) => sameBytes(content(f), dbPage(page)));
  if (committed > count) return excused() ? null : lost;

  const plausible = (page: number): boolean => page >= 1 && page <= Math.max(frame(committed).commit, Math.floor(db.size / pageSize));
  /** What frame n committed, when that can be told: its page number and its page (null: it cannot). */
  const read = (n: number): { page: number; bytes: Uint8Array } | null => {
    const f = frame(n);
    if (f.page !== 0 && checks(n)) return { page: f.page, bytes: content(f) };
    // Its stored checksum alone is damaged: the next frame's chains from the one its header and page give.
    if (n < count && f.page !== 0) {
      const next = frame(n + 1);
      for (const seed of starts(n, big)) if (sameSums(sumOf(n + 1, big, sumOf(n, big, seed)), next.stored)) return { page: f.page, bytes: content(f) };
    }
    // A checkpoint copied it into the database file: that page in its place makes its checksum match.
    if (plausible(f.page)) {
      const filed = dbPage(f.page);
      if (filed.byteLength === pageSize && matches(n, big, filed)) return { page: f.page, bytes: filed };
    }
    // One byte of its page number or commit mark is damaged: the value that makes its checksum match says which.
    const page = content(f);
    const over = checksumFrom(page, big);
    const top = head(f);
    for (const seed of starts(n, big)) {
      for (let at = 0; at < 8; at += 1) {
        const tried = Uint8Array.from(top);
        for (let value = 0; value < 256; value += 1) {
          if (value === top[at]) continue;
          tried[at] = value;
          if (sameSums(over(walChecksum(tried, big, seed)), f.stored) && plausible(u32(tried, 0))) return { page: u32(tried, 0), bytes: page };
        }
      }
    }
    return null;
  };

  // Each page as committed (its last readable frame) beside what SQLite would show of it. A frame that cannot be
  // read has a damaged page under a sound header (the damage looked for is a byte or a few): it matters only if no
  // later frame writes its page again.
  const intended = new Map<number, { n: number; bytes: Uint8Array }>();
  const unread: Frame[] = [];
  for (let n = shown + 1; n <= committed; n += 1) {
    const got = read(n);
    if (got) intended.set(got.page, { n, bytes: got.bytes });
    else unread.push(frame(n));
  }
  for (const f of unread) if (!plausible(f.page) || (intended.get(f.page)?.n ?? 0) < f.n) return excused() ? null : lost;
  for (const [page, { bytes }] of intended) if (!sameBytes(bytes, shownPage(page))) return excused() ? null : lost;
  // The database's size as replayed: a dropped transaction may have been the one that grew it.
  const pagesShown = shown > 0 ? frame(shown).commit : Math.floor(db.size / pageSize);
  return pagesShown >= frame(committed).commit || excused() ? null : lost;
}

/** `logLoss` on a store's files (`PATH`, `PATH-wal`, `PATH-shm`), read before SQLite opens them. */
export function storeLogLoss(path: string): string | null {
  const opened: (ReturnType<typeof fileBytes>)[] = [];
  try {
    const [db, wal, shm] = [path, `${path}-wal`, `${path}-shm`].map((file) => {
      const bytes = fileBytes(file);
      opened.push(bytes);
      return bytes;
    });
    if (!db) return null;
    return logLoss({ db, wal: wal ?? null, shm: shm ?? null }, `the write-ahead log ${path}-wal`);
  } finally {
    for (const bytes of opened) bytes?.close();
  }
}
