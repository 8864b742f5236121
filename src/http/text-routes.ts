import { Router } from 'express';
import { ROUTING } from './routing.ts';
import type { Request, Response } from 'express';
import { ApiError, errorBody } from '../errors/index.ts';
import { SCENARIO_HEADER } from '../scenarios/index.ts';
import { chatFormat, encodeEvent, messagesFormat, responsesFormat, startTextCall, STREAM_HEADERS, textModelOf } from '../text/index.ts';
import type { TextCall, TextFormat } from '../text/index.ts';
import { accountOf } from './api-key.ts';
import { amendCall, callDetailsOf, recordCall } from './call-records.ts';
import { admissionOf } from './key-checks.ts';
import type { AppDeps } from './context.ts';
import { requireObjectBody } from './json-body.ts';
import { requestIdOf } from './request-id.ts';

/**
 * The three text endpoints. The domain (src/text) decides the output and the points; this writes it as one JSON
 * answer or as a stream, paced by the scenario, and settles on what was actually sent.
 * @see reference "Text endpoints (synchronous)", "Streaming" and "Text billing"
 */
export function textRoutes(deps: AppDeps): Router {
  const router = Router(ROUTING);
  const route = (format: TextFormat) => async (req: Request, res: Response) => {
    const raw = requireObjectBody(req);
    if (typeof raw['model'] === 'string' && raw['model'] !== '') textModelOf(deps.textModels, raw['model']);
    const body = deps.contract.body<Record<string, unknown>>('service', format.requestSchema, raw);
    const call = deps.db.store.transaction(() => {
      const started = startTextCall(
      {
        admission: admissionOf(deps, res),
        concurrency: deps.concurrency,
        db: deps.db,
        clock: deps.clock,
        random: deps.random,
        scenarios: deps.scenarios,
        textModels: deps.textModels,
        requestId: requestIdOf(res),
      },
      format,
      body,
      accountOf(res),
      req.get(SCENARIO_HEADER),
      );
      callDetailsOf(res).model = started.parsed.request.model;
      // The record goes with the freeze: a call whose points moved is never without one.
      recordCall(deps, res);
      return started;
    });
    if (call.parsed.stream) await stream(deps, format, call, res);
    else await answer(deps, format, call, res);
  };
  router.post('/chat/completions', route(chatFormat));
  router.post('/responses', route(responsesFormat));
  router.post('/messages', route(messagesFormat));
  return router;
}

/**
 * Settles the call on the output tokens of the `sent` stream units (or refunds it all) and writes its record, in
 * one transaction: tokens and points, and with --record-content the prompt and the output actually sent.
 */
function settle(deps: AppDeps, res: Response, call: TextCall, sent: number, charge: 'sent' | 'refund', clientClosed: boolean): void {
  if (deps.db.store.closed) return;
  deps.db.store.transaction(() => {
    const points = charge === 'refund' ? call.refundAll() : call.settle(sent);
    record(deps, res, call, sent, points, clientClosed);
  });
}

function record(deps: AppDeps, res: Response, call: TextCall, sent: number, points: ReturnType<TextCall['settle']>, clientClosed: boolean): void {
  const { outputTokens, output } = call.delivered(sent);
  amendCall(deps, res, {
    text: {
      stream: call.parsed.stream,
      input_tokens: call.view.generated.inputTokens,
      output_tokens: outputTokens,
      points,
      client_closed: clientClosed,
      ...(deps.config.recordContent ? { content: { prompt: call.parsed.request.prompt, output } } : {}),
    },
  });
}

async function answer(deps: AppDeps, format: TextFormat, call: TextCall, res: Response): Promise<void> {
  const { behaviour } = call;
  await deps.clock.wait(behaviour.first_token_ms);
  // A fault part-way through generation (an answer shorter than the fault point finishes, as a stream would).
  if (behaviour.error_after_chunks !== undefined && call.view.generated.pieces.length > behaviour.error_after_chunks) {
    // Nothing is charged.
    settle(deps, res, call, 0, 'refund', false);
    throw new ApiError(behaviour.error_code, faultMessage(behaviour.error_code));
  }
  settle(deps, res, call, call.units, 'sent', false);
  res.json(format.body(call.view));
}

async function stream(deps: AppDeps, format: TextFormat, call: TextCall, res: Response): Promise<void> {
  const { behaviour } = call;
  let closed = false;
  res.once('close', () => {
    closed = !res.writableFinished;
  });
  // The first byte leaves as soon as the call is admitted, whatever the scenario's pacing: the headers go with
  // the first events (every format has at least one before its first token), which are written before the first
  // wait, in the turn the call was admitted in.
  res.writeHead(200, STREAM_HEADERS);
  // Events between two yields go out as one write: a socket write costs more than an event, and 200 streams
  // writing token by token keep new calls waiting for their first byte.
  let batch = '';
  let batchTokens = 0;
  let sent = 0;
  const flush = async (): Promise<void> => {
    if (batch === '') return;
    const flushed = res.write(batch);
    sent += batchTokens;
    batch = '';
    batchTokens = 0;
    if (!flushed) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
  };
  let chunks = 0;
  let sequence = 0;
  for (const event of format.events(call.view)) {
    const delivers = event.tokens;
    if (delivers > 0) {
      if (behaviour.error_after_chunks !== undefined && chunks >= behaviour.error_after_chunks) {
        const error = new ApiError(behaviour.error_code, faultMessage(behaviour.error_code));
        for (const e of format.errorEvents(errorBody(format.name === 'messages' ? 'messages' : 'openai', error, requestIdOf(res)), sequence)) {
          batch += encodeEvent(e);
        }
        await flush();
        callDetailsOf(res).error_code = error.code;
        settle(deps, res, call, sent, 'refund', false);
        res.end();
        return;
      }
      const delay = chunks === 0 ? behaviour.first_token_ms : behaviour.chunk_interval_ms;
      // Without latency, yield now and then so concurrent streams interleave, without a write per turn.
      if (delay > 0 || chunks % 32 === 0) {
        await flush();
        if (closed) break;
        await deps.clock.wait(delay);
      }
    }
    if (closed) break;
    batch += event.text;
    batchTokens += delivers;
    if (delivers > 0) chunks += 1;
    sequence += 1;
  }
  if (!closed) await flush();
  if (closed) {
    // The client went away: settled on the tokens already sent.
    settle(deps, res, call, sent, 'sent', true);
    return;
  }
  settle(deps, res, call, call.units, 'sent', false);
  res.end();
}

const faultMessage = (code: string): string =>
  code === 'service_unavailable'
    ? 'The model became unavailable during generation; the points were refunded.'
    : code === 'content_rejected'
      ? 'The output failed content review; the points were refunded.'
      : 'The parameters were found unacceptable during generation; the points were refunded.';
