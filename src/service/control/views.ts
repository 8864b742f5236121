import type { StoredAccount } from '../../accounts/index.ts';
import { formatTime } from '../../clock/index.ts';
import type { StoredTask } from '../../tasks/index.ts';
import { attemptRequestHeaders } from '../../webhooks/index.ts';
import type { StoredDelivery } from '../../webhooks/index.ts';

/** An account as the control API shows it: the previous signing secrets with the time each stops being valid. */
export function accountView(account: StoredAccount): Record<string, unknown> {
  const { previous_secrets, ...rest } = account;
  return {
    object: 'account',
    ...rest,
    concurrency: account.concurrency ?? null,
    previous_webhook_secrets: (previous_secrets ?? []).map((p) => ({ secret: p.secret, expires_at: formatTime(p.until_ms) })),
  };
}

export interface TaskEntry {
  account_id: string;
  scenario: string;
  task: StoredTask['task'];
}

/** A task as the control API lists it: with its account and the scenario it follows. */
export const taskEntry = (stored: StoredTask): TaskEntry => ({
  account_id: stored.account_id,
  scenario: stored.plan.scenario,
  task: stored.task,
});

/** One task in full: its listing entry, and where its callbacks go and which key submitted it. */
export const taskView = (stored: StoredTask): TaskEntry & { webhook_url: string | null; key: string | null } => ({
  ...taskEntry(stored),
  webhook_url: stored.webhook_url ?? null,
  key: stored.key ?? null,
});

/**
 * A message as the control API shows it; each attempt with the headers it was sent with (the body, sent
 * unchanged on every attempt, is the message's).
 */
export function deliveryView(delivery: StoredDelivery, account: StoredAccount | undefined): Record<string, unknown> {
  const { next_attempt_ms, created_ms: _created, ...rest } = delivery;
  return {
    object: 'webhook_delivery',
    ...rest,
    attempts: delivery.attempts.map((attempt) => {
      // The signature kept with the attempt is shown among its headers, not beside them.
      const { webhook_signature: _kept, ...shown } = attempt;
      return { ...shown, request_headers: attemptRequestHeaders(delivery, attempt, account) };
    }),
    next_attempt_at: next_attempt_ms === null ? null : formatTime(next_attempt_ms),
  };
}
