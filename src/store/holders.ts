import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';

/**
 * What the operating system says about who has a store's file open, found by the file itself (its device and
 * inode) rather than by the path that reached it: a symlink, a hard link, or any file beside it renamed or deleted
 * changes nothing.
 *
 * Linux lists every advisory lock in /proc/locks, and every SQLite connection to a database in WAL mode keeps a
 * shared lock on the database file while it is open: those are the processes that have the store open, readers
 * (`store check`, a backup, `sqlite3`) and the emulator alike. The emulator among them is the one the store itself
 * names (its `holder` row, writer.ts).
 */

/** The processes other than this one holding a lock on the file; `null` where the system keeps no such list. */
export function lockHolders(path: string): number[] | null {
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
  return [...pids];
}

/** st_dev as glibc encodes it, printed as /proc/locks prints the kernel's major:minor (hex). */
function deviceText(dev: bigint): string {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}`;
}

/**
 * When process `pid` started (clock ticks since boot, field 22 of /proc/PID/stat): a process id is given again
 * once its process has ended, its start time never is. `null` when the process is gone or the system says nothing.
 */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "4242 (node) S 1 …": the name may hold spaces and parentheses, so the fields are counted from its end.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * The processes other than this one that hold the file and the lock file of a name of it open (`<name>.lock`,
 * which an emulator holds for as long as it runs: writer.ts), whatever name reached it. Two emulators started at
 * the same instant by two names of one file (a hard link: SQLite gives each name a log of its own, so neither sees
 * the other's claim yet) each find the other here. A process whose open files cannot be read (another user's)
 * counts. `null` where the system keeps no list of the file's holders.
 */
export function lockFileHolders(path: string): number[] | null {
  const holders = lockHolders(path);
  if (!holders) return null;
  const file = statSync(path, { bigint: true });
  return holders.filter((pid) => holdsLockFileOf(pid, file.dev, file.ino));
}

function holdsLockFileOf(pid: number, dev: bigint, ino: bigint): boolean {
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
