import { compactTime } from '../clock/index.ts';
import type { Random } from './source.ts';

const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const UPPER_ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** @see reference "Conventions": Request id — `req_` + 24 lowercase letters or digits. */
export const requestId = (random: Random): string => `req_${random.string(24, LOWER_ALNUM)}`;

/** @see reference "Conventions": Task id — `T` + 12-digit time + 6 uppercase letters or digits. */
export const taskId = (random: Random, nowMs: number): string =>
  `T${compactTime(nowMs)}${random.string(6, UPPER_ALNUM)}`;

export const accountId = (random: Random): string => `acct_${random.string(12, LOWER_ALNUM)}`;

export const apiKey = (random: Random): string => `sk-${random.string(40, ALNUM)}`;

/** A Standard Webhooks secret: `whsec_` + Base64 of 24 random bytes. */
export const webhookSecret = (random: Random): string =>
  `whsec_${Buffer.from(random.bytes(24)).toString('base64')}`;

/** A delivery's id, sent as its webhook-id. @see reference "Conventions": Webhook message id starts with `msg_`. */
export const deliveryId = (random: Random): string => `msg_${random.string(24, ALNUM)}`;

/** @see reference "Conventions": result file names are unguessable random strings. */
export const fileName = (random: Random): string => random.string(32, ALNUM);

/** Text call ids: a prefix (`svcchat_`, `svcresp_`, `svcmsg_`) and a random string. */
export const textCallId = (random: Random, prefix: string): string => `${prefix}${random.string(24, ALNUM)}`;

export const adminToken = (random: Random): string => `adm_${random.string(32, ALNUM)}`;
