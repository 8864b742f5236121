export { createLogger, keyId } from './logger.ts';
export type { Logger, LogLevel, LogFields } from './logger.ts';
