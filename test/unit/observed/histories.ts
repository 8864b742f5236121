import { Webhook } from 'standardwebhooks';
import type { PriceRule } from '../../../src/points/index.ts';
import type {
  CallbackObservation,
  CheckContext,
  Deviation,
  History,
  ListPageObservation,
  TaskObservation,
  TaskReadKind,
  TextCallObservation,
} from '../../../src/observed/index.ts';

/** Builders of hand-made histories: one social-notes-data task, seen at seconds after T0. */
export const T0 = Date.parse('2026-11-26T10:00:00+08:00');
export const TASK_ID = 'T261126100000ABC123';
export const SECRET = `whsec_${Buffer.from('observed-history-secret-0123456').toString('base64')}`;

/** Beijing time `s` seconds after T0. */
export const at = (s: number): string => `${new Date(T0 + s * 1000 + 8 * 3_600_000).toISOString().slice(0, 19)}+08:00`;

export type Status = 'queued' | 'processing' | 'succeeded' | 'failed' | 'canceled';
export type Json = Record<string, unknown>;

const POINTS: Record<Status, Json> = {
  queued: { frozen: '40.000', charged: '0.000', refunded: '0.000' },
  processing: { frozen: '40.000', charged: '0.000', refunded: '0.000' },
  succeeded: { frozen: '40.000', charged: '40.000', refunded: '0.000' },
  failed: { frozen: '40.000', charged: '0.000', refunded: '40.000' },
  canceled: { frozen: '40.000', charged: '0.000', refunded: '40.000' },
};

/** The task in a status, consistent with itself: created at 0 s, started at 5 s (not when canceled), finished at 20 s. */
export function task(status: Status, patch: Json = {}): Json {
  const terminal = status === 'succeeded' || status === 'failed' || status === 'canceled';
  return {
    id: TASK_ID,
    object: 'task',
    model: 'social-notes-data',
    status,
    created_at: at(0),
    started_at: status === 'queued' || status === 'canceled' ? null : at(5),
    finished_at: terminal ? at(20) : null,
    input: { mode: 'note', note: 'https://notes.example/n/1', agree: true },
    points: POINTS[status],
    output: status === 'succeeded' ? { text: 'note details', files: [] } : null,
    error: status === 'failed' ? { code: 'generation_failed', message: 'generation failed' } : status === 'canceled' ? { code: 'canceled', message: 'canceled' } : null,
    metadata: { order: '42' },
    ...patch,
  };
}

/** A task answer sent at `s` seconds, answered 50 ms later. */
export function read(kind: TaskReadKind, requestId: string, s: number, body: unknown, extra: Partial<TaskObservation> = {}): TaskObservation {
  return { requestId, kind, sentMs: T0 + s * 1000, receivedMs: T0 + s * 1000 + 50, task: body, ...extra };
}

/** A refused answer (no task). */
export const refused = (kind: TaskReadKind, requestId: string, s: number, status: number, code: string, extra: Partial<TaskObservation> = {}): TaskObservation =>
  read(kind, requestId, s, null, { answer: { status, code }, ...extra });

export const KEY = { idempotencyKey: 'order-42', model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example/n/1', agree: true } };

export function page(requestId: string, s: number, items: unknown[], extra: Partial<ListPageObservation> = {}): ListPageObservation {
  return { requestId, walk: 'w1', query: { limit: 20, page: 1 }, items, has_more: false, sentMs: T0 + s * 1000, receivedMs: T0 + s * 1000 + 50, ...extra };
}

/** A callback of `data` signed with SECRET, sent at `sentS` and received at `receivedS` seconds. */
export function callback(data: Json, options: { sentS?: number; receivedS?: number; id?: string; type?: string; timestamp?: string; tamper?: boolean } = {}): CallbackObservation {
  const sentS = options.sentS ?? 21;
  const body = JSON.stringify({ type: options.type ?? `task.${String(data.status)}`, timestamp: options.timestamp ?? at(20), data });
  const id = options.id ?? 'msg_2kq8d6Wv1';
  const signature = new Webhook(SECRET).sign(id, new Date(T0 + sentS * 1000), body);
  return {
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor((T0 + sentS * 1000) / 1000)),
      'webhook-signature': signature,
      'user-agent': 'Svc-Webhook/1.0',
    },
    body: new TextEncoder().encode(options.tamper === true ? body.replace('note details', 'note detail!') : body),
    receivedMs: T0 + (options.receivedS ?? sentS + 0.2) * 1000,
    secrets: [SECRET],
  };
}

export type WholeCall = Extract<TextCallObservation, { streamed: false }>;
export type StreamedCall = Extract<TextCallObservation, { streamed: true }>;

const words = (text: string): string[] => text.match(/\s*\S+/g) ?? [];

