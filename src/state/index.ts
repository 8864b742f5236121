export { exportState } from './export.ts';
export { importState, stateProblem } from './import.ts';
export type { Repositories } from './import.ts';
export { checkStateDocument } from './check.ts';
export { STATE_FORMAT, STATE_VERSION } from './document.ts';
export type { StateDocument } from './document.ts';
export { journalStoreBytes, readJournalStore, setJournalStoreAside } from './journal-store.ts';
export { readStateFile, writeStateFile } from './file.ts';
