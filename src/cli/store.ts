import { repositories } from '../db.ts';
import { exportState, writeStateFile } from '../state/index.ts';
import { backupStore, checkStoreFile, readStore, restoreStore } from '../store/index.ts';
import { HelpRequested, parseCommandArgs, suggestion, UsageError } from './args.ts';
import { prepareReports } from './report-path.ts';
import { DEFAULT_DB } from '../defaults/index.ts';
import { STORE_HELP } from './help.ts';

const ACTIONS = ['check', 'backup', 'restore', 'export'];

/** Runs a store command; resolves with the exit code. */
export async function storeCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('store', argv, { db: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, true);
  if (values.help) throw new HelpRequested(STORE_HELP);
  const [action, file, ...extra] = positionals;
  const db = values.db ?? DEFAULT_DB;
  if (extra.length > 0) throw new UsageError(`svc-emulator store ${action ?? ''}: one file at most (svc-emulator store --help)`);
  const needFile = (): string => {
    if (!file) throw new UsageError(`svc-emulator store ${action ?? ''}: needs a FILE (svc-emulator store ${action ?? ''} FILE)`);
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
      // Its folder made if need be, as every file a command writes (report-path.ts); a path that cannot be: one line.
      prepareReports('store', [{ flag: 'backup', path: needFile() }]);
      backupStore(db, needFile());
      console.log(`${db}: backed up to ${needFile()}`);
      return 0;
    case 'restore':
      restoreStore(db, needFile());
      console.log(`${db}: restored from ${needFile()}`);
      return 0;
    case 'export': {
      prepareReports('store', [{ flag: 'export', path: needFile() }]);
      const store = readStore(db);
      try {
        await writeStateFile(needFile(), exportState(repositories(store), null));
      } finally {
        void store.close();
      }
      console.log(`${db}: exported to ${needFile()}`);
      return 0;
    }
    case undefined:
      throw new UsageError(`svc-emulator store: which action? ${ACTIONS.join(', ')} (svc-emulator store --help)`);
    default:
      throw new UsageError(`svc-emulator store: unknown action '${action}'${suggestion(action, ACTIONS, '')} (svc-emulator store --help lists them)`);
  }
}
