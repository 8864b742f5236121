import { createHmac, timingSafeEqual } from 'node:crypto';
import type { CallbackObservation, CheckInfo, Deviation } from './history.ts';
import { idsOf, isRecord, isTerminal, named, sameJson, timeMs, viewTask } from './task-view.ts';
import type { TaskRead } from './task-view.ts';

export const CALLBACK_CHECKS = {
  terminalOnly: { id: 'callbacks.terminal.only', holds: 'a task callback is sent only for a terminal task, typed task.<its status>' },
  oncePerTask: { id: 'callbacks.once-per-task', holds: 'one callback per task: every delivery of a task (retries, resends) carries the same webhook-id' },
  signature: { id: 'callbacks.signature.verifies', holds: 'webhook-signature verifies with an account secret over `{id}.{timestamp}.{raw body}` (HMAC-SHA256, base64, v1, entries)' },
  timestamp: { id: 'callbacks.timestamp.fresh', holds: 'webhook-timestamp is within 5 minutes of receipt' },
  afterFinish: { id: 'callbacks.envelope.after-finish', holds: 'the envelope’s timestamp is not before the task’s finished_at' },
  asGet: { id: 'callbacks.data.as-get', holds: 'data equals the task as GET shows it once terminal (status, points, output, times)' },
  terminalOnArrival: { id: 'callbacks.get.terminal-on-arrival', holds: 'a GET issued once the callback arrived shows the terminal state' },
  json: { id: 'callbacks.request.json', holds: 'the callback is JSON: Content-Type application/json, the body a JSON object (the envelope)' },
  userAgent: { id: 'callbacks.request.user-agent', holds: 'User-Agent is Svc-Webhook/1.0' },
  seconds: { id: 'callbacks.timestamp.seconds', holds: 'webhook-timestamp is Unix time in whole seconds, not milliseconds' },
  taskObject: { id: 'callbacks.data.task-object', holds: 'the data of a task callback is the task object itself: object task, with every field of the task object' },
} as const satisfies Record<string, CheckInfo>;
const C = CALLBACK_CHECKS;

const TOLERANCE_MS = 5 * 60 * 1000;
/** Unix seconds stay below this until the year 5138; milliseconds have been above it since 1973. */
const SECONDS_BELOW = 1e11;
/** The fields of the task object. @see reference "Task object" */
const TASK_FIELDS = ['id', 'object', 'model', 'status', 'created_at', 'started_at', 'finished_at', 'input', 'points', 'output', 'error', 'metadata'] as const;

/**
 * The callbacks received, against each other and against the task reads.
 * @see reference "Events" Task callbacks
 */
