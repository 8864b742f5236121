import { Webhook } from 'standardwebhooks';

/**
 * An imaginary integrator's code: it orders a short video for a customer, and settles the order when the
 * service calls back. This is the code under test; the emulator stands in for the paid service.
 */
export interface Order {
  id: string;
  taskId: string;
  state: 'waiting' | 'delivered' | 'refunded';
  videoUrl: string | null;
}

export function createOrderService(options: { baseUrl: string; apiKey: string; webhookSecret: string; callbackUrl: string }) {
  const orders = new Map<string, Order>();
  const seen = new Set<string>();
  return {
    orders,
    async order(id: string, prompt: string): Promise<Order> {
      const res = await fetch(`${options.baseUrl}/v1/tasks`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${options.apiKey}`, 'Content-Type': 'application/json', 'Idempotency-Key': `order-${id}` },
        body: JSON.stringify({ model: 'video-gen-2.0-fast', input: { prompt, duration: 5 }, webhook_url: options.callbackUrl, metadata: { order: id } }),
      });
      if (!res.ok) throw new Error(`the service refused the order: ${res.status} ${await res.text()}`);
      const task = (await res.json()) as { id: string };
      const order: Order = { id, taskId: task.id, state: 'waiting', videoUrl: null };
      orders.set(id, order);
      return order;
    },
    /** The callback handler: verify, de-duplicate by webhook-id, then act on the event. Answers an HTTP status. */
    handleCallback(rawBody: string, headers: Record<string, string>): number {
      let event: { type: string; data: { metadata: { order: string }; output: { files: { url: string }[] } | null } };
      try {
        event = new Webhook(options.webhookSecret).verify(rawBody, headers) as typeof event;
      } catch {
        return 401;
      }
      const id = headers['webhook-id'] ?? '';
      if (seen.has(id)) return 200;
      seen.add(id);
      const order = orders.get(event.data.metadata.order);
      if (!order) return 200;
      if (event.type === 'task.succeeded') {
        order.state = 'delivered';
        order.videoUrl = event.data.output?.files[0]?.url ?? null;
      } else {
        order.state = 'refunded';
      }
      return 200;
    },
  };
}
