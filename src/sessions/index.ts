export type { NewSession, SeededAccount, SessionAccountInput, SessionCreated, SessionRecord, SessionsControl, SessionView } from './types.ts';
export { removeUnlisted, saveSessions, SESSION_ID, sessionPaths, storedSessions } from './registry.ts';
