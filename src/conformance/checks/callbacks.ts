import { Webhook } from 'standardwebhooks';
import { CheckFailure } from '../client.ts';
import type { Check } from '../types.ts';
import { body, notesInput, pollUntilTerminal } from './shared.ts';
import type { TaskBody } from './shared.ts';

export const callbackChecks: Check[] = [
  {
    id: 'callbacks.terminal.signed-once',
    group: 'callbacks',
    title: 'one signed callback per terminal task, verified with standardwebhooks',
    cost: 40,
    needs: ['webhook'],
    async run(ctx) {
      const webhook = ctx.webhook;
      if (!webhook) throw new CheckFailure('no callback receiver', null);
      const before = webhook.received.length;
      const submitted = await ctx.api.request('POST', '/v1/tasks', { body: { ...notesInput(), webhook_url: webhook.url } });
      const { task } = await pollUntilTerminal(ctx, body<TaskBody>(submitted).id, 11 * 60);
      // Failures below are about the callback, not an answer: they name the submission that asked for it.
      await webhook.waitFor(before + 1, 30);
      const mine = webhook.received.slice(before).filter((r) => r.raw.includes(task.id));
      ctx.expect(mine.length === 1, `exactly one callback for task ${task.id}`, submitted, 1, mine.length);
      const [callback] = mine;
      if (!callback) return;
      ctx.expect(callback.headers['user-agent'] === 'Svc-Webhook/1.0', 'User-Agent: Svc-Webhook/1.0', submitted, 'Svc-Webhook/1.0', callback.headers['user-agent']);
      ctx.expect(/^msg_/.test(callback.headers['webhook-id'] ?? ''), 'webhook-id msg_…', submitted, 'msg_…', callback.headers['webhook-id']);
      let envelope: { type?: string; timestamp?: string; data?: { id?: string; status?: string } };
      try {
        envelope = new Webhook(webhook.secret).verify(callback.raw, callback.headers) as typeof envelope;
      } catch (err) {
        throw new CheckFailure(`the signature of ${callback.headers['webhook-id'] ?? 'the callback'} does not verify: ${(err as Error).message}`, submitted, 'a valid signature', callback.headers['webhook-signature']);
      }
      ctx.expect(envelope.type === `task.${task.status}`, 'type names the terminal status', submitted, `task.${task.status}`, envelope.type);
      ctx.expect(envelope.data?.id === task.id && envelope.data.status === task.status, 'data is the task', submitted, task.id, envelope.data);
      ctx.expect(/\+08:00$/.test(envelope.timestamp ?? ''), 'timestamp in +08:00', submitted, '+08:00', envelope.timestamp);
    },
  },
];
