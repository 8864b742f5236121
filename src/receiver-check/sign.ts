import { Webhook } from 'standardwebhooks';

/** The secrets a run signs with: the account's, the other one of a rotation, and strangers no account has. */
export interface Secrets {
  secret: string;
  rotated: string;
  /** Whether `rotated` was given (--rotated-secret) or stands in for it. */
  rotatedGiven: boolean;
  strangers: readonly [string, string, string];
}

export type Signer = 'secret' | 'rotated' | 'stranger' | 'stranger2' | 'stranger3';

const secretOf = (secrets: Secrets, signer: Signer): string =>
  ({ secret: secrets.secret, rotated: secrets.rotated, stranger: secrets.strangers[0], stranger2: secrets.strangers[1], stranger3: secrets.strangers[2] })[signer];

/**
 * One `v1,<base64>` entry, as the service signs: HMAC-SHA256 over `{id}.{timestamp}.{body}` keyed with the
 * Base64-decoded part of the `whsec_` secret, by the Standard Webhooks library (src/webhooks/sign.ts's own call).
 * The time is passed in, never read.
 * @see reference "Events": signing follows the Standard Webhooks scheme
 */
export const signatureEntry = (secret: string, webhookId: string, timestampSeconds: number, body: string): string =>
  new Webhook(secret).sign(webhookId, new Date(timestampSeconds * 1000), body);

/** How one delivery is signed and which of its headers it leaves out. */
export interface Signing {
  /** One entry per signer, in order (two during a rotation). */
  signers: readonly Signer[];
  /** The bytes the signature covers: the body sent, unless the delivery sends other bytes on purpose. */
  signed: string;
  /** The version tag of each entry (`v1`; another on purpose). */
  version: string;
  omit: 'webhook-id' | 'webhook-timestamp' | 'webhook-signature' | null;
}

/**
 * A delivery's headers, as the service sends them (src/webhooks/headers.ts): JSON, the user agent and the
 * Standard Webhooks trio, less the one left out on purpose.
 * @see reference "Events" → Request headers
 */
export function deliveryHeaders(secrets: Secrets, webhookId: string, timestampSeconds: number, signing: Signing): Record<string, string> {
  const signature = signing.signers
    .map((signer) => signatureEntry(secretOf(secrets, signer), webhookId, timestampSeconds, signing.signed).replace(/^v1,/, `${signing.version},`))
    .join(' ');
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': 'Svc-Webhook/1.0',
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signature,
  };
  if (signing.omit !== null) delete headers[signing.omit];
  return headers;
}

/** `v1 by --secret, v1 by --rotated-secret`: how a delivery is signed, said without any secret. */
export function describeSignature(secrets: Secrets, signing: Signing): string {
  const who: Record<Signer, string> = {
    secret: '--secret',
    rotated: secrets.rotatedGiven ? '--rotated-secret' : "a stand-in for the rotation's other secret",
    stranger: "a secret not the account's",
    stranger2: "a secret not the account's",
    stranger3: "another secret not the account's",
  };
  if (signing.omit === 'webhook-signature') return 'none';
  return signing.signers.map((s) => `${signing.version} by ${who[s]}`).join(', ');
}
