import { toPoints } from '../points/index.ts';
import type { Random } from '../random/index.ts';
import type { StoredKey } from '../accounts/index.ts';
import type { QuotaPeriod } from './periods.ts';
import { quotaView } from './quota.ts';
import { NO_SETTINGS } from './settings.ts';

/** A settings change as the control API takes it (openapi/admin.yaml#/components/schemas/KeySettings). */
export interface SettingsPatch {
  models?: string[] | null;
  quota?: { points: string; period: QuotaPeriod } | null;
  rpm?: number | null;
  concurrency?: number | null;
  signing?: boolean;
}

/** Applies the fields given; returns the new signing secret when signing was turned on. */
export function applySettings(key: StoredKey, patch: SettingsPatch, random: Random): string | null {
  const settings = { ...NO_SETTINGS, ...key.settings };
  if (patch.models !== undefined) settings.models = patch.models;
  if (patch.rpm !== undefined) settings.rpm = patch.rpm;
  if (patch.concurrency !== undefined) settings.concurrency = patch.concurrency;
  if (patch.quota !== undefined) {
    settings.quota = patch.quota === null ? null : { points: toPoints(patch.quota.points), period: patch.quota.period };
  }
  let secret: string | null = null;
  if (patch.signing === true && !settings.signing_secret) {
    secret = `svs_${random.string(40, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789')}`;
    settings.signing_secret = secret;
  }
  if (patch.signing === false) settings.signing_secret = null;
  key.settings = settings;
  return secret;
}

export function keyView(key: StoredKey, nowMs: number, signingSecret: string | null = null): Record<string, unknown> {
  const settings = { ...NO_SETTINGS, ...key.settings };
  return {
    object: 'key',
    key: key.key,
    account_id: key.account_id,
    created_at: key.created_at,
    models: settings.models,
    quota: quotaView(key, nowMs),
    rpm: settings.rpm,
    concurrency: settings.concurrency,
    signing: settings.signing_secret !== null,
    ...(signingSecret ? { signing_secret: signingSecret } : {}),
  };
}
