export { ApiError, ERROR_CATALOG, invalidParams } from './catalog.ts';
export type { ErrorCode, ErrorDetail } from './catalog.ts';
