export { createLimitedServer, DEFAULT_SERVER_LIMITS, resolveLimits } from './limits.ts';
export type { ServerLimits } from './limits.ts';
export { budgetText, connectionBudget, FALLBACK_CAP, openFileLimit, watchConnectionCap } from './connections.ts';
export type { ConnectionBudget } from './connections.ts';
export { followRequests } from './shutdown.ts';
export type { CloseGracefully } from './shutdown.ts';
export { hurriable } from './hurry.ts';
export type { Hurriable } from './hurry.ts';
