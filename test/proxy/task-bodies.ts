import type { Webhook } from 'standardwebhooks';

/** A time as the service writes it: Beijing time, whole seconds, `+08:00`. */
export const beijing = (ms: number): string => `${new Date(ms + 8 * 3_600_000).toISOString().slice(0, 19)}+08:00`;

/**
 * A social-notes task as a stand-in upstream answers it: created at `t0`, started a second later and finished two
 * seconds later where its status says so, `order` in its note and metadata.
 */
export function taskOf(id: string, status: 'queued' | 'processing' | 'succeeded', order: string, t0: number): Record<string, unknown> {
  return {
    id,
    object: 'task',
    model: 'social-notes-data',
    status,
    created_at: beijing(t0),
    started_at: status === 'queued' ? null : beijing(t0 + 1000),
    finished_at: status === 'succeeded' ? beijing(t0 + 2000) : null,
    input: { mode: 'note', note: `https://notes.example.com/n/${order}`, agree: true },
    points: { frozen: '40.000', charged: status === 'succeeded' ? '40.000' : '0.000', refunded: '0.000' },
    output: status === 'succeeded' ? { text: 'note details', files: [] } : null,
    error: null,
    metadata: { order },
  };
}

/**
 * A stand-in service's callback for task `id` (`order`'s) having succeeded, sent to `url` now and signed by `signer`.
 * One instant stamps the header and the signature: two readings of the clock may fall in different seconds.
 */
export function sendSucceeded(url: string, signer: Webhook, id: string, order: string, t0: number): Promise<Response> {
  const body = JSON.stringify({ type: 'task.succeeded', timestamp: beijing(t0 + 2000), data: taskOf(id, 'succeeded', order, t0) });
  const msgId = `msg_${order}1`;
  const sentAt = new Date();
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': 'Svc-Webhook/1.0',
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': signer.sign(msgId, sentAt, body),
  };
  return fetch(url, { method: 'POST', headers, body });
}
