import type { ReceiverEffect } from '../verdict/index.ts';
import { unreachableReason } from '../wire/index.ts';

/** How often the effects hook is read again while it shows no action yet (a receiver may act after it answers). */
const POLL_MS = 100;

/**
 * The address that asks the receiver's effects hook about one task: `{task_id}` in the given address replaced, or
 * a `task_id` query parameter added.
 */
export function effectsAddress(effectsUrl: string, taskId: string): string {
  if (effectsUrl.includes('{task_id}')) return effectsUrl.replaceAll('{task_id}', encodeURIComponent(taskId));
  const url = new URL(effectsUrl);
  url.searchParams.set('task_id', taskId);
  return url.href;
}

/** The count an effects hook answered: a JSON number, or an object with a numeric `count`. */
function countOf(text: string): number | null {
  try {
    const value: unknown = JSON.parse(text);
    const count = typeof value === 'object' && value !== null ? (value as { count?: unknown }).count : value;
    return typeof count === 'number' && Number.isInteger(count) && count >= 0 ? count : null;
  } catch {
    return null;
  }
}

/**
 * Asks the receiver's effects hook how many times it acted on a task whose message came twice, reading again
 * every 100 ms while it says 0, until `timeoutMs`: a receiver that acknowledges first and acts after is fine. A
 * redirect is not followed, as a callback's is not.
 */
export async function readEffect(effectsUrl: string, target: { taskId: string; webhookId: string }, timeoutMs: number, now: () => number): Promise<ReceiverEffect> {
  const address = effectsAddress(effectsUrl, target.taskId);
  const until = now() + timeoutMs;
  for (;;) {
    let res: Response;
    let text: string;
    try {
      res = await fetch(address, { redirect: 'manual', signal: AbortSignal.timeout(Math.max(1, until - now())) });
      text = await res.text();
    } catch (err) {
      return { ...target, acted: null, detail: `cannot reach it (${unreachableReason(err, timeoutMs)})` };
    }
    if (!res.ok) return { ...target, acted: null, detail: `it answered ${res.status}` };
    const acted = countOf(text);
    if (acted === null) return { ...target, acted: null, detail: `its answer is not a count: ${text.slice(0, 80)}` };
    if (acted > 0 || now() + POLL_MS >= until) return { ...target, acted, detail: null };
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