/** A whole chat answer. */
export function chat(requestId: string, answer: { id?: string; text?: string; finish?: string; max?: number | null; prompt?: number; output?: number } = {}): WholeCall {
  const text = answer.text ?? 'Hello there friend';
  const output = answer.output ?? words(text).length;
  const prompt = answer.prompt ?? 9;
  return {
    requestId,
    format: 'chat',
    maxTokens: answer.max === undefined ? 16 : answer.max,
    promptNonEmpty: true,
    streamed: false,
    body: {
      id: answer.id ?? `svcchat_${requestId.slice(4)}`,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: answer.finish ?? 'stop' }],
      usage: { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output },
    },
  };
}

/** A streamed chat answer with include_usage: one chunk per word. */
export function chatStream(requestId: string, answer: { text?: string; output?: number; finish?: string } = {}): StreamedCall {
  const id = `svcchat_${requestId.slice(4)}`;
  const pieces = words(answer.text ?? 'Streamed words arrive');
  const chunk = (choices: unknown[], usage: unknown = null): Json => ({ id, object: 'chat.completion.chunk', created: 1, model: 'm', choices, usage });
  return {
    requestId,
    format: 'chat',
    maxTokens: 16,
    promptNonEmpty: true,
    streamed: true,
    events: [
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
      ...pieces.map((p, i) => chunk([{ index: 0, delta: { content: p }, finish_reason: i === pieces.length - 1 ? (answer.finish ?? 'stop') : null }])),
      chunk([], { prompt_tokens: 9, completion_tokens: answer.output ?? pieces.length, total_tokens: 9 + (answer.output ?? pieces.length) }),
    ],
  };
}

/** A streamed Responses-style answer cut at its maximum. */
export function responsesStream(requestId: string, answer: { max?: number; status?: string; output?: number } = {}): StreamedCall {
  const id = `svcresp_${requestId.slice(4)}`;
  const pieces = ['One', ' two', ' three'];
  const output = answer.output ?? pieces.length;
  const status = answer.status ?? 'incomplete';
  return {
    requestId,
    format: 'responses',
    maxTokens: answer.max ?? 3,
    promptNonEmpty: true,
    streamed: true,
    events: [
      { type: 'response.created', sequence_number: 0, response: { id, status: 'in_progress' } },
      { type: 'response.in_progress', sequence_number: 1, response: { id, status: 'in_progress' } },
      ...pieces.map((delta, i) => ({ type: 'response.output_text.delta', sequence_number: 2 + i, delta })),
      { type: `response.${status === 'incomplete' ? 'incomplete' : 'completed'}`, sequence_number: 9, response: { id, status, usage: { input_tokens: 7, output_tokens: output, total_tokens: 7 + output } } },
    ],
  };
}

/** A whole Messages-style answer. */
export function message(requestId: string, answer: { stop?: string | null; output?: number; max?: number; input?: number } = {}): WholeCall {
  return {
    requestId,
    format: 'messages',
    maxTokens: answer.max ?? 16,
    promptNonEmpty: true,
    streamed: false,
    body: {
      id: `svcmsg_${requestId.slice(4)}`,
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'Hi' }],
      stop_reason: answer.stop === undefined ? 'end_turn' : answer.stop,
      usage: { input_tokens: answer.input ?? 8, output_tokens: answer.output ?? 1 },
    },
  };
}

export const NOTES_PRICE: PriceRule = { rule: 'fixed', points: '40.000' };
export const CONTEXT: CheckContext = { prices: { 'social-notes-data': NOTES_PRICE }, countOutputTokens: (text) => words(text).length };

/**
 * A sound history: submit (with a key and balance reads) → get queued → get processing → get succeeded →
 * callback → list page, an idempotent replay, and text calls of each format.
 */
export function soundHistory(): History {
  return {
    tasks: [
      read('submit', 'req_submit', 0, task('queued'), { key: KEY, balance: { before: '1000.000', after: '960.000' } }),
      read('get', 'req_get_queued', 3, task('queued')),
      read('get', 'req_get_processing', 10, task('processing')),
      read('replay', 'req_replay', 12, task('queued'), { key: KEY, balance: { before: '960.000', after: '960.000' } }),
      read('get', 'req_get_succeeded', 22, task('succeeded')),
    ],
    callbacks: [callback(task('succeeded'))],
    pages: [page('req_list', 23, [task('succeeded')])],
    texts: [chat('req_chat1'), chatStream('req_chat2'), responsesStream('req_resp1'), message('req_msg1'), message('req_msg2', { stop: 'max_tokens', output: 16 })],
  };
}

/** The distinct check ids of some deviations. */
export const checksOf = (deviations: readonly Deviation[]): string[] => [...new Set(deviations.map((d) => d.check))];
/** Every request id some deviations name. */
export const requestIdsOf = (deviations: readonly Deviation[]): string[] => [...new Set(deviations.flatMap((d) => d.requestIds))].sort();
