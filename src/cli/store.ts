import { parseArgs } from 'node:util';
import { repositories } from '../db.ts';
import { exportState, writeStateFile } from '../state/index.ts';
import { backupStore, checkStoreFile, openStore } from '../store/index.ts';
import { restoreStore } from '../store/maintenance.ts';
import { DEFAULT_DB, HelpRequested, UsageError } from './start-options.ts';
import { STORE_HELP } from './help.ts';


/** Runs a store command; resolves with the exit code. */
export async function storeCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { db: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true });
  if (values.help) throw new HelpRequested(STORE_HELP);
  const [action, file, ...extra] = positionals;
  const db = values.db ?? DEFAULT_DB;
  if (extra.length > 0) throw new UsageError(`store ${action ?? ''}: one file at most\n\n${STORE_HELP}`);
  const needFile = (): string => {
    if (!file) throw new UsageError(`store ${action ?? ''} needs a FILE\n\n${STORE_HELP}`);
    return file;
  };
  switch (action) {
    case 'check': {
      const problems = checkStoreFile(db);
      if (problems.length === 0) {
        console.log(`${db}: sound (integrity check ok, every balance agrees with its ledger)`);
        return 0;
      }
      console.log(`${db}: damaged`);
      for (const problem of problems) console.log(`  ${problem}`);
      console.log('Restore a backup (svc-emulator store restore FILE), or start from an export (--import FILE).');
      return 1;
    }
    case 'backup':
      backupStore(db, needFile());
      console.log(`${db}: backed up to ${needFile()}`);
      return 0;
    case 'restore':
      restoreStore(db, needFile());
      console.log(`${db}: restored from ${needFile()}`);
      return 0;
    case 'export': {
      const store = openStore({ path: db, readOnly: true });
      try {
        await writeStateFile(needFile(), exportState(repositories(store), null));
      } finally {
        void store.close();
      }
      console.log(`${db}: exported to ${needFile()}`);
      return 0;
    }
    default:
      throw new UsageError(`store: unknown action '${action ?? ''}'\n\n${STORE_HELP}`);
  }
}
