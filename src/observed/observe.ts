import { parseJson } from '../wire/index.ts';
import type { Exchange } from '../wire/index.ts';
import type { AnswerObservation, CallbackObservation, History, ListPageObservation, TaskObservation, TextCallObservation, TextFormat } from './history.ts';
import { isRecord } from './task-view.ts';
import { observeAnswer } from './answer-view.ts';
import { textRequestKey } from './truncation.ts';

/** An exchange with the client's times: the request went out at `sentMs`, the answer was whole at `receivedMs`. */
export interface TimedExchange {
  exchange: Exchange;
  sentMs: number;
  receivedMs: number;
}

/** A history being gathered, exchange by exchange; `history` is read at the end (or at any time). */
export interface Observer {
  readonly history: History;
  /** Adds what one answer shows: every answer for the wire rules, and task answers, list pages and text calls. */
  exchange(timed: TimedExchange): TaskObservation | null;
  callback(received: CallbackObservation): void;
}

const TEXT_PATHS: Readonly<Record<string, TextFormat>> = { '/v1/chat/completions': 'chat', '/v1/responses': 'responses', '/v1/messages': 'messages' };
const TASK = /^\/v1\/tasks\/([^/?]+)(\/cancel)?$/;

/**
 * Turns what a client saw on the wire into the history the checker judges: the suite feeds its own exchanges and
 * its receiver's deliveries, the proxy those of each account it relays. One observer is one account's history.
 */
export function createObserver(): Observer {
  const tasks: TaskObservation[] = [];
  const pages: ListPageObservation[] = [];
  const texts: TextCallObservation[] = [];
  const callbacks: CallbackObservation[] = [];
  const answers: AnswerObservation[] = [];
  /** Per list query but its page: the walk its pages belong to, and the submits counted when its last page was taken. */
  const walks = new Map<string, { id: string; submits: number }>();
  let submits = 0;
  return {
    history: { tasks, pages, texts, callbacks, answers },
    exchange({ exchange, sentMs, receivedMs }) {
      const { method, status } = exchange;
      const [path = '', query = ''] = exchange.path.split('?', 2);
      const requestId = exchange.requestId;
      // Every answer, for the rules of the wire: what it says must fit what was asked.
      answers.push(observeAnswer(exchange, sentMs, receivedMs));
      const answer = status === 200 ? {} : { answer: { status, code: errorCode(exchange.json) } };
      if (method === 'POST' && path === '/v1/tasks') {
        submits += 1;
        const replay = exchange.headers.get('idempotent-replayed') === 'true';
        const key = idempotency(exchange);
        const obs: TaskObservation = { requestId, kind: replay ? 'replay' : 'submit', sentMs, receivedMs, task: status === 200 ? exchange.json : null, ...answer, ...(key ? { key } : {}), ...submitted(exchange) };
        tasks.push(obs);
        return obs;
      }
      const task = TASK.exec(path);
      if (task && ((method === 'GET' && !task[2]) || (method === 'POST' && task[2]))) {
        const obs: TaskObservation = { requestId, kind: task[2] ? 'cancel' : 'get', sentMs, receivedMs, task: status === 200 ? exchange.json : null, ...answer, target: safeDecode(task[1] ?? '') };
        tasks.push(obs);
        return obs;
      }
      if (method === 'GET' && path === '/v1/tasks' && status === 200 && isRecord(exchange.json) && Array.isArray(exchange.json.data)) {
        const params = new URLSearchParams(query);
        const page = Number(params.get('page') ?? '1');
        const limit = Number(params.get('limit') ?? '20');
        params.delete('page');
        params.sort();
        const walkQuery = params.toString();
        let walk = walks.get(walkQuery);
        // A first page (or a page of a query not seen before) begins a walk.
        if (page === 1 || !walk) {
          walk = { id: `${walkQuery}#${pages.length}`, submits };
          walks.set(walkQuery, walk);
        }
        const intervened = walk.submits !== submits;
        walk.submits = submits;
        pages.push({
          requestId,
          walk: walk.id,
          query: { ...(params.get('status') ? { status: params.get('status') ?? '' } : {}), ...(params.get('model') ? { model: params.get('model') ?? '' } : {}), limit, page },
          items: exchange.json.data,
          has_more: exchange.json.has_more === true,
          sentMs,
          receivedMs,
          ...(intervened ? { submitsIntervened: true } : {}),
        });
        return null;
      }
      const format = TEXT_PATHS[path];
      if (method === 'POST' && format && status === 200) {
        const body = parseJson(exchange.requestBody ?? '');
        const sent = isRecord(body) ? body : {};
        const max = [sent.max_tokens, sent.max_completion_tokens, sent.max_output_tokens].find((v) => typeof v === 'number');
        const common = { requestId, format, maxTokens: typeof max === 'number' ? max : null, promptNonEmpty: promptHasText(sent), request: textRequestKey(sent) };
        texts.push(
          exchange.events.length > 0
            ? { ...common, streamed: true, events: exchange.events.filter((e) => e.data !== '[DONE]').map((e) => parseJson(e.data)) }
            : { ...common, streamed: false, body: exchange.json },
        );
      }
      return null;
    },
    callback(received) {
      callbacks.push(received);
    },
  };
}

function errorCode(json: unknown): string | null {
  const error = isRecord(json) ? json.error : undefined;
  return isRecord(error) && typeof error.code === 'string' ? error.code : null;
}

/** What a submission sent, when its body is a JSON object (a refusal's consequences are looked for by it). */
function submitted(exchange: Exchange): Pick<TaskObservation, 'sent'> {
  const sent = parseJson(exchange.requestBody ?? '');
  return isRecord(sent) ? { sent: { model: sent.model, input: sent.input ?? sent.params, metadata: sent.metadata } } : {};
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function idempotency(exchange: Exchange): TaskObservation['key'] | null {
  const header = Object.entries(exchange.requestHeaders).find(([name]) => name.toLowerCase() === 'idempotency-key')?.[1];
  if (header === undefined) return null;
  const sent = parseJson(exchange.requestBody ?? '');
  if (!isRecord(sent) || typeof sent.model !== 'string') return null;
  // What was sent, not what was answered: a replay answers the first task's input whatever was sent with it.
  // `params` is the other name of `input` ("POST /v1/tasks"); with both, `input` is the one used.
  return { idempotencyKey: header, model: sent.model, input: Object.hasOwn(sent, 'input') ? sent.input : sent.params };
}

/** The prompt carries some text: a message or input with a non-empty string somewhere in its content. */
function promptHasText(sent: Record<string, unknown>): boolean {
  const hasText = (value: unknown): boolean =>
    typeof value === 'string' ? value.trim().length > 0 : Array.isArray(value) ? value.some(hasText) : isRecord(value) ? hasText(value.text ?? value.content) : false;
  return hasText(sent.messages) || hasText(sent.input) || hasText(sent.system) || hasText(sent.instructions);
}
