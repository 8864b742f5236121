/** A store that cannot be opened: one line for the user, exit 2 (src/cli/main.ts prints it). */
export class StoreOpenError extends Error {}

/** The one line of a store found damaged: its first problems, and where to look further. */
export const damageMessage = (path: string, problems: string[]): string =>
  `${path}: the store is damaged (${problems.slice(0, 3).join('; ')}${problems.length > 3 ? `; ${problems.length - 3} more` : ''}); see svc-emulator store check`;

/**
 * A store refused because it is damaged: `problem` is the store check's line for it; `inLog`, the damage is in
 * its write-ahead log (SQLite would drop committed transactions), and the files are left as they were.
 */
export class StoreDamagedError extends StoreOpenError {
  constructor(
    message: string,
    readonly problem: string,
    readonly inLog = false,
  ) {
    super(message);
  }
}
