import { Webhook } from 'standardwebhooks';
import { webhookAddressProblem } from '../../address-guard/index.ts';
import { errorOf } from '../../wire/index.ts';
import type { Exchange } from '../../wire/index.ts';
import { CheckFailure, CheckSkipped } from '../client.ts';
import type { Check } from '../types.ts';
import { body, needAnswer, notesInput, pollUntilTerminal } from './shared.ts';
import type { TaskBody } from './shared.ts';

/**
 * The reference lets a deployment refuse a callback address that is not https or is internal (a real one always
 * does), and the suite's own receiver is http on 127.0.0.1. Such a refusal is conformance, not a deviation: the
 * check cannot run there, and says why. An address the reference accepts, refused, still fails.
 */
export function refusedAsTheReferenceAllows(submitted: Exchange, url: string): string | null {
  if (submitted.status !== 422) return null;
  const error = (submitted.json as { error?: { details?: { field?: unknown }[] } } | undefined)?.error;
  const named = (error?.details ?? []).some((d) => d.field === 'webhook_url') || (errorOf(submitted).message ?? '').includes('webhook_url');
  return named ? webhookAddressProblem(url, false) : null;
}

/** The skip of a check whose callback address the deployment refuses as the reference allows, saying what to do. */
export const receiverRefused = (url: string): CheckSkipped =>
  new CheckSkipped(
    `the deployment refuses the receiver's address ${url} (callback addresses must be https and not internal, as the reference says); give a public https --webhook-url, or start the emulator with --allow-insecure-webhooks`,
  );

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
      const refused = refusedAsTheReferenceAllows(submitted, webhook.url);
      if (refused) throw receiverRefused(webhook.url);
      needAnswer(submitted);
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
