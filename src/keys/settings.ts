import type { KeySettings } from '../accounts/index.ts';

// The shapes are stored with the key, so they are the key record's (src/accounts); this folder applies them.
export type { KeySettings, QuotaUse } from '../accounts/index.ts';

export const NO_SETTINGS: KeySettings = { models: null, quota: null, rpm: null, concurrency: null, signing_secret: null };
