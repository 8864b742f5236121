export { ApiError, ERROR_CATALOG, invalidParams } from './catalog.ts';
export type { ErrorCode, ErrorDetail } from './catalog.ts';
export { endpointGroup, errorBody } from './shapes.ts';
export type { EndpointGroup } from './shapes.ts';
