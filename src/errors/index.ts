export { ApiError, ERROR_CATALOG, GENERATION_FAULT_MESSAGES, generationFault, invalidParams } from './catalog.ts';
export type { ErrorCode, ErrorDetail } from './catalog.ts';
export { endpointGroup, errorBody, writeErrorAnswer } from './shapes.ts';
export type { EndpointGroup } from './shapes.ts';
