import type { StoredAccount } from '../../src/accounts/index.ts';

/** A stored account as the store holds it, for tests that work on the store directly. */
export const storedAccount = (id: string, available = '10.000'): StoredAccount => ({
  id,
  available,
  frozen: '0.000',
  charged: '0.000',
  webhook_url: null,
  webhook_secret: 'whsec_x',
  created_at: '2026-11-23T09:00:00+08:00',
});
