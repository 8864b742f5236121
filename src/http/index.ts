export { tasksRoutes } from './tasks-routes.ts';
export { adminRoutes } from './admin-routes.ts';
export { apiKeyAuth } from './api-key.ts';
export { jsonBody } from './json-body.ts';
export { requestIds } from './request-id.ts';
export { errorHandler, notFound } from './error-handler.ts';
export { commit } from './context.ts';
export type { AppDeps, AppConfig } from './context.ts';
