export { createLimitedServer, DEFAULT_SERVER_LIMITS, resolveLimits } from './limits.ts';
export type { ServerLimits } from './limits.ts';
export { capConnections } from './connection-cap.ts';
export { budgetText, connectionBudget, FALLBACK_CAP, openFileLimit } from './connections.ts';
export type { ConnectionBudget } from './connections.ts';
export { followRequests } from './shutdown.ts';
export type { CloseGracefully } from './shutdown.ts';
export { hurriable } from './hurry.ts';
export type { Hurriable } from './hurry.ts';
