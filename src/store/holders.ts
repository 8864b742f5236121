import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';

/**
 * The other emulators that have a store open, found by the file itself (its device and inode) rather than by the
 * path that reached it, so a symlink, a hard link or a lock file deleted beside it changes nothing.
 *
 * Linux lists every advisory lock in /proc/locks, and every SQLite connection to a database in WAL mode keeps a
 * shared lock on the database file while it is open: those are the processes that have the store open. A reader
 * (`store check`, a backup, a test reading the file) is one of them too, and may stay; an emulator is the one that
 * also holds its lock file open (`<store path>.lock`, held for as long as it runs), whose store, looked up again,
 * is this very file. A process whose open files cannot be read (another user's) counts as an emulator.
 * `null` where the system keeps no such list.
 */
export function otherEmulators(path: string): number[] | null {
  let locks: string;
  try {
    locks = readFileSync('/proc/locks', 'utf8');
  } catch {
    return null;
  }
  const file = statSync(path, { bigint: true });
  const id = `${deviceText(file.dev)}:${file.ino}`;
  const pids = new Set<number>();
  for (const line of locks.split('\n')) {
    // "1: POSIX  ADVISORY  READ 1799 fe:00:2146421 1073741826 1073742335" (a blocked waiter's line has "->").
    const fields = line.trim().split(/\s+/);
    const at = fields.indexOf(id);
    if (at < 1 || fields[1] === '->') continue;
    const pid = Number(fields[at - 1]);
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid) pids.add(pid);
  }
  return [...pids].filter((pid) => holdsLockOf(pid, file.dev, file.ino));
}

/** st_dev as glibc encodes it, printed as /proc/locks prints the kernel's major:minor (hex). */
function deviceText(dev: bigint): string {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}`;
}

/** Whether process `pid` has open the lock file of a store that is the file (dev, ino). */
function holdsLockOf(pid: number, dev: bigint, ino: bigint): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch (err) {
    // Gone since: not a holder. Not ours to read: assume the worst.
    return (err as NodeJS.ErrnoException).code !== 'ENOENT';
  }
  for (const fd of fds) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    const store = /^(.*)\.lock(?: \(deleted\))?$/.exec(target)?.[1];
    if (!store) continue;
    try {
      const stat = statSync(store, { bigint: true });
      if (stat.dev === dev && stat.ino === ino) return true;
    } catch {
      // No store beside this lock file.
    }
  }
  return false;
}
