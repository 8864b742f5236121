import { Webhook } from 'standardwebhooks';

/**
 * The `webhook-signature` header: one `v1,<base64>` entry per signing secret (two during a key rotation), each
 * an HMAC-SHA256 over `{id}.{timestamp}.{body}` keyed with the Base64-decoded part of the `whsec_` secret,
 * computed by the Standard Webhooks library. The time is passed in, never read.
 * @see reference "Events": signing follows the Standard Webhooks scheme; key rotation
 */
export function signatureHeader(secrets: string[], webhookId: string, timestampSeconds: number, body: string): string {
  const at = new Date(timestampSeconds * 1000);
  return secrets.map((secret) => new Webhook(secret).sign(webhookId, at, body)).join(' ');
}
