import type { RouterOptions } from 'express';

/**
 * Paths are matched exactly, as the documents name them: `/v1/taskS` and `/v1/tasks/` are unknown paths (404
 * not_found), not the list of tasks. Every Router is made with these options; the app sets the same two settings.
 */
export const ROUTING: RouterOptions = { caseSensitive: true, strict: true };
