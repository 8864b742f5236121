import type { Request, Response } from 'express';
import type { Contract } from '../contract/index.ts';
import type { Clock } from '../clock/index.ts';
import type { TextModel } from '../models/index.ts';
import { SCENARIO_HEADER } from '../scenarios/index.ts';
import type { Api, TextRun } from '../service/index.ts';
import { chatFormat, messagesFormat, responsesFormat, STREAM_HEADERS, textModelOf } from '../text/index.ts';
import type { AnswerChoice, TextFormat } from '../text/index.ts';
import type { CallDetails } from '../calls/index.ts';
import { callerOf } from './api-key.ts';
import { amendCall, callDetailsOf, recordCall } from './call-records.ts';
import type { CallRecordDeps } from './call-records.ts';
import { requireObjectBody } from './json-body.ts';
import { requestIdOf } from './request-id.ts';
import type { Routes } from './route-table.ts';
import { streamTurns } from './stream-turns.ts';
import type { StreamTurns } from './stream-turns.ts';

export interface TextRoutesDeps extends CallRecordDeps {
  contract: Contract;
  api: Pick<Api, 'startText'>;
  textModels: TextModel[];
  /** Paces the stream's waits (the app's clock, whose waits end at once when closing). */
  clock: Clock;
}

/**
 * The three text endpoints. The service decides the output, its pacing, its fault and the points; this writes it
 * as one JSON answer or as a stream, and reports how the stream ended.
 * @see reference "Text endpoints (synchronous)", "Streaming" and "Text billing"
 */
export function textRoutes(deps: TextRoutesDeps, router: Routes): void {
  const turns = streamTurns();
  const route = (format: TextFormat) => async (req: Request, res: Response) => {
    const raw = requireObjectBody(req);
    // An unknown model is 404 before the document's `model` enum would make it a parameter error.
    if (typeof raw['model'] === 'string' && raw['model'] !== '') textModelOf(deps.textModels, raw['model']);
    const body = deps.contract.body<Record<string, unknown>>('service', format.requestSchema, raw);
    const run = deps.api.startText(callerOf(res), format, {
      body,
      scenarioHeader: req.get(SCENARIO_HEADER),
      requestId: requestIdOf(res),
      // Before the record is first written: a refusal's record (an error answer, strict answers) names it too.
      answered: (choice) => Object.assign(callDetailsOf(res), answerDetails(choice)),
      started: (call) => {
        callDetailsOf(res).model = call.parsed.request.model;
        recordCall(deps, res);
      },
      settled: (details) => amendCall(deps, res, details),
    });
    if (run.stream) await stream(deps, turns, run, res);
    else res.json(await run.answer());
  };
  router.post('/chat/completions', route(chatFormat));
  router.post('/responses', route(responsesFormat));
  router.post('/messages', route(messagesFormat));
}

/**
 * What a text call's record says of its answer: the scenario and how it was chosen (`generated`: nothing chose
 * it, the default scenario answered), or `unmatched`, refused by strict answers with none chosen.
 * @see docs/reference/scenarios.md "Answers on demand"
 */
function answerDetails(choice: AnswerChoice | null): Pick<CallDetails, 'scenario' | 'text_answer'> {
  if (choice === null) return { text_answer: { by: 'unmatched' } };
  const by = choice.by === 'default' ? 'generated' : choice.by;
  return { scenario: choice.scenario.name, text_answer: { by, ...(choice.step !== null ? { answer: choice.step + 1 } : {}) } };
}

/**
 * Tokens a stream writes at most in one write when nothing paces it (it yields the turn more often). With 100 and
 * with 600, 200 streams' first bytes came later (paired rounds): more writes, or a longer wait for the calls arriving.
 */
const SLICE_TOKENS = 250;

async function stream(deps: Pick<TextRoutesDeps, 'clock'>, turns: StreamTurns, run: TextRun, res: Response): Promise<void> {
  let closed = false;
  res.once('close', () => {
    closed = !res.writableFinished;
  });
  turns.began();
  // The first byte leaves as soon as the call is admitted, whatever the scenario's pacing: the headers go with
  // the first event (every format has at least one before its first token), written in the turn the call was
  // admitted in. The rest goes on in turns no other stream began in (stream-turns.ts), a slice a write: calls
  // arriving together each send their first event before others write whole answers.
  res.writeHead(200, STREAM_HEADERS);
  let first = true;
  // Events between two writes go out as one: a socket write costs more than an event, and 200 streams writing
  // token by token (or a few dozen at a time) kept new calls waiting for their first byte.
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
  for (const step of run.steps()) {
    if (step.type === 'pause') {
      // A paced pause sends what came before it first; a turn's yield only a whole slice.
      if (step.ms > 0 || batchTokens >= SLICE_TOKENS) await flush();
      if (closed) break;
      await (step.ms > 0 ? deps.clock.wait(step.ms) : turns.next());
      continue;
    }
    if (closed) break;
    if (step.type === 'fault') {
      batch += step.text;
      await flush();
      callDetailsOf(res).error_code = step.error.code;
      run.fault(sent);
      res.end();
      return;
    }
    batch += step.text;
    batchTokens += step.tokens;
    if (first) {
      first = false;
      await flush();
      await turns.next();
    }
  }
  if (!closed) await flush();
  if (closed) return run.disconnect(sent);
  run.finish();
  res.end();
}
