export { createLogger, keyId } from './logger.ts';
export type { Logger, LogLevel, LogFields } from './logger.ts';
export { plural } from './plural.ts';