export function checkCallbacks(callbacks: readonly CallbackObservation[], reads: ReadonlyMap<string, readonly TaskRead[]>): Deviation[] {
  const found: Deviation[] = [];
  const firstByTask = new Map<string, string>();
  for (const callback of callbacks) {
    const webhookId = callback.headers['webhook-id'] ?? '(no webhook-id)';
    const push = (check: CheckInfo, problem: string, ...related: TaskRead[]): void => {
      found.push({ check: check.id, message: `callback ${webhookId}: ${problem}`, requestIds: idsOf(...related.map((r) => r.obs)) });
    };
    const raw = typeof callback.body === 'string' ? Buffer.from(callback.body, 'utf8') : Buffer.from(callback.body);
    const stamp = callback.headers['webhook-timestamp'] ?? '';
    if (callback.secrets && callback.secrets.length > 0 && !verifies(callback.secrets, webhookId, stamp, raw, callback.headers['webhook-signature'] ?? '')) {
      push(C.signature, 'no signature verifies with the account secret over the bytes received');
    }
    const sentSeconds = /^\d+$/.test(stamp) ? Number(stamp) : NaN;
    if (!(Math.abs(sentSeconds * 1000 - (callback.receivedWallMs ?? callback.receivedMs)) <= TOLERANCE_MS)) push(C.timestamp, `webhook-timestamp ${JSON.stringify(stamp)} is not within 5 minutes of receipt`);
    if (!(sentSeconds < SECONDS_BELOW)) push(C.seconds, `webhook-timestamp ${JSON.stringify(stamp)} is not Unix seconds${/^\d{13}$/.test(stamp) ? ' (milliseconds?)' : ''}`);
    const userAgent = callback.headers['user-agent'];
    if (userAgent !== 'Svc-Webhook/1.0') push(C.userAgent, `User-Agent ${JSON.stringify(userAgent ?? null)}, not Svc-Webhook/1.0`);
    const type = callback.headers['content-type'];
    if ((type ?? '').split(';')[0]?.trim().toLowerCase() !== 'application/json') push(C.json, `Content-Type ${JSON.stringify(type ?? null)}, not application/json`);

    const envelope = parse(raw);
    if (!envelope) {
      push(C.json, `the body is not a JSON object: ${JSON.stringify(raw.toString('utf8').slice(0, 80))}`);
      continue;
    }
    if (envelope.type === 'webhook.test') continue;
    const missing = taskObjectProblem(envelope.data);
    if (missing) push(C.taskObject, `${String(envelope.type)}: ${missing}`);
    const task = viewTask(envelope.data);
    if (!task) continue;
    const taskReads = reads.get(task.id) ?? [];
    if (!isTerminal(task.status) || envelope.type !== `task.${task.status}`) push(C.terminalOnly, `type ${String(envelope.type)} for task ${task.id} in status ${task.status}`);
    const first = firstByTask.get(task.id);
    if (first !== undefined && first !== webhookId) push(C.oncePerTask, `task ${task.id} was already called back as ${first}`);
    firstByTask.set(task.id, first ?? webhookId);

    const [at, finished] = [timeMs(envelope.timestamp), timeMs(task.finishedAt)];
    if (at === null || (finished !== null && at < finished)) push(C.afterFinish, `timestamp ${String(envelope.timestamp)} is before task ${task.id} finished at ${String(task.finishedAt)}`);

    for (const r of taskReads) {
      if (r.obs.kind === 'replay' || !isTerminal(r.view.status) || sameJson(r.view.raw, task.raw)) continue;
      const fields = Object.keys({ ...r.view.raw, ...task.raw }).filter((f) => !sameJson(r.view.raw[f], task.raw[f]));
      push(C.asGet, `data of task ${task.id} differs from ${r.view.status} read ${named(r.obs)} in ${fields.join(', ')}`, r);
      break;
    }
    for (const r of taskReads) {
      if (r.obs.kind === 'get' && r.obs.sentMs >= callback.receivedMs && !isTerminal(r.view.status)) {
        push(C.terminalOnArrival, `task ${task.id} read ${r.view.status} (${named(r.obs)}) after its callback arrived`, r);
      }
    }
  }
  return found;
}

/** Standard Webhooks: any `v1,` entry equal, in constant time, to HMAC-SHA256 over `{id}.{timestamp}.{body}`. */
function verifies(secrets: readonly string[], id: string, stamp: string, body: Buffer, header: string): boolean {
  const given = header.split(' ').filter((e) => e.startsWith('v1,')).map((e) => Buffer.from(e.slice(3), 'base64'));
  return secrets.some((secret) => {
    const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    const expected = createHmac('sha256', key).update(Buffer.concat([Buffer.from(`${id}.${stamp}.`, 'utf8'), body])).digest();
    return given.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected));
  });
}

/** How `data` falls short of a task object: not one, or without some of its fields; null when it is one. */
function taskObjectProblem(data: unknown): string | null {
  if (!isRecord(data)) return `data is ${JSON.stringify(data ?? null)?.slice(0, 80)}, not a task object`;
  if (data.object !== 'task') return `data.object is ${JSON.stringify(data.object ?? null)}, not "task" (data is the task object itself)`;
  const missing = TASK_FIELDS.filter((field) => !(field in data));
  return missing.length > 0 ? `data has no ${missing.join(', ')}` : null;
}

function parse(raw: Buffer): Record<string, unknown> | null {
  try {
    const json: unknown = JSON.parse(raw.toString('utf8'));
    return isRecord(json) ? json : null;
  } catch {
    return null;
  }
}
