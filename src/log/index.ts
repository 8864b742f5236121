export { createLogger, keyId } from './logger.ts';
export type { Logger, LogLevel, LogFields } from './logger.ts';
export { plural } from './plural.ts';
export { fileBytes, LONG_FILE_BYTES, LONG_TASK_COUNT, sizeText, startupSteps } from './progress.ts';
export type { Step } from './progress.ts';
